import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { main } from "../../scripts/policy/config";
import { ROOT } from "../helpers/render";

describe("npm run policy:config: the policy config a stack passes to the packs", () => {
    let out: string;
    beforeEach(() => {
        out = fs.mkdtempSync(path.join(os.tmpdir(), "policy-config-"));
    });
    afterEach(() => fs.rmSync(out, { recursive: true, force: true }));

    test("GIVEN the example stack WHEN run THEN aws-tags requires the keys of its aws.userTags and the preview command is printed", () => {
        const lines: string[] = [];
        expect(
            main(
                ["--config", path.join(ROOT, "examples", "openshift-aws.yaml"), "--out", out],
                (l) => lines.push(l),
                (l) => lines.push(`error: ${l}`),
            ),
        ).toBe(0);
        expect(JSON.parse(fs.readFileSync(path.join(out, "aws-tags.json"), "utf8"))).toEqual({
            "aws-required-tags": { requiredTags: ["adminContact", "costCenter", "red-hat-managed"] },
            "aws-side-channel-tags": { requiredTags: ["adminContact", "costCenter", "red-hat-managed"] },
            "aws-provider-settings": { ignoreTagKeys: [], ignoreTagKeyPrefixes: ["cost-allocation:"] },
            // Exemption: the AWS cloud provider's own subnet key for this cluster.
            "aws-reserved-tag-keys": { clusterIds: ["prod-east"] },
        });
        expect(JSON.parse(fs.readFileSync(path.join(out, "k8s-rbac.json"), "utf8"))).toEqual({
            "k8s-olm-rbac-toggles": {
                disableOLMAggregateCRDRoles: false,
                disableAggregateCRDRoles: false,
                disableAllNamespacePermissionPromotion: true,
            },
            "k8s-aggregated-roles": { aggregatedRoles: ["admin", "edit", "view"] },
            "k8s-pod-security-restricted": { platform: "openshift" },
            // Exemption: the webhook's and the driver's Secret reads in the source namespace, which holds only copies.
            "k8s-no-broad-grants": {
                allowedRoles: [
                    "subscription-sources/subscription-injection-webhook-read",
                    "subscription-sources/subscription-shared-resource-driver",
                ],
            },
        });
        expect(lines).toEqual([
            'exempt "subscription-sources/subscription-injection-webhook-read" from k8s-rbac/k8s-no-broad-grants (allowedRoles): the subscription webhook lists Secrets in the source namespace, which holds only the copies ClusterBundles share, and in subscriptions.webhook.readNamespaces, to resolve entitlement key names (seed 000)',
            'exempt "subscription-sources/subscription-shared-resource-driver" from k8s-rbac/k8s-no-broad-grants (allowedRoles): the Shared Resource CSI driver lists and watches Secrets in the source namespace, which holds only the copies ClusterBundles share; its refresh informers need it (components/subscriptions/bundles.ts driverAccessManifests)',
            'exempt "prod-east" from aws-tags/aws-reserved-tag-keys (clusterIds): the AWS cloud provider finds this cluster\'s subnets and security groups by kubernetes.io/cluster/<id> (owned or shared); on OpenShift <id> is the infra id (pass --infra-id)',
            `wrote ${path.join(out, "aws-tags.json")}`,
            `wrote ${path.join(out, "k8s-rbac.json")}`,
            `pulumi preview --policy-pack policy-packs/aws-tags --policy-pack-config ${path.join(out, "aws-tags.json")} --policy-pack policy-packs/k8s-rbac --policy-pack-config ${path.join(out, "k8s-rbac.json")}`,
        ]);
    });

    test("GIVEN a stack with reconcile on WHEN run THEN k8s-no-broad-grants exempts the reconcile role by name and the reason is printed", () => {
        const stack = path.join(out, "Pulumi.reconcile.yaml");
        fs.writeFileSync(
            stack,
            [
                "config:",
                "  cluster-platform:cluster:",
                "    name: prod-east",
                "    platform: openshift",
                "    kubeContext: prod-east",
                "  cluster-platform:reconcile:",
                "    enabled: true",
                "    git:",
                "      repository: https://github.com/platform-team/cluster-platform.git",
                "      branch: main",
                "",
            ].join("\n"),
        );
        const lines: string[] = [];
        expect(
            main(
                ["--config", stack, "--out", path.join(out, "config")],
                (l) => lines.push(l),
                (l) => lines.push(`error: ${l}`),
            ),
        ).toBe(0);
        expect(JSON.parse(fs.readFileSync(path.join(out, "config", "k8s-rbac.json"), "utf8"))["k8s-no-broad-grants"]).toEqual({
            allowedRoles: ["cluster-platform-reconcile-cluster-platform-prod-east"],
        });
        expect(lines.filter((l) => l.includes("reconcile"))).toEqual([
            `exempt "cluster-platform-reconcile-cluster-platform-prod-east" from k8s-rbac/k8s-no-broad-grants (allowedRoles): the reconcile role runs this program from PKO's workspace, and the program declares Roles and ClusterRoles: the API server lets it create or bind those only with escalate and bind (kubernetes pkg/registry/rbac/escalation_check.go); it reads the Secrets the program declares or checks (entitlements, the webhook's serving certificate)`,
        ]);
    });

    test("GIVEN an OpenShift infra id WHEN run with --infra-id THEN the cloud provider's cluster key is exempt for it too, and the line says so", () => {
        const lines: string[] = [];
        const args = ["--config", path.join(ROOT, "examples", "openshift-aws.yaml"), "--out", out, "--infra-id", "prod-east-x7k2p"];
        expect(
            main(
                args,
                (l) => lines.push(l),
                (l) => lines.push(`error: ${l}`),
            ),
        ).toBe(0);
        expect(JSON.parse(fs.readFileSync(path.join(out, "aws-tags.json"), "utf8"))["aws-reserved-tag-keys"]).toEqual({
            clusterIds: ["prod-east", "prod-east-x7k2p"],
        });
        expect(lines.filter((l) => l.includes("aws-reserved-tag-keys"))).toEqual([
            'exempt "prod-east", "prod-east-x7k2p" from aws-tags/aws-reserved-tag-keys (clusterIds): the AWS cloud provider finds this cluster\'s subnets and security groups by kubernetes.io/cluster/<id> (owned or shared); on OpenShift <id> is the infra id (pass --infra-id)',
        ]);
    });

    test("GIVEN an invalid stack file WHEN run THEN the validator's report is printed, exit 1, nothing written", () => {
        const stack = path.join(out, "Pulumi.bad.yaml");
        fs.writeFileSync(stack, "config:\n  cluster-platform:cluster:\n    name: Bad_Name\n    platform: openshift\n");
        const errors: string[] = [];
        expect(
            main(
                ["--config", stack, "--out", path.join(out, "config")],
                () => undefined,
                (l) => errors.push(l),
            ),
        ).toBe(1);
        expect(errors).toEqual([
            "invalid configuration: 1 problem\n  - cluster-platform:cluster.name: \"Bad_Name\" must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit",
        ]);
        expect(fs.existsSync(path.join(out, "config"))).toBe(false);
    });

    test("GIVEN no --out WHEN run THEN the usage is printed and the exit code is 2", () => {
        const errors: string[] = [];
        expect(
            main(
                ["--config", "x.yaml"],
                () => undefined,
                (l) => errors.push(l),
            ),
        ).toBe(2);
        expect(errors).toEqual([
            "usage: npm run policy:config -- --config <Pulumi.<stack>.yaml> --out <dir> [--infra-id <OpenShift infra id>]...",
        ]);
    });
});
