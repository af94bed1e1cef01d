/**
 * `reconcile` in the whole program: the PKO Stack (validated against PKO's own CRD schema in
 * ../shared/testdata/pulumi-kubernetes-operator/), its ServiceAccount and the least RBAC that
 * runs the program, derived from what the rendered program declares; and the config rules.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { AWAIT_WATCHES, watchedFor } from "../../components/reconcile/await-watches";
import { flattenConfig, readConfigFile } from "../../scripts/render/config-file";
import { renderProgram, RenderResult } from "../../scripts/render/render";
import { validateManifests } from "../../scripts/render/validate-k8s";
import { allows, groupOf, kindOfToken, pluralOf as resourceOfKind } from "../helpers/rbac-oracle";
import { manifestNamed, MINIMAL, renderConfig, ROOT } from "../helpers/render";

const PKO_CRD = path.join(ROOT, "..", "shared", "testdata", "pulumi-kubernetes-operator", "pulumi.com_stacks.yaml");

const RECONCILE = {
    enabled: true,
    git: { repository: "https://github.com/platform-team/cluster-platform.git", branch: "main", directory: "clusters" },
    backend: "s3://platform-pulumi-state",
    environment: {
        PULUMI_CONFIG_PASSPHRASE: { name: "pulumi-passphrase", key: "passphrase" },
        AWS_ACCESS_KEY_ID: { name: "aws-credentials", key: "access-key-id" },
        AWS_SECRET_ACCESS_KEY: { name: "aws-credentials", key: "secret-access-key" },
    },
};

function pkoCrd(): Record<string, unknown> {
    return parseAllDocuments(fs.readFileSync(PKO_CRD, "utf8"))
        .map((d) => d.toJS() as Record<string, unknown> | null)
        .find((d) => d?.kind === "CustomResourceDefinition") as Record<string, unknown>;
}

/** The OpenShift-on-AWS example with reconcile on, as stack prod-east. */
async function renderExampleWithReconcile(): Promise<RenderResult> {
    const example = readConfigFile(path.join(ROOT, "examples", "openshift-aws.yaml"));
    const reconcile = flattenConfig({ reconcile: RECONCILE });
    const result = await renderProgram({
        config: { values: { ...example.values, ...reconcile.values }, secretKeys: [...example.secretKeys, ...reconcile.secretKeys] },
        stack: "prod-east",
    });
    expect(result.errors).toEqual([]);
    return result;
}

describe("reconcile through the Pulumi Kubernetes Operator", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderExampleWithReconcile();
    }, 120_000);

    test("GIVEN reconcile on WHEN rendered THEN the PKO Stack runs this stack from git with refresh, on a schedule from renewBeforeDays, in-cluster, with Secrets by reference", () => {
        expect(manifestNamed(result, "Stack", "cluster-platform-prod-east")).toEqual({
            apiVersion: "pulumi.com/v1",
            kind: "Stack",
            metadata: {
                name: "cluster-platform-prod-east",
                namespace: "cluster-platform-reconcile",
                labels: {
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "reconcile",
                },
            },
            spec: {
                stack: "organization/cluster-platform/prod-east",
                projectRepo: "https://github.com/platform-team/cluster-platform.git",
                branch: "main",
                repoDir: "clusters",
                backend: "s3://platform-pulumi-state",
                envRefs: {
                    AWS_ACCESS_KEY_ID: { type: "Secret", secret: { name: "aws-credentials", key: "access-key-id" } },
                    AWS_SECRET_ACCESS_KEY: { type: "Secret", secret: { name: "aws-credentials", key: "secret-access-key" } },
                    PULUMI_CONFIG_PASSPHRASE: { type: "Secret", secret: { name: "pulumi-passphrase", key: "passphrase" } },
                },
                config: { "cluster-platform:cluster": { name: "prod-east", platform: "openshift", inCluster: true, runByOperator: true } },
                refresh: true,
                continueResyncOnCommitMatch: true,
                resyncFrequencySeconds: 86400,
                retryMaxBackoffDurationSeconds: 86400,
                serviceAccountName: "cluster-platform-reconcile",
                destroyOnFinalize: false,
            },
        });
    });

    test("GIVEN the rendered Stack WHEN validated against PKO's CRD schema THEN it has no problem and nothing the API server would prune", () => {
        const stack = manifestNamed(result, "Stack", "cluster-platform-prod-east");
        expect(validateManifests([pkoCrd() as never, stack as never])).toEqual({ problems: [], unvalidated: [] });
        const broken = { ...stack, spec: { ...(stack.spec as object), resyncFrequency: 60 } };
        expect(validateManifests([pkoCrd() as never, broken as never]).problems).toEqual([
            {
                object: "Stack cluster-platform-reconcile/cluster-platform-prod-east",
                message: "spec.resyncFrequency: is not in the schema (the API server would prune it)",
            },
        ]);
    });

    test("GIVEN reconcile on WHEN the pod webhook's configuration is rendered THEN its namespaceSelector shuts out the reconcile namespace and PKO's by name", () => {
        const configurations = result.manifests
            .map((m) => m.object)
            .filter((o) => o.kind === "MutatingWebhookConfiguration" || o.kind === "ValidatingWebhookConfiguration") as Array<{
            metadata: { name: string };
            webhooks: Array<{
                name: string;
                namespaceSelector?: { matchExpressions?: Array<{ key: string; operator: string; values: string[] }> };
            }>;
        }>;
        const podWebhooks = configurations
            .flatMap((c) => (Array.isArray(c.webhooks) ? c.webhooks : []))
            .filter((w) => typeof w?.name === "string" && w.name.includes("subscription"));
        expect(podWebhooks.length).toBeGreaterThan(0);
        for (const webhook of podWebhooks) {
            const excluded = (webhook.namespaceSelector?.matchExpressions ?? [])
                .filter((e) => e.key === "kubernetes.io/metadata.name" && e.operator === "NotIn")
                .flatMap((e) => e.values);
            expect([
                webhook.name,
                excluded.includes("cluster-platform-reconcile"),
                excluded.includes("pulumi-kubernetes-operator"),
            ]).toEqual([webhook.name, true, true]);
        }
    });

    test("GIVEN a Stack named over 42 characters WHEN validated against PKO's CRD THEN its CEL rule refuses it with PKO's message, and 42 characters pass", () => {
        const stack = manifestNamed(result, "Stack", "cluster-platform-prod-east");
        const named = (name: string) => ({ ...stack, metadata: { ...(stack.metadata as object), name } });
        expect(validateManifests([pkoCrd() as never, named("s".repeat(43)) as never]).problems).toEqual([
            {
                object: `Stack cluster-platform-reconcile/${"s".repeat(43)}`,
                message: "(root): Stack name must be no more than 42 characters in length. (x-kubernetes-validations)",
            },
        ]);
        expect(validateManifests([pkoCrd() as never, named("s".repeat(42)) as never]).problems).toEqual([]);
    });

    test("GIVEN every object the program declares, patches or reads WHEN checked against the ServiceAccount's ClusterRole THEN each is allowed exactly what the provider does with it", () => {
        const role = manifestNamed(result, "ClusterRole", "cluster-platform-reconcile-cluster-platform-prod-east") as {
            rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
        };
        const binding = manifestNamed(result, "ClusterRoleBinding", "cluster-platform-reconcile-cluster-platform-prod-east");
        expect(binding.subjects).toEqual([
            { kind: "ServiceAccount", name: "cluster-platform-reconcile", namespace: "cluster-platform-reconcile" },
        ]);
        const missing: string[] = [];
        const crds = result.manifests.map((m) => m.object);
        for (const manifest of result.manifests) {
            const { apiVersion, kind } = manifest.object as { apiVersion: string; kind: string };
            const verbs = manifest.patch ? ["get", "patch"] : ["get", "create", "update", "patch", "delete"];
            for (const verb of verbs) {
                if (!allows(role.rules, groupOf(apiVersion), resourceOfKind(apiVersion, kind, crds), verb)) {
                    missing.push(`${verb} ${kind}.${apiVersion}`);
                }
            }
        }
        const reads = result.reads.map((r) => kindOfToken(r.type)).filter((u) => u !== undefined);
        expect(reads.length).toBe(result.reads.length);
        for (const read of reads) {
            if (!allows(role.rules, groupOf(read.apiVersion), resourceOfKind(read.apiVersion, read.kind, crds), "get")) {
                missing.push(`get ${read.kind}.${read.apiVersion} (read)`);
            }
        }
        expect(missing).toEqual([]);
        // Nothing beyond: every granted resource is one the program touches or awaits.
        const touched = new Set([
            ...result.manifests.map(
                (m) =>
                    `${groupOf(String(m.object.apiVersion))}|${resourceOfKind(String(m.object.apiVersion), String(m.object.kind), crds)}`,
            ),
            ...reads.map((r) => `${groupOf(r.apiVersion)}|${resourceOfKind(r.apiVersion, r.kind, crds)}`),
            "apps|replicasets",
            "|pods",
            "|persistentvolumeclaims",
            "|events",
            "|endpoints",
        ]);
        const granted = role.rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}|${res}`)));
        expect(granted.filter((g) => !touched.has(g))).toEqual([]);
        expect(allows(role.rules, "rbac.authorization.k8s.io", "clusterroles", "escalate")).toBe(true);
        expect(allows(role.rules, "", "secrets", "create")).toBe(true);
    });
});

describe("the reconcile role against the provider's await watches", () => {
    let result: RenderResult;
    let rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
    beforeAll(async () => {
        result = await renderExampleWithReconcile();
        rules = (manifestNamed(result, "ClusterRole", "cluster-platform-reconcile-cluster-platform-prod-east") as { rules: typeof rules })
            .rules;
    }, 120_000);

    test("GIVEN every kind the program declares or patches WHEN its await watches (provider/pkg/await, await-watches.ts) are checked THEN the role lists and watches each", () => {
        const missing: string[] = [];
        const crds = result.manifests.map((m) => m.object);
        const kinds = new Set(result.manifests.map((m) => `${String(m.object.apiVersion)}|${String(m.object.kind)}`));
        for (const key of kinds) {
            const [apiVersion, kind] = key.split("|");
            const group = groupOf(apiVersion);
            for (const watched of [{ group, resource: resourceOfKind(apiVersion, kind, crds) }, ...watchedFor(group, kind)]) {
                for (const verb of ["list", "watch"]) {
                    if (!allows(rules, watched.group, watched.resource, verb)) {
                        missing.push(`${kind}: ${verb} ${watched.resource}.${watched.group || "core"}`);
                    }
                }
            }
        }
        expect(missing).toEqual([]);
        // The program declares Deployments and Services, so their await entries are exercised above.
        expect(kinds.has("apps/v1|Deployment") && kinds.has("v1|Service")).toBe(true);
    });

    test("GIVEN the provider's Deployment await (deployment.go: deployments, replicasets, pods, persistentvolumeclaims; await.go: events) WHEN the role is read THEN each is listed and watched", () => {
        // Written out from deployment.go's four Subscribe calls and await.go's NewEventAggregator,
        // not from the table: the PVC watch is the one whose absence hangs the run.
        const deploymentWatches = [
            ["apps", "deployments"],
            ["apps", "replicasets"],
            ["", "pods"],
            ["", "persistentvolumeclaims"],
            ["", "events"],
        ];
        expect(deploymentWatches.filter(([g, r]) => !(allows(rules, g, r, "list") && allows(rules, g, r, "watch")))).toEqual([]);
        expect(AWAIT_WATCHES["apps|Deployment"].map((w) => w.resource)).toEqual(["replicasets", "pods", "persistentvolumeclaims"]);
    });

    test("GIVEN reconcile on WHEN rendered THEN the ServiceAccount is bound to system:auth-delegator (PKO's agent authenticates the operator as it)", () => {
        expect(
            manifestNamed(result, "ClusterRoleBinding", "cluster-platform-reconcile-cluster-platform-prod-east:system:auth-delegator"),
        ).toEqual({
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRoleBinding",
            metadata: {
                name: "cluster-platform-reconcile-cluster-platform-prod-east:system:auth-delegator",
                labels: {
                    "app.kubernetes.io/managed-by": "cluster-platform",
                    "app.kubernetes.io/part-of": "cluster-platform",
                    "cluster-platform.io/capability": "reconcile",
                },
            },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
            subjects: [{ kind: "ServiceAccount", name: "cluster-platform-reconcile", namespace: "cluster-platform-reconcile" }],
        });
    });
});

describe("reconcile config rules", () => {
    test("GIVEN a schedule too slow for the renewal window WHEN validated THEN one problem names both keys", async () => {
        const { problems } = await renderConfig({
            ...MINIMAL,
            certificates: { renewBeforeDays: 7 },
            reconcile: { ...RECONCILE, resyncFrequencySeconds: 259200 },
        });
        expect(problems).toEqual([
            {
                path: "reconcile.resyncFrequencySeconds",
                message:
                    "259200 fits only 2 runs of the stack inside the 7-day renewal window of certificates.renewBeforeDays (7), and a CA rotation needs 3 updates inside it: use at most 201600 seconds, or raise certificates.renewBeforeDays",
            },
        ]);
    });

    test("GIVEN reconcile on and a 30-character cluster name WHEN validated THEN one problem names cluster.name, the Stack name and PKO's 42-character limit", async () => {
        const name = "prod-east-payments-eu-west-1ab";
        expect(name).toHaveLength(30);
        const { problems } = await renderConfig({ ...MINIMAL, cluster: { ...MINIMAL.cluster, name }, reconcile: RECONCILE });
        expect(problems).toEqual([
            {
                path: "cluster.name",
                message:
                    '"prod-east-payments-eu-west-1ab" is 30 characters, and with reconcile.enabled the PKO Stack is named "cluster-platform-prod-east-payments-eu-west-1ab" (47 characters): PKO\'s Stack CRD refuses names over 42 characters (CEL rule size(self.metadata.name) <= 42), so cluster.name may have at most 25 characters with reconcile on',
            },
        ]);
        const longest = await renderConfig({ ...MINIMAL, cluster: { ...MINIMAL.cluster, name: "a".repeat(25) }, reconcile: RECONCILE });
        expect(longest.problems).toEqual([]);
        const off = await renderConfig({ ...MINIMAL, cluster: { ...MINIMAL.cluster, name } });
        expect(off.problems).toEqual([]);
    });

    test("GIVEN PKO's own run (cluster.runByOperator, as the Stack sets it) of a commit that turns reconcile off WHEN validated THEN it refuses before registering anything, naming reconcile.enabled and the run by hand", async () => {
        const result = await renderConfig({
            cluster: { name: "prod-east", platform: "openshift", inCluster: true, runByOperator: true },
            reconcile: { enabled: false },
        });
        expect(result.problems).toEqual([
            {
                path: "reconcile.enabled",
                message:
                    "false cannot be applied by the Pulumi Kubernetes Operator's own run (cluster.runByOperator): it would delete the Stack that runs it, whose finalizer waits for this very run, and the RBAC it runs with; run `pulumi up` for this stack once by hand (cluster.kubeContext or cluster.kubeconfig) to turn reconcile off",
            },
        ]);
        expect(result.resources).toEqual([]);
        // The same commit run by hand (the admin's context) is accepted: that run removes the Stack.
        const byHand = await renderConfig({
            cluster: { name: "prod-east", platform: "openshift", kubeContext: "prod-east" },
            reconcile: { enabled: false },
        });
        expect(byHand.problems).toEqual([]);
    });

    test("GIVEN reconcile with no source, with both branch and commit, or with a directory render WHEN validated THEN each problem names its key", async () => {
        const noSource = await renderConfig({
            cluster: { name: MINIMAL.cluster.name, platform: MINIMAL.cluster.platform, renderYamlToDirectory: "out/yaml" },
            reconcile: { enabled: true, environment: { "1BAD": { name: "x", key: "y" } } },
        });
        expect(noSource.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
            'reconcile.environment["1BAD"]: "1BAD" is not an environment variable name (letters, digits, _; not starting with a digit)',
            "reconcile.git: exactly one of reconcile.git and reconcile.flux must name the program source when reconcile.enabled is true",
        ]);
        const both = await renderConfig({
            cluster: { name: MINIMAL.cluster.name, platform: MINIMAL.cluster.platform, renderYamlToDirectory: "out/yaml" },
            reconcile: { enabled: true, git: { repository: "https://example.com/r.git", branch: "main", commit: "0".repeat(40) } },
        });
        expect(both.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
            "reconcile.git.commit: exactly one of branch and commit must be set",
        ]);
        const directory = await renderConfig({
            cluster: { name: MINIMAL.cluster.name, platform: MINIMAL.cluster.platform, renderYamlToDirectory: "out/yaml" },
            reconcile: { enabled: true, flux: { apiVersion: "source.toolkit.fluxcd.io/v1", kind: "GitRepository", name: "platform" } },
        });
        expect(directory.problems.map((p) => `${p.path}: ${p.message}`)).toEqual([
            "reconcile.enabled: true needs a live cluster, but cluster.renderYamlToDirectory renders YAML instead: PKO would apply what a render only writes",
        ]);
    });

    test("GIVEN reconcile off (the default) WHEN rendered THEN no reconcile object exists", async () => {
        const off = await renderConfig(MINIMAL);
        expect(
            off.resources.filter((r) => r.type.startsWith("cluster-platform:reconcile") || r.type === "kubernetes:pulumi.com/v1:Stack"),
        ).toEqual([]);
    });
});
