/**
 * service-ca mode on the real engine and API server (issue 28, point 6): the webhook
 * configurations an operator install creates carry service-ca's current bundle from their first
 * write, read from the ConfigMap OpenShift publishes it in (default/openshift-service-ca.crt), and
 * a rotation by service-ca is taken without a conflict.
 *
 * No service-ca runs here (kwok, no OpenShift controllers): the test publishes the bundle itself
 * and plays the injector's rotation as the injector writes it, a plain update under its own field
 * manager (openshift/service-ca-operator pkg/controller/cabundleinjector/admissionwebhook.go,
 * `Sync`: `Update` of every webhook whose caBundle differs). What is real: the provider's
 * server-side apply, the field ownership the API server records, and whether the stack's next
 * apply conflicts with the injector's write. It runs in the hermetic tier only: on an existing
 * OpenShift cluster the bundle ConfigMap belongs to service-ca.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { selfSignedCertificate } from "../helpers/tls-signer";
import { kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { destroyStack } from "./helpers/destroy";
import { operatorsOnlyStack, widgetBundle } from "./helpers/fixtures";
import { describe as explain, realEnv, TestStack } from "./helpers/stack";

const NAMESPACE = "service-ca-widgets";
const CRD = "widgets.samples.cluster-platform.io";
const KINDS = ["validatingwebhookconfiguration", "mutatingwebhookconfiguration"] as const;

/** The install's webhook configurations, found by the CSV's webhook names (vwidget/mwidget.samples...). */
function configurations(): { kind: string; object: KubeObject }[] {
    return KINDS.flatMap((kind) =>
        (JSON.parse(kubectl(["get", kind, "-o", "json"])).items as KubeObject[])
            .filter((o) => (o.webhooks ?? []).some((w: KubeObject) => w.name.endsWith("widget.samples.cluster-platform.io")))
            .map((object) => ({ kind, object })),
    );
}

let stack: TestStack;
let work: string;

/** A CA certificate's PEM. */
async function caPem(name: string): Promise<string> {
    return fs.readFileSync((await selfSignedCertificate(work, name, name)).certPath, "utf8");
}

/** The sample bundle with its admission webhooks only (no backend runs to convert), or with its conversion webhook only. */
function bundle(webhooks: "admission" | "conversion"): string {
    return widgetBundle(`service-ca-${webhooks}`, (csv, manifests) => {
        csv.spec.webhookdefinitions = csv.spec.webhookdefinitions.filter(
            (w: KubeObject) => (w.type === "ConversionWebhook") === (webhooks === "conversion"),
        );
        for (const object of manifests.values()) {
            if (object.kind === "CustomResourceDefinition" && webhooks === "admission") {
                delete object.spec.conversion;
            }
        }
    });
}

function publish(pem: string): void {
    kubectl(["apply", "--server-side", "--field-manager=service-ca-stand-in", "-f", "-"], {
        input: JSON.stringify({
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: {
                name: "openshift-service-ca.crt",
                namespace: "default",
                annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
            },
            data: { "service-ca.crt": pem },
        }),
    });
}

function config(csvs: string[]): Record<string, unknown> {
    return operatorsOnlyStack(
        csvs.map((csv) => ({ name: "widgets", csv, namespace: NAMESPACE, createNamespace: true, targetNamespaces: [] })),
        { platform: "openshift", certificates: "service-ca" },
    );
}

const bundles = () => configurations().map(({ object }) => object.webhooks.map((w: KubeObject) => w.clientConfig.caBundle as string));

beforeAll(() => {
    work = path.join(realEnv("REAL_WORK"), "service-ca");
    fs.mkdirSync(work, { recursive: true });
    stack = new TestStack("service-ca-bundle", config([bundle("admission")]));
});

afterAll(() => {
    try {
        if (stack) {
            // By now the operator is removed (its kept CRD left the state with it); OLM's two aggregate
            // roles are adopted, so kept on destroy (components/shared/adoption.ts).
            destroyStack(stack, ["ClusterRole/aggregate-olm-edit", "ClusterRole/aggregate-olm-view"]);
        }
    } finally {
        kubectlRun(["delete", "crd", CRD, "--ignore-not-found"]);
        kubectlRun(["delete", "clusterrole", "aggregate-olm-edit", "aggregate-olm-view", "--ignore-not-found"]);
        kubectlRun(["delete", "configmap", "openshift-service-ca.crt", "-n", "default", "--ignore-not-found"]);
    }
});

describe("service-ca's bundle in the webhook configurations the stack creates (issue 28)", () => {
    test("GIVEN service-ca's bundle published WHEN up runs THEN every webhook carries it from creation; AND GIVEN service-ca rotating it (an update under its own manager) WHEN previewed and applied THEN the change is planned, applied without a conflict, and the next preview is empty", async () => {
        const first = await caPem("service-ca-1");
        publish(first);
        const installed = stack.up();
        expect({ status: installed.status, output: installed.status === 0 ? "" : explain(installed) }).toEqual({ status: 0, output: "" });
        const firstBase64 = Buffer.from(first).toString("base64");
        expect(bundles()).toEqual([[firstBase64], [firstBase64]]);
        const settled = stack.preview(["--expect-no-changes"]);
        expect({ status: settled.status, output: settled.status === 0 ? "" : explain(settled) }).toEqual({ status: 0, output: "" });

        // service-ca rotates: a bundle of the new CA and the old one, published and injected by updates.
        const rotated = `${await caPem("service-ca-2")}${first}`;
        const rotatedBase64 = Buffer.from(rotated).toString("base64");
        publish(rotated);
        for (const { object: live } of configurations()) {
            delete live.metadata.managedFields;
            live.webhooks = live.webhooks.map((w: KubeObject) => ({ ...w, clientConfig: { ...w.clientConfig, caBundle: rotatedBase64 } }));
            kubectl(["replace", "--field-manager=service-ca-operator", "-f", "-"], { input: JSON.stringify(live) });
        }
        const planned = stack.preview();
        expect(planned.status).toBe(0);
        expect(planned.stdout).toMatch(/~ 2 to update/);
        const applied = stack.up();
        expect({ status: applied.status, output: applied.status === 0 ? "" : explain(applied) }).toEqual({ status: 0, output: "" });
        expect(bundles()).toEqual([[rotatedBase64], [rotatedBase64]]);
        const again = stack.preview(["--expect-no-changes"]);
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
    });

    test("GIVEN the operator's conversion webhook, whose CRD caBundle service-ca wrote (an update under its manager) WHEN the operator is removed THEN the kept CRD's conversion is exactly {strategy: None}, OLM's way, and the next preview is empty", async () => {
        stack.setConfig(config([bundle("conversion")]));
        const installed = stack.up();
        expect({ status: installed.status, output: installed.status === 0 ? "" : explain(installed) }).toEqual({ status: 0, output: "" });
        const crd = JSON.parse(kubectl(["get", "crd", CRD, "-o", "json"])) as KubeObject;
        expect(crd.spec.conversion.strategy).toBe("Webhook");
        // service-ca injects as it does into every annotated CRD: an update of the caBundle under its manager.
        delete crd.metadata.managedFields;
        crd.spec.conversion.webhook.clientConfig.caBundle = Buffer.from(await caPem("service-ca-crd")).toString("base64");
        kubectl(["replace", "--field-manager=service-ca-operator", "-f", "-"], { input: JSON.stringify(crd) });
        const owners = (
            JSON.parse(kubectl(["get", "crd", CRD, "-o", "json", "--show-managed-fields"])) as KubeObject
        ).metadata.managedFields
            .filter((m: KubeObject) => JSON.stringify(m.fieldsV1 ?? {}).includes('"f:caBundle"'))
            .map((m: KubeObject) => m.manager);
        expect(owners).toEqual(["service-ca-operator"]);
        const injected = stack.preview(["--expect-no-changes"]);
        expect({ status: injected.status, output: injected.status === 0 ? "" : explain(injected) }).toEqual({ status: 0, output: "" });

        stack.setConfig(config([]));
        const removed = stack.up();
        expect({ status: removed.status, output: removed.status === 0 ? "" : explain(removed) }).toEqual({ status: 0, output: "" });
        expect((JSON.parse(kubectl(["get", "crd", CRD, "-o", "json"])) as KubeObject).spec.conversion).toEqual({ strategy: "None" });
        const again = stack.preview(["--expect-no-changes"]);
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
    });
});
