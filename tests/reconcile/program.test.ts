/**
 * `reconcile` in the whole program: the PKO Stack (validated against PKO's own CRD schema in
 * ../shared/testdata/pulumi-kubernetes-operator/), its ServiceAccount and the least RBAC that
 * runs the program, derived from what the rendered program declares; and the config rules.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
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

describe("reconcile through the Pulumi Kubernetes Operator", () => {
    let result: RenderResult;
    beforeAll(async () => {
        const example = readConfigFile(path.join(ROOT, "examples", "openshift-aws.yaml"));
        const reconcile = flattenConfig({ reconcile: RECONCILE });
        result = await renderProgram({
            config: { values: { ...example.values, ...reconcile.values }, secretKeys: [...example.secretKeys, ...reconcile.secretKeys] },
            stack: "prod-east",
        });
        expect(result.errors).toEqual([]);
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
                config: { "cluster-platform:cluster": { name: "prod-east", platform: "openshift", inCluster: true } },
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

    test("GIVEN every object the program declares, patches or reads WHEN checked against the ServiceAccount's ClusterRole THEN each is allowed exactly what the provider does with it", () => {
        const role = manifestNamed(result, "ClusterRole", "cluster-platform-reconcile-cluster-platform-prod-east") as {
            rules: Array<{ apiGroups: string[]; resources: string[]; verbs: string[] }>;
        };
        const binding = manifestNamed(result, "ClusterRoleBinding", "cluster-platform-reconcile-cluster-platform-prod-east");
        expect(binding.subjects).toEqual([
            { kind: "ServiceAccount", name: "cluster-platform-reconcile", namespace: "cluster-platform-reconcile" },
        ]);
        const missing: string[] = [];
        for (const manifest of result.manifests) {
            const { apiVersion, kind } = manifest.object as { apiVersion: string; kind: string };
            const verbs = manifest.patch ? ["get", "patch"] : ["get", "create", "update", "patch", "delete"];
            for (const verb of verbs) {
                if (!allows(role.rules, groupOf(apiVersion), resourceOfKind(kind), verb)) {
                    missing.push(`${verb} ${kind}.${apiVersion}`);
                }
            }
        }
        const reads = result.reads.map((r) => kindOfToken(r.type)).filter((u) => u !== undefined);
        expect(reads.length).toBe(result.reads.length);
        for (const read of reads) {
            if (!allows(role.rules, groupOf(read.apiVersion), resourceOfKind(read.kind), "get")) {
                missing.push(`get ${read.kind}.${read.apiVersion} (read)`);
            }
        }
        expect(missing).toEqual([]);
        // Nothing beyond: every granted resource is one the program touches or awaits.
        const touched = new Set([
            ...result.manifests.map((m) => `${groupOf(String(m.object.apiVersion))}|${resourceOfKind(String(m.object.kind))}`),
            ...reads.map((r) => `${groupOf(r.apiVersion)}|${resourceOfKind(r.kind)}`),
            "apps|replicasets",
            "|pods",
            "|events",
            "|endpoints",
        ]);
        const granted = role.rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}|${res}`)));
        expect(granted.filter((g) => !touched.has(g))).toEqual([]);
        expect(allows(role.rules, "rbac.authorization.k8s.io", "clusterroles", "escalate")).toBe(true);
        expect(allows(role.rules, "", "secrets", "create")).toBe(true);
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
