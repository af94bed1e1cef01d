/**
 * The five ordering rules of one run (components/composition/phases.ts), each observed in the
 * order the program registers resources and writes warnings (RenderResult.timeline), or in the
 * failure a step out of order now causes. Each test fails when its rule is broken: moving the
 * step it names to another phase changes what it observes.
 */
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { recordDeclaredKinds } from "../../components/reconcile";
import { ClusterState } from "../../scripts/render/cluster-state";
import { flattenConfig, readConfigFile } from "../../scripts/render/config-file";
import { renderProgram, RenderResult } from "../../scripts/render/render";
import { groupOf, kindOfToken, pluralOf } from "../helpers/rbac-oracle";
import { manifestNamed, renderConfig, ROOT } from "../helpers/render";
import { tlsComputed } from "../helpers/tls-signer";

const RECONCILE = {
    enabled: true,
    git: { repository: "https://github.com/platform-team/cluster-platform.git", branch: "main" },
    environment: {},
};

const position = (result: RenderResult, match: (entry: string) => boolean) => result.timeline.findIndex(match);
const isKubernetesObject = (entry: string) => entry.startsWith("resource kubernetes:") && !entry.startsWith("resource pulumi:providers:");

describe("ordering by construction", () => {
    let everything: RenderResult;
    beforeAll(async () => {
        const example = readConfigFile(path.join(ROOT, "examples", "openshift-aws.yaml"));
        const reconcile = flattenConfig({ reconcile: RECONCILE });
        // An `up` against the example's cluster objects, so that certificates and tags are known.
        everything = await renderProgram({
            config: { values: { ...example.values, ...reconcile.values }, secretKeys: example.secretKeys },
            stack: "prod-east",
            preview: false,
            computed: tlsComputed({ now: new Date("2026-01-01T00:00:00Z") }),
            cluster: ClusterState.fromFile(path.join(ROOT, "tests", "fixtures", "certificates", "openshift-aws.cluster.yaml")),
        });
        expect(everything.errors).toEqual([]);
    }, 120_000);

    test("GIVEN reconcile on WHEN rendered THEN every Kubernetes kind the run registered, the first resource included, is in the reconcile ClusterRole (kinds recorded before the first resource)", () => {
        const role = manifestNamed(everything, "ClusterRole", "cluster-platform-reconcile-cluster-platform-prod-east") as {
            rules: Array<{ apiGroups: string[]; resources: string[] }>;
        };
        const granted = new Set(role.rules.flatMap((r) => r.apiGroups.flatMap((g) => r.resources.map((res) => `${g}/${res}`))));
        // The CRDs the stack declares name their kinds' plurals; discovery names the rest.
        const crds = everything.manifests.map((m) => m.object);
        const registered = everything.timeline
            .filter(isKubernetesObject)
            .map((entry) => kindOfToken(entry.slice("resource ".length, entry.indexOf("::"))))
            .filter((k) => k !== undefined && k.kind !== "ConfigFile")
            .map((k) => `${groupOf(k!.apiVersion)}/${pluralOf(k!.apiVersion, k!.kind, crds)}`);
        expect(registered.length).toBeGreaterThan(10);
        expect([...new Set(registered)].filter((kind) => !granted.has(kind))).toEqual([]);
    });

    test("GIVEN aws on WHEN rendered THEN AwsTags (whose transformations tag what follows) comes before every Kubernetes object and AWS resource outside it", () => {
        const awsTags = position(everything, (e) => e === "resource cluster-platform:aws-tags:AwsTags::aws-tags");
        expect(awsTags).toBeGreaterThan(0);
        const first = position(
            everything,
            (e) => isKubernetesObject(e) || (e.startsWith("resource aws:") && !e.startsWith("resource pulumi:providers:")),
        );
        expect(first).toBeGreaterThan(awsTags);
        // And what it tags got the tags: the image registry storage's bucket, declared after it.
        const bucket = everything.resources.find((r) => r.type === "aws:s3/bucket:Bucket");
        expect((bucket?.inputs.tags as Record<string, string>).costCenter).toBe("7536");
    });

    test("GIVEN a ClusterBundle that loses a share WHEN previewed THEN the warning on what happens to that share comes before the first Kubernetes object (losses before any change)", async () => {
        const config = (yumRepositories: unknown[]) => ({
            cluster: { name: "prod", platform: "kubernetes", renderYamlToDirectory: "out/k8s" },
            subscriptions: {
                enabled: true,
                webhook: { image: "quay.io/acme/subscription-webhook:1.0" },
                clusterBundles: [
                    {
                        name: "cluster",
                        entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
                        yumRepositories,
                        aggregateToClusterRoles: ["admin"],
                    },
                ],
            },
        });
        const first = await renderConfig(config([{ name: "satellite-repos", namespace: "openshift-config" }]));
        const next = await renderConfig(config([]), { stackOutputs: first.stackOutputs });
        // A render cannot ask which pods mount the share, so it is kept and the warning says why (running-pods.ts).
        const warning = position(
            next,
            (e) =>
                e.startsWith('warning subscriptions: ClusterBundle "cluster": share ') &&
                e.includes("is kept (the cluster cannot be asked which pods mount it)"),
        );
        expect(warning).toBeGreaterThanOrEqual(0);
        expect(position(next, isKubernetesObject)).toBeGreaterThan(warning);
    }, 120_000);

    test("GIVEN a self-signed stack with webhooks WHEN rendered THEN certificateExpiry names every serving Secret the run declared (the certificates' outputs taken last)", () => {
        const servingSecrets = everything.manifests
            .filter((m) => m.object.kind === "Secret" && m.object.type === "kubernetes.io/tls")
            .map((m) => {
                const metadata = m.object.metadata as { name: string; namespace: string };
                return `${metadata.namespace}/${metadata.name}`;
            })
            .sort();
        expect(servingSecrets.length).toBeGreaterThan(0);
        const expiry = everything.stackOutputs.certificateExpiry as Array<{ name: string; kind: string }>;
        expect(expiry.filter((e) => e.kind === "serving").map((e) => e.name)).toEqual(servingSecrets);
    });
});

describe("the last phase closes behind it", () => {
    beforeAll(async () => {
        await pulumi.runtime.setMocks(
            {
                newResource: (args) => ({ id: `${args.name}-id`, state: args.inputs }),
                call: (args) => args.inputs,
            },
            "cluster-platform",
            "closing",
            true,
        );
    });

    test("GIVEN the declared kinds sealed WHEN a resource of a kind not recorded is declared THEN the run fails naming it (seal last)", async () => {
        let lateError: unknown;
        let rules: unknown;
        await pulumi.runtime.runInPulumiStack(async () => {
            const kinds = recordDeclaredKinds();
            new k8s.core.v1.ConfigMap("before", { metadata: { name: "before" } });
            kinds.seal();
            // A kind already recorded is fine after the seal; a new one is not.
            new k8s.core.v1.ConfigMap("again", { metadata: { name: "again" } });
            try {
                new k8s.core.v1.ServiceAccount("late", { metadata: { name: "late" } });
            } catch (error) {
                lateError = error;
            }
            rules = await kinds.rules;
            return {};
        });
        expect((lateError as Error | undefined)?.message).toBe(
            'kubernetes:core/v1:ServiceAccount "late" is declared after the reconcile RBAC was sealed: its kind is not in the rules PKO runs with (components/composition/phases.ts seals last)',
        );
        // The ConfigMap's own verbs, and the Events the provider's await watches for every kind.
        expect(rules).toEqual([
            { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "delete", "get", "list", "patch", "update", "watch"] },
            { apiGroups: [""], resources: ["events"], verbs: ["get", "list", "watch"] },
        ]);
    });
});
