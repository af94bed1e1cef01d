/**
 * `npm run verify` on the real API server (issue 39 point 5): one stack with subscriptions (a
 * ClusterBundle and a team's Bundle, the webhook server kept running as its pods would:
 * helpers/subscription-webhook.ts), self-signed certificates and the widget operator with its
 * admission and conversion webhooks (served by helpers/conversion-backend.ts with the stack's own
 * certificate, on the container port the bundle names). After `up`, verify passes every check this
 * cluster can show and reports the rest as not checked; then each property is broken out of band,
 * verify fails exactly there, and the property is restored. Another kube context is refused.
 *
 * The widget bundle's container port is moved from 9443 to 8443: the subscription webhook's server
 * listens on 9443 at every pod IP of the cluster's network namespace, and the widget backend runs
 * in the same namespace.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import type { Row } from "../../scripts/verify/checks";
import { selfSignedCertificate } from "../helpers/tls-signer";
import { type ConversionBackend, startConversionBackend } from "./helpers/conversion-backend";
import { destroyStack } from "./helpers/destroy";
import { eventually } from "./helpers/eventually";
import {
    fullStackConfig,
    fullStackKept,
    preexistingObjects,
    requireBuild,
    TEAM_NAMESPACE,
    WIDGET_CRD,
    widgetBundle,
    editServiceAccount,
} from "./helpers/fixtures";
import { applyObjects, getObject, kubectl, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { describe as explain, REPO_ROOT, realEnv, runTemp, TestStack } from "./helpers/stack";
import { keepSubscriptionWebhook, SUBSCRIPTION_WEBHOOK, type WebhookKeeper } from "./helpers/subscription-webhook";

const WIDGETS = "verify-widgets";
const WIDGET_PORT = 8443;
const WIDGET_SERVICE = "widget-webhook-service";
const SUBSCRIPTION_MWC_OBJECT = /^MutatingWebhookConfiguration \S+ inject\.subscription\.openshift\.io$/;
const CSI = "csi.sharedresource.openshift.io";

let stack: TestStack;
let keeper: WebhookKeeper | undefined;
let backend: ConversionBackend | undefined;

interface Verdict {
    readonly status: number;
    readonly rows: Row[];
    readonly stderr: string;
}

/** `npm run verify -- --stack verify --json` as an admin runs it (the script npm runs), with the stack's CLI environment. */
function verify(extra: string[] = [], env: NodeJS.ProcessEnv = {}): Verdict {
    const result = spawnSync(
        path.join(REPO_ROOT, "node_modules", ".bin", "tsx"),
        [path.join(REPO_ROOT, "scripts", "verify", "cli.ts"), "--stack", stack.name, "--cwd", stack.project, "--json", ...extra],
        { env: { ...stack.env(), ...env }, encoding: "utf8", maxBuffer: 64 << 20 },
    );
    let rows: Row[] = [];
    try {
        rows = (JSON.parse(result.stdout) as { checks: Row[] }).checks;
    } catch {
        rows = [];
    }
    return { status: result.status ?? -1, rows, stderr: result.stderr };
}

const line = (r: Row) => `${r.result}: ${r.check} ${r.object}`;
const notPassed = (v: Verdict) => v.rows.filter((r) => r.result !== "passed").map(line);
const failures = (v: Verdict) => v.rows.filter((r) => r.result === "failed");

/** What this cluster cannot show: kwok runs no CSI node plugin. Everything else passes. */
const NOT_CHECKED_HERE = [`not checked: csi-node-plugin CSIDriver ${CSI}`];

function expectAllPassing(v: Verdict): void {
    expect({ status: v.status, notPassed: notPassed(v), stderr: v.stderr }).toEqual({ status: 0, notPassed: NOT_CHECKED_HERE, stderr: "" });
}

/** A JSON patch of one object, kubectl. */
function jsonPatch(kind: string, name: string, namespace: string | undefined, ops: object[]): void {
    kubectl(["patch", kind, name, ...(namespace ? ["-n", namespace] : []), "--type=json", "-p", JSON.stringify(ops)]);
}

/** The object as it can be created again (the server's fields dropped). */
function recreatable(object: KubeObject): KubeObject {
    const { uid: _uid, resourceVersion: _rv, creationTimestamp: _ct, managedFields: _mf, ...metadata } = object.metadata;
    return { ...object, metadata };
}

/**
 * The service accounts (`namespace/name`, sorted) that the cluster's RoleBindings and
 * ClusterRoleBindings bind to the ClusterBundle's role or to `edit`, as the API server lists them.
 */
function boundToBundleRole(): string[] {
    const roles = new Set(["cluster-subscription-bundle", "edit"]);
    const bindings = JSON.parse(kubectl(["get", "rolebindings,clusterrolebindings", "-A", "-o", "json"])).items as KubeObject[];
    const accounts = new Set<string>();
    for (const binding of bindings) {
        if (binding.roleRef?.kind !== "ClusterRole" || !roles.has(binding.roleRef?.name)) continue;
        for (const subject of (binding.subjects ?? []) as KubeObject[]) {
            if (subject.kind !== "ServiceAccount") continue;
            accounts.add(`${binding.kind === "RoleBinding" ? binding.metadata.namespace : subject.namespace}/${subject.name}`);
        }
    }
    return [...accounts].sort();
}

/** Whether the team's builder may `use` the share (`resource/name`), as the API server's authorizer answers now. */
function canUse(share: string): boolean {
    const asBuilder = ["--as", `system:serviceaccount:${TEAM_NAMESPACE}:builder`, "--as-group", "system:serviceaccounts"];
    return kubectlRun(["auth", "can-i", "use", share, "-n", TEAM_NAMESPACE, ...asBuilder]).stdout.trim() === "yes";
}

beforeAll(async () => {
    requireBuild(REPO_ROOT);
    applyObjects([
        ...preexistingObjects(),
        // A team's build identity, bound to edit, which the ClusterBundle's role aggregates to: verify finds it from the binding.
        ...editServiceAccount(TEAM_NAMESPACE, "builder"),
    ]);
    const csv = widgetBundle("verify-widgets", (c) => {
        for (const d of c.spec.install.spec.deployments as KubeObject[]) {
            for (const container of d.spec.template.spec.containers as KubeObject[]) {
                for (const p of (container.ports ?? []) as KubeObject[]) if (p.name === "https") p.containerPort = WIDGET_PORT;
            }
        }
    });
    keeper = await keepSubscriptionWebhook();
    stack = new TestStack(
        "verify",
        fullStackConfig({
            caInjection: [],
            operators: [
                { name: "widgets", csv, namespace: WIDGETS, createNamespace: true, targetNamespaces: [], rbacNamespaces: [TEAM_NAMESPACE] },
            ],
        }),
    );
    const up = stack.up();
    if (up.status !== 0) throw new Error(`pulumi up failed: ${explain(up)}`);
    const k = keeper;
    await eventually("the keeper starts the webhook once its pods and Secrets exist", async () => ((await k.ready()) ? true : undefined), {
        timeoutMs: 60_000,
        describe: () => k.output().slice(-2000),
    });
    const secret = getObject("secret", `${WIDGET_SERVICE}-cert`, WIDGETS);
    backend = await startConversionBackend(secret?.data, WIDGET_PORT, path.join(realEnv("REAL_WORK"), "verify-widget-backend"));
});

afterAll(async () => {
    try {
        await backend?.stop();
        if (stack) destroyStack(stack, [...fullStackKept({ operator: false }), `CustomResourceDefinition/${WIDGET_CRD}`]);
    } finally {
        await keeper?.stop();
        kubectlRun(["delete", "crd", WIDGET_CRD, "--ignore-not-found"]);
    }
});

describe("npm run verify on the stack's live cluster", () => {
    let healthy: Verdict;

    test("GIVEN the stack after up THEN verify passes every check the cluster can show: canaries of both bundles injected by the real webhook, the shares' use and sources, each webhook and conversion Service with its served certificate chaining to the caBundle, every Deployment Available with its references; the CSI node plugin is not checked", () => {
        healthy = verify();
        expectAllPassing(healthy);
        const checks = (name: string) => healthy.rows.filter((r) => r.check === name).map((r) => r.object);
        expect(checks("canary")).toEqual(["ClusterBundle cluster in team-a as builder", "Bundle team-a/subscription as default"]);
        // One row per service account a binding on the cluster gives the bundle's role or `edit` (which
        // aggregates it): this file's builder, and whatever other files of the run left bound in team-a.
        expect(checks("share-use").sort()).toEqual(boundToBundleRole().map((account) => `ClusterBundle cluster as ${account}`));
        expect(checks("share-use")).toContain("ClusterBundle cluster as team-a/builder");
        expect(checks("share-source")).toHaveLength(2);
        expect(healthy.rows.find((r) => r.object === "ClusterBundle cluster in team-a as builder")?.why).toMatch(
            /^volumes subscription-entitlements \(projected etc-pki-entitlement\), subscription-share-\w+ \(csi cluster-entitlement-etc-pki-entitlement-\w+\), subscription-share-\w+ \(csi cluster-yum-repo-satellite-repos-\w+\); mounts \/run\/secrets\/etc-pki-entitlement\/cluster-entitlement-key\.pem, \/run\/secrets\/etc-pki-entitlement\/cluster-entitlement\.pem, \/run\/secrets\/etc-pki-entitlement\/team-entitlement-key\.pem, \/run\/secrets\/etc-pki-entitlement\/team-entitlement\.pem, \/run\/secrets\/redhat\.repo$/,
        );
        // Four Services the API server calls (the subscription webhook; the widget's validating, mutating and conversion webhooks), each certificate read and verified.
        expect(checks("certificate").sort()).toEqual(
            [
                `CustomResourceDefinition ${WIDGET_CRD} conversion`,
                expect.stringMatching(SUBSCRIPTION_MWC_OBJECT),
                expect.stringMatching(/^MutatingWebhookConfiguration \S+ mwidget\.samples\.cluster-platform\.io$/),
                expect.stringMatching(/^ValidatingWebhookConfiguration \S+ vwidget\.samples\.cluster-platform\.io$/),
            ].sort(),
        );
        for (const r of healthy.rows.filter((x) => x.check === "certificate"))
            expect(r.why).toMatch(/^chains to .* in the caBundle; expires \S+ \(\d+ days\) \(read /);
        expect(checks("deployment")).toEqual(
            expect.arrayContaining([
                `Deployment ${SUBSCRIPTION_WEBHOOK.namespace}/${SUBSCRIPTION_WEBHOOK.deployment}`,
                `Deployment ${WIDGETS}/widget-webhook`,
            ]),
        );
    });

    test("GIVEN the subscription webhook's caBundle replaced by another CA THEN its certificate check fails and the API server refuses both canaries (failurePolicy Fail); restored, they pass", async () => {
        const mwc = healthy.rows.find((r) => r.check === "certificate" && SUBSCRIPTION_MWC_OBJECT.test(r.object))!.object.split(" ")[1];
        const original = getObject("mutatingwebhookconfiguration", mwc).webhooks[0].clientConfig.caBundle as string;
        const other = await selfSignedCertificate(runTemp(), "verify-other-ca", "other-ca");
        jsonPatch("mutatingwebhookconfiguration", mwc, undefined, [
            { op: "replace", path: "/webhooks/0/clientConfig/caBundle", value: fs.readFileSync(other.certPath).toString("base64") },
        ]);
        try {
            const broken = verify();
            expect(broken.status).toBe(1);
            expect(failures(broken).map(line).sort()).toEqual(
                [
                    `failed: canary Bundle team-a/subscription as default`,
                    `failed: canary ClusterBundle cluster in team-a as builder`,
                    `failed: certificate MutatingWebhookConfiguration ${mwc} inject.subscription.openshift.io`,
                ].sort(),
            );
            expect(failures(broken).find((r) => r.check === "certificate")?.why).toContain(
                "does not chain to any of the caBundle's 1 certificate(s) (CN=other-ca)",
            );
            expect(failures(broken).find((r) => r.check === "canary")?.why).toMatch(
                /^the canary pod was refused: HTTP 500: Internal error occurred: failed calling webhook "inject\.subscription\.openshift\.io": .*x509/,
            );
        } finally {
            jsonPatch("mutatingwebhookconfiguration", mwc, undefined, [
                { op: "replace", path: "/webhooks/0/clientConfig/caBundle", value: original },
            ]);
            fs.rmSync(other.certPath);
            fs.rmSync(other.keyPath);
        }
        expectAllPassing(verify());
    });

    test("GIVEN the widget webhook Service's selector broken THEN every webhook and conversion it backs fails its service check and its certificate is not checked; restored, they pass", async () => {
        const selector = getObject("service", WIDGET_SERVICE, WIDGETS).spec.selector;
        const endpoints = () =>
            JSON.parse(
                kubectl(["get", "endpointslices", "-n", WIDGETS, "-l", `kubernetes.io/service-name=${WIDGET_SERVICE}`, "-o", "json"]),
            ).items.flatMap((s: KubeObject) => s.endpoints ?? []).length;
        jsonPatch("service", WIDGET_SERVICE, WIDGETS, [
            { op: "replace", path: "/spec/selector", value: { "app.kubernetes.io/name": "no-such-pod" } },
        ]);
        try {
            await eventually("the EndpointSlice controller drops the endpoints", () => (endpoints() === 0 ? true : undefined));
            const broken = verify();
            expect(broken.status).toBe(1);
            expect(
                notPassed(broken)
                    .filter((l) => !NOT_CHECKED_HERE.includes(l))
                    .sort(),
            ).toEqual(
                healthy.rows
                    .filter((r) => r.check === "service" && !SUBSCRIPTION_MWC_OBJECT.test(r.object))
                    .flatMap((r) => [`failed: service ${r.object}`, `not checked: certificate ${r.object}`])
                    .sort(),
            );
            expect(failures(broken)[0].why).toBe(
                `Service ${WIDGETS}/${WIDGET_SERVICE}:443 has no ready endpoint (its selector {"app.kubernetes.io/name":"no-such-pod"} matches no ready pod, or no port 443)`,
            );
        } finally {
            jsonPatch("service", WIDGET_SERVICE, WIDGETS, [{ op: "replace", path: "/spec/selector", value: selector }]);
        }
        await eventually("the EndpointSlice controller adds the endpoints back", () => (endpoints() > 0 ? true : undefined));
        expectAllPassing(verify());
    });

    test("GIVEN the widget operator's Deployment made unavailable (its pods can run on no node) THEN its deployment check fails naming the condition; restored, it passes", async () => {
        const deployment = getObject("deployment", "widget-webhook", WIDGETS);
        const available = () =>
            getObject("deployment", "widget-webhook", WIDGETS).status.conditions?.find((c: KubeObject) => c.type === "Available")?.status;
        jsonPatch("deployment", "widget-webhook", WIDGETS, [
            { op: "replace", path: "/spec/strategy", value: { type: "Recreate" } },
            { op: "add", path: "/spec/template/spec/nodeSelector", value: { "verify.cluster-platform.io/no-such-node": "true" } },
        ]);
        try {
            await eventually(
                "the Deployment controller marks it unavailable once the old pods are gone",
                () => (available() === "False" ? true : undefined),
                { timeoutMs: 60_000 },
            );
            const broken = verify();
            expect(broken.status).toBe(1);
            const failed = failures(broken);
            expect(failed.find((r) => r.check === "deployment")).toEqual({
                check: "deployment",
                object: `Deployment ${WIDGETS}/widget-webhook`,
                result: "failed",
                why: expect.stringMatching(/^not Available \(0\/\d+ available\): MinimumReplicasUnavailable /),
            });
            // Its Service loses its endpoints with the pods; nothing else fails.
            expect(failed.filter((r) => r.check !== "deployment").map((r) => r.check)).toEqual(
                failed.filter((r) => r.check === "service").map(() => "service"),
            );
        } finally {
            jsonPatch("deployment", "widget-webhook", WIDGETS, [
                { op: "replace", path: "/spec/strategy", value: deployment.spec.strategy },
                { op: "remove", path: "/spec/template/spec/nodeSelector" },
            ]);
        }
        await eventually("the Deployment is available again", () => (available() === "True" ? true : undefined), { timeoutMs: 60_000 });
        expectAllPassing(verify());
    });

    test("GIVEN the Secret the widget pods mount deleted THEN the pod-references check fails naming it and the field; recreated, it passes", () => {
        const secret = getObject("secret", `${WIDGET_SERVICE}-cert`, WIDGETS);
        kubectl(["delete", "secret", `${WIDGET_SERVICE}-cert`, "-n", WIDGETS]);
        try {
            const broken = verify();
            expect(broken.status).toBe(1);
            // OLM's two certificate volumes (webhook and API service) both name the Secret: each is listed with its field.
            const missing = `Secret ${WIDGETS}/${WIDGET_SERVICE}-cert`;
            expect(failures(broken).map((r) => `${line(r)}: ${r.why}`)).toEqual([
                `failed: pod-references Deployment ${WIDGETS}/widget-webhook: missing: ${missing} (template.spec.volumes[1].secret.secretName), ${missing} (template.spec.volumes[2].secret.secretName)`,
            ]);
        } finally {
            kubectl(["create", "-f", "-"], { input: JSON.stringify(recreatable(secret)) });
        }
        expectAllPassing(verify());
    });

    test("GIVEN the ClusterBundle role's use rule removed THEN share-use fails naming the denied reviews; restored, it passes", async () => {
        const role = getObject("clusterrole", "cluster-subscription-bundle");
        const useRule = (role.rules as KubeObject[]).findIndex((r) => r.verbs.includes("use"));
        const share = `${role.rules[useRule].resources[0]}.sharedresource.openshift.io/${role.rules[useRule].resourceNames[0]}`;
        const shares = (role.rules as KubeObject[]).filter((r) => r.verbs.includes("use")).length;
        jsonPatch(
            "clusterrole",
            "cluster-subscription-bundle",
            undefined,
            (role.rules as KubeObject[])
                .map((_r, i) => i)
                .filter((i) => role.rules[i].verbs.includes("use"))
                .reverse()
                .map((i) => ({ op: "remove", path: `/rules/${i}` })),
        );
        try {
            // edit's rules come from the aggregation controller, which follows the change.
            await eventually("the aggregation controller drops the rule from edit", () => (canUse(share) ? undefined : true));
            const broken = verify();
            expect(broken.status).toBe(1);
            const failed = failures(broken);
            expect(failed.find((r) => r.check === "share-use" && r.object === "ClusterBundle cluster as team-a/builder")).toEqual({
                check: "share-use",
                object: "ClusterBundle cluster as team-a/builder",
                result: "failed",
                why: expect.stringMatching(
                    /^SubjectAccessReview denies use sharedsecrets\/cluster-entitlement-\S+, use sharedconfigmaps\/cluster-yum-repo-\S+$/,
                ),
            });
            expect(shares).toBeGreaterThan(0);
            // The webhook may still answer from its access cache (up to 60 s, docs/subscriptions.md), so the ClusterBundle canary may pass or fail; nothing else fails.
            expect(
                failed
                    .filter((r) => r.check !== "share-use")
                    .map(line)
                    .filter((l) => l !== "failed: canary ClusterBundle cluster in team-a as builder"),
            ).toEqual([]);
        } finally {
            jsonPatch("clusterrole", "cluster-subscription-bundle", undefined, [{ op: "replace", path: "/rules", value: role.rules }]);
        }
        await eventually("the aggregation controller restores the rule in edit", () => (canUse(share) ? true : undefined));
        // The webhook answers the ClusterBundle canary from its access cache, which may keep the denial
        // up to 60 s after the rule is back (docs/subscriptions.md): verify is asked again until then.
        const restored = await eventually(
            "the webhook's access cache lets the ClusterBundle canary through again",
            () => {
                const v = verify();
                return v.status === 0 ? v : undefined;
            },
            { timeoutMs: 90_000, intervalMs: 5_000 },
        );
        expectAllPassing(restored);
    });

    test("GIVEN the CSI driver removed THEN csi-driver fails; recreated, it passes", () => {
        const driver = getObject("csidriver", CSI);
        kubectl(["delete", "csidriver", CSI]);
        try {
            const broken = verify();
            expect(broken.status).toBe(1);
            expect(failures(broken).map((r) => `${line(r)}: ${r.why}`)).toEqual([
                `failed: csi-driver CSIDriver ${CSI}: absent: no ClusterBundle share can be mounted`,
            ]);
        } finally {
            kubectl(["create", "-f", "-"], {
                input: JSON.stringify(recreatable(driver ?? preexistingObjects().find((o: KubeObject) => o.kind === "CSIDriver"))),
            });
        }
        expectAllPassing(verify());
    });

    test("GIVEN another kube context than the one the stack's config names THEN verify refuses at once naming both, exit 2, without a stack trace", () => {
        const kubeconfig = path.join(runTemp(), "verify-other-context.kubeconfig");
        const config = JSON.parse(kubectl(["config", "view", "--raw", "-o", "json"])) as KubeObject;
        config.contexts.push({ name: "other", context: config.contexts[0].context });
        config["current-context"] = "other";
        fs.writeFileSync(kubeconfig, stringify(config), { mode: 0o600 });
        try {
            const context = process.env.REAL_CONTEXT ?? "real";
            const byCurrent = verify([], { KUBECONFIG: kubeconfig });
            expect({ status: byCurrent.status, stdout: byCurrent.rows, stderr: byCurrent.stderr }).toEqual({
                status: 2,
                stdout: [],
                stderr: `verify: stack verify names kube context "${context}" (cluster-platform:cluster.kubeContext) but verify would use "other" (the kubeconfig's current-context): refusing to verify another cluster\n`,
            });
            const byFlag = verify(["--context", "other"]);
            expect(byFlag.stderr).toBe(
                `verify: stack verify names kube context "${context}" (cluster-platform:cluster.kubeContext) but verify would use "other" (--context): refusing to verify another cluster\n`,
            );
        } finally {
            fs.rmSync(kubeconfig);
        }
    });
});
