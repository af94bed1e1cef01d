/**
 * An operator through its life on the real engine and API server (issue 28, point 8): installed
 * with a CRD its webhook converts, removed (the kept CRD's conversion goes back to None, as OLM
 * does), its custom resources read at both versions, re-added (the existing CRD is taken back,
 * no AlreadyExists, the custom resources untouched), then upgraded to a bundle that drops a stored
 * version, to one whose schema refuses an existing Widget, and to one whose olm.skipRange leaves
 * out the running version (all refused by the pre-flight, nothing changed). The steps run in order on one stack.
 *
 * The operator's webhook pod is stood in for by a small conversion server of the test's own
 * (helpers/conversion-backend.ts): the bundle's image is not in the real tier's registry and kwok
 * runs no containers, but the API server's call to the conversion webhook, through the stack's
 * Service and with the stack's CA bundle and serving certificate, is real.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { getObject, kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { type ConversionBackend, startConversionBackend } from "./helpers/conversion-backend";
import { changedSteps, previewSteps } from "./helpers/preview";
import { destroyStack } from "./helpers/destroy";
import { realEnv, REPO_ROOT, TestStack } from "./helpers/stack";
import { operatorsOnlyStack } from "./helpers/fixtures";

const NAMESPACE = "widget-operator";
const CRD = "widgets.samples.cluster-platform.io";
const SERVICE = "widget-webhook-service";
const SAMPLE = path.join(REPO_ROOT, "tests", "fixtures", "operators", "widget-operator", "manifests");
const TEAM = "widget-team";
/** The label the stack puts on each operator Deployment's pods, which its webhook Service selects. */
const DEPLOYMENT_LABEL = "cluster-platform.io/deployment";

let stack: TestStack;
let backend: ConversionBackend | undefined;

/**
 * The sample bundle with its conversion webhook only (its admission webhooks would need the
 * operator's own server for every write), written under the run's work directory; `edit` changes
 * the CSV and CRD (the upgrade). Returns the CSV's path.
 */
function bundle(name: string, edit: (csv: KubeObject, crd: KubeObject) => void = () => undefined): string {
    const dir = path.join(realEnv("REAL_WORK"), "bundles", name);
    fs.mkdirSync(dir, { recursive: true });
    const csv = parse(fs.readFileSync(path.join(SAMPLE, "widget-operator.clusterserviceversion.yaml"), "utf8")) as KubeObject;
    const crd = parse(fs.readFileSync(path.join(SAMPLE, `${CRD.split(".").slice(1).join(".")}_widgets.yaml`), "utf8")) as KubeObject;
    csv.spec.webhookdefinitions = csv.spec.webhookdefinitions.filter((w: KubeObject) => w.type === "ConversionWebhook");
    edit(csv, crd);
    fs.writeFileSync(path.join(dir, "widget-operator.clusterserviceversion.yaml"), stringify(csv));
    fs.writeFileSync(path.join(dir, "widgets.crd.yaml"), stringify(crd));
    return path.join(dir, "widget-operator.clusterserviceversion.yaml");
}

function config(operators: object[]): Record<string, unknown> {
    return operatorsOnlyStack(operators);
}

const widgets = (csv: string) => ({ name: "widgets", csv, namespace: NAMESPACE, createNamespace: true, targetNamespaces: [] });

function up(): { status: number; output: string } {
    const result = stack.up();
    return { status: result.status ?? -1, output: result.stdout + result.stderr };
}

function readWidget(version: string): KubeObject {
    return JSON.parse(kubectl(["get", `widgets.${version}.samples.cluster-platform.io`, "gadget", "-n", TEAM, "-o", "json"]));
}

let v1Bundle: string;

beforeAll(() => {
    v1Bundle = bundle("widgets-v1");
    kubectl(["create", "namespace", TEAM]);
    stack = new TestStack("operator-life", config([widgets(v1Bundle)]));
});

afterAll(async () => {
    try {
        await backend?.stop();
        if (stack) {
            // OLM's two aggregate roles are adopted, so kept on destroy (components/shared/adoption.ts).
            destroyStack(stack, [`CustomResourceDefinition/${CRD}`, "ClusterRole/aggregate-olm-edit", "ClusterRole/aggregate-olm-view"]);
        }
    } finally {
        // The stack keeps CRDs and adopted roles on removal and destroy: the test removes what it made.
        kubectlRun(["delete", "crd", CRD, "--ignore-not-found"]);
        kubectlRun(["delete", "clusterrole", "aggregate-olm-edit", "aggregate-olm-view", "--ignore-not-found"]);
        kubectlRun(["delete", "namespace", TEAM, "--ignore-not-found", "--wait=false"]);
    }
});

describe("an operator with a conversion webhook, removed, re-added and upgraded (issue 28)", () => {
    test("GIVEN the widget operator WHEN installed THEN the API server converts through its webhook Service: a Widget created at v1alpha1 is stored and read at v1 with its size as replicas", async () => {
        const installed = up();
        expect({ status: installed.status, errors: installed.status === 0 ? "" : installed.output }).toEqual({ status: 0, errors: "" });
        expect(getObject("crd", CRD)?.spec.conversion.webhook.clientConfig.service).toEqual({
            name: SERVICE,
            namespace: NAMESPACE,
            path: "/convert",
            port: 443,
        });
        const secret = getObject("secret", "widget-webhook-service-cert", NAMESPACE);
        backend = await startConversionBackend(secret?.data, 9443, path.join(realEnv("REAL_WORK"), "conversion-backend"));

        kubectl(["apply", "-f", "-"], {
            input: JSON.stringify({
                apiVersion: "samples.cluster-platform.io/v1alpha1",
                kind: "Widget",
                metadata: { name: "gadget", namespace: TEAM },
                spec: { size: 3 },
            }),
        });
        expect(readWidget("v1").spec).toEqual({ replicas: 3 });
        expect(readWidget("v1alpha1").spec).toEqual({ size: 3 });
        expect(backend.conversions()).toBeGreaterThan(0);
        expect(stack.preview(["--expect-no-changes"]).status).toBe(0);
    });

    test("GIVEN the operator Deployment as the stack applied it before its pods carried cluster-platform.io/deployment WHEN previewed and updated THEN the Deployment is updated in place (same UID, the CSV's selector), never replaced", () => {
        // The earlier shape, on both sides: in the state (what the engine diffs against) and live.
        const exported = JSON.parse(stack.exportState()) as { deployment: { resources: KubeObject[] } };
        const resource = exported.deployment.resources.find(
            (r) => r.type === "kubernetes:apps/v1:Deployment" && r.outputs?.metadata?.name === "widget-webhook",
        );
        expect(resource?.inputs.spec.template.metadata.labels[DEPLOYMENT_LABEL]).toBe("widget-webhook");
        // Before issue 28: the CSV's selector, and pods without the stack's label.
        const csvSelector = (parse(fs.readFileSync(v1Bundle, "utf8")) as KubeObject).spec.install.spec.deployments[0].spec.selector;
        for (const side of [resource!.inputs, resource!.outputs]) {
            side.spec.selector = csvSelector;
            delete side.spec.template.metadata.labels[DEPLOYMENT_LABEL];
        }
        const file = path.join(realEnv("REAL_WORK"), "operator-life-without-pod-label.json");
        fs.writeFileSync(file, JSON.stringify(exported));
        const imported = stack.run(["stack", "import", "--stack", stack.name, "--file", file]);
        expect({ status: imported.status, stderr: imported.status === 0 ? "" : imported.stderr }).toEqual({ status: 0, stderr: "" });
        kubectl([
            "patch",
            "deployment",
            "widget-webhook",
            "-n",
            NAMESPACE,
            "--type=json",
            "-p",
            JSON.stringify([{ op: "remove", path: `/spec/template/metadata/labels/${DEPLOYMENT_LABEL.replace("/", "~1")}` }]),
        ]);
        const before = getObject("deployment", "widget-webhook", NAMESPACE);

        // The engine's plan: an update of the pod template's labels, no replacement.
        const planned = changedSteps(previewSteps(stack)).filter((s) => s.type === "kubernetes:apps/v1:Deployment");
        expect(planned.map((s) => s.op)).toEqual(["update"]);
        const updated = up();
        expect({ status: updated.status, errors: updated.status === 0 ? "" : updated.output }).toEqual({ status: 0, errors: "" });
        const after = getObject("deployment", "widget-webhook", NAMESPACE);
        expect(after?.metadata.uid).toBe(before?.metadata.uid);
        expect(after?.spec.template.metadata.labels[DEPLOYMENT_LABEL]).toBe("widget-webhook");
        expect(after?.spec.selector).toEqual(csvSelector);
        expect(stack.preview(["--expect-no-changes"]).status).toBe(0);
    });

    test("GIVEN the operator removed from config WHEN up runs with its webhook pods gone THEN the kept CRD's conversion is None (no webhook, no caBundle) and the Widget reads at both versions as stored", async () => {
        await backend?.stop();
        backend = undefined;
        stack.setConfig(config([]));
        const removed = up();
        expect({ status: removed.status, errors: removed.status === 0 ? "" : removed.output }).toEqual({ status: 0, errors: "" });
        expect(removed.output).toContain(
            `operator widgets: its conversion webhook leaves with it, so these kept CRDs get spec.conversion.strategy None`,
        );
        expect(getObject("crd", CRD)?.spec.conversion).toEqual({ strategy: "None" });
        expect(getObject("service", SERVICE, NAMESPACE)).toBeUndefined();
        // Stored at v1: served as stored at both versions, only apiVersion rewritten, no field
        // converted; at v1alpha1 the API server prunes v1's replicas, which v1alpha1's schema lacks.
        const v1 = readWidget("v1");
        const v1alpha1 = readWidget("v1alpha1");
        expect([v1.apiVersion, v1.spec]).toEqual(["samples.cluster-platform.io/v1", { replicas: 3 }]);
        expect([v1alpha1.apiVersion, v1alpha1.spec]).toEqual(["samples.cluster-platform.io/v1alpha1", {}]);
        expect(stack.preview(["--expect-no-changes"]).status).toBe(0);
    });

    test("GIVEN the removed operator added back WHEN up runs THEN the existing CRD is taken back (no AlreadyExists), its conversion points at the webhook again, the Widget is untouched and a preview finds nothing to change", () => {
        const before = readWidget("v1").metadata.resourceVersion;
        stack.setConfig(config([widgets(v1Bundle)]));
        const readded = up();
        expect({ status: readded.status, errors: readded.status === 0 ? "" : readded.output }).toEqual({ status: 0, errors: "" });
        expect(readded.output).not.toMatch(/already exists/i);
        expect(getObject("crd", CRD)?.spec.conversion.strategy).toBe("Webhook");
        expect(readWidget("v1").metadata.resourceVersion).toBe(before);
        expect(stack.preview(["--expect-no-changes"]).status).toBe(0);
    });

    test("GIVEN a bundle that drops v1, a version the CRD has stored objects at WHEN up runs THEN the pre-flight refuses it naming the CRD and the version, and the CRD and the operator stay as they were", () => {
        const crdBefore = getObject("crd", CRD);
        const upgrade = bundle("widgets-v2", (csv, crd) => {
            csv.metadata.name = "widget-operator.v2.0.0";
            csv.spec.version = "2.0.0";
            csv.spec.replaces = "widget-operator.v1.2.0";
            csv.spec.customresourcedefinitions.owned = csv.spec.customresourcedefinitions.owned.filter(
                (o: KubeObject) => o.version !== "v1",
            );
            crd.spec.versions = crd.spec.versions
                .filter((v: KubeObject) => v.name !== "v1")
                .map((v: KubeObject) => ({ ...v, storage: true, deprecated: false }));
        });
        stack.setConfig(config([widgets(upgrade)]));
        const refused = up();
        expect(refused.status).not.toBe(0);
        expect(refused.output).toContain(
            `operator "widgets": CRD "${CRD}": the bundle's manifest drops version "v1", which the cluster's CRD lists in status.storedVersions`,
        );
        const crdAfter = getObject("crd", CRD);
        expect([crdAfter?.metadata.resourceVersion, crdAfter?.status.storedVersions]).toEqual([
            crdBefore?.metadata.resourceVersion,
            ["v1"],
        ]);
        expect(getObject("deployment", "widget-webhook", NAMESPACE)?.spec.template.spec.containers[0].env).toContainEqual({
            name: "OPERATOR_CONDITION_NAME",
            value: "widget-operator.v1.2.0",
        });
        stack.setConfig(config([widgets(v1Bundle)]));
    });

    test("GIVEN a bundle whose v1 schema allows at most 2 replicas while the cluster's Widget has 3 WHEN up runs THEN the pre-flight lists the Widgets through the real API server and refuses, naming the Widget and its field, and the CRD and the operator stay as they were", () => {
        const crdBefore = getObject("crd", CRD);
        const stricter = bundle("widgets-v1.3", (csv, crd) => {
            csv.metadata.name = "widget-operator.v1.3.0";
            csv.spec.version = "1.3.0";
            csv.spec.replaces = "widget-operator.v1.2.0";
            const v1 = crd.spec.versions.find((v: KubeObject) => v.name === "v1");
            v1.schema.openAPIV3Schema.properties.spec.properties.replicas.maximum = 2;
        });
        stack.setConfig(config([widgets(stricter)]));
        const refused = up();
        expect(refused.status).not.toBe(0);
        expect(refused.output).toContain(
            `operator "widgets": CRD "${CRD}": the bundle's schema for version "v1" refuses 1 existing custom resource (OLM refuses this upgrade too: "updated validation is too restrictive", pkg/controller/operators/catalog/operator.go): Widget "${TEAM}/gadget": spec.replicas: 3 is above the maximum 2`,
        );
        expect(getObject("crd", CRD)?.metadata.resourceVersion).toBe(crdBefore?.metadata.resourceVersion);
        expect(readWidget("v1").spec).toEqual({ replicas: 3 });
        stack.setConfig(config([widgets(v1Bundle)]));
    });

    test("GIVEN a bundle reachable only through an olm.skipRange that leaves out the running 1.2.0 WHEN up runs THEN the pre-flight reads the version from the running Deployment and refuses, naming version and range", () => {
        const jump = bundle("widgets-v1.4", (csv) => {
            csv.metadata.name = "widget-operator.v1.4.0";
            csv.metadata.annotations = { ...csv.metadata.annotations, "olm.skipRange": ">=1.0.0 <1.2.0" };
            csv.spec.version = "1.4.0";
            delete csv.spec.replaces;
        });
        stack.setConfig(config([widgets(jump)]));
        const refused = up();
        expect(refused.status).not.toBe(0);
        expect(refused.output).toContain(`the installed version "1.2.0" is outside its olm.skipRange ">=1.0.0 <1.2.0"`);
        stack.setConfig(config([widgets(v1Bundle)]));
    });
});
