import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parse } from "yaml";
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
            "usage: npm run policy:config -- --config <Pulumi.<stack>.yaml> --out <dir> [--infra-id <OpenShift infra id>]... [--exemptions <file>] [--accept <operator> --reason <why>]",
        ]);
    });
});

describe("npm run policy:config: the powers of the stack's operators, listed, then accepted per operator", () => {
    let out: string;
    let stack: string;
    const CSV = "../shared/testdata/csvs/cert-manager-1.16.1.clusterserviceversion.yaml";
    const REASON = "issues certificates into Secrets of every namespace and injects CA bundles into webhooks, CRDs and APIServices";
    const run = (...extra: string[]) => {
        const lines: string[] = [];
        const code = main(
            ["--config", stack, "--out", path.join(out, "config"), ...extra],
            (l) => lines.push(l),
            (l) => lines.push(`error: ${l}`),
        );
        return { code, lines };
    };
    const written = () => JSON.parse(fs.readFileSync(path.join(out, "config", "k8s-rbac.json"), "utf8"))["k8s-no-broad-grants"];
    const power = (p: string, role: string, where: string, line: number, csvPath: string, status: string) =>
        `  [${p}] ClusterRole "${role}": ${where} (${CSV}:${line} spec.install.spec.clusterPermissions[${csvPath}]); ${status}`;
    const lines = (status: string) => [
        'operator "certs": its generated roles hold read-secrets, admission-writes, crd-writes, apiservice-writes',
        power(
            "read-secrets",
            "cert-manager.v1.16.1-22EuUULYHekrrkrOiuyiwFRP3mohaV8AnQSkb5",
            'rules[5] allows get secrets (any name) (group "") in every namespace or cluster-wide',
            238,
            "0].rules[5",
            status,
        ),
        power(
            "read-secrets",
            "cert-manager.v1.16.1-8A9lKdp4FBQpQ9Rg2ZZegmm2V9qOm9OA0pVLq4",
            'rules[1] allows get secrets (any name) (group "") in every namespace or cluster-wide',
            570,
            "1].rules[1",
            status,
        ),
        power(
            "admission-writes",
            "cert-manager.v1.16.1-8A9lKdp4FBQpQ9Rg2ZZegmm2V9qOm9OA0pVLq4",
            'rules[3] allows update mutatingwebhookconfigurations (any name) (group "admissionregistration.k8s.io") in every namespace or cluster-wide',
            587,
            "1].rules[3",
            status,
        ),
        power(
            "crd-writes",
            "cert-manager.v1.16.1-8A9lKdp4FBQpQ9Rg2ZZegmm2V9qOm9OA0pVLq4",
            'rules[5] allows update customresourcedefinitions (any name) (group "apiextensions.k8s.io") in every namespace or cluster-wide',
            608,
            "1].rules[5",
            status,
        ),
        power(
            "apiservice-writes",
            "cert-manager.v1.16.1-8A9lKdp4FBQpQ9Rg2ZZegmm2V9qOm9OA0pVLq4",
            'rules[4] allows update apiservices (any name) (group "apiregistration.k8s.io") in every namespace or cluster-wide',
            598,
            "1].rules[4",
            status,
        ),
    ];

    beforeEach(() => {
        out = fs.mkdtempSync(path.join(os.tmpdir(), "policy-config-"));
        stack = path.join(out, "Pulumi.ops.yaml");
        fs.writeFileSync(
            stack,
            [
                "config:",
                "  cluster-platform:cluster:",
                "    name: prod-east",
                "    platform: openshift",
                "    kubeContext: prod-east",
                "  cluster-platform:operators:",
                "    - name: certs",
                `      csv: ${CSV}`,
                "      namespace: cert-manager",
                "    - name: widgets",
                "      csv: tests/fixtures/operators/widget-operator/manifests/widget-operator.clusterserviceversion.yaml",
                "      namespace: widget-operator",
                "",
            ].join("\n"),
        );
    });
    afterEach(() => fs.rmSync(out, { recursive: true, force: true }));

    test("GIVEN a stack with cert-manager and the sample operator WHEN run THEN every power cert-manager's generated roles hold is listed with the CSV line it comes from, none is exempt, and the pack is told the stack's operators", () => {
        const { code, lines: printed } = run();
        expect(code).toBe(0);
        expect(printed.slice(0, 7)).toEqual([
            ...lines("not accepted: the pack refuses it"),
            '  accept read-secrets, admission-writes, crd-writes, apiservice-writes after review: npm run policy:config -- --config <stack file> --out <dir> --accept certs --reason "<why it needs them>"',
        ]);
        expect(written()).toEqual({ operators: ["certs", "widgets"] });
    });

    test("GIVEN --accept with a reason WHEN run THEN the reviewed file beside the stack holds the operator's powers and reason, and the pack config exempts exactly those, for that operator", () => {
        const { code, lines: printed } = run("--accept", "certs", "--reason", REASON);
        expect(code).toBe(0);
        const file = path.join(out, "Pulumi.ops.policy-exemptions.yaml");
        expect(printed.slice(0, 7)).toEqual([
            `wrote ${file}: operator "certs" accepted (review and commit it)`,
            ...lines(`accepted: ${REASON}`),
        ]);
        const powers = ["read-secrets", "admission-writes", "crd-writes", "apiservice-writes"];
        expect(parse(fs.readFileSync(file, "utf8"))).toEqual({ operators: { certs: { reason: REASON, powers } } });
        expect(written()).toEqual({ operators: ["certs", "widgets"], operatorExemptions: [{ operator: "certs", powers, reason: REASON }] });
        // The next run reads the reviewed file: the same exemptions, without --accept.
        expect(run().code).toBe(0);
        expect(written().operatorExemptions).toEqual([{ operator: "certs", powers, reason: REASON }]);
    });

    test("GIVEN a reviewed file accepting only read-secrets WHEN run THEN only that power is exempt and the others are listed as refused (a power gained in an upgrade is not in the file)", () => {
        fs.writeFileSync(
            path.join(out, "Pulumi.ops.policy-exemptions.yaml"),
            `operators:\n  certs:\n    reason: reads Secrets\n    powers: [read-secrets]\n`,
        );
        const { lines: printed } = run();
        expect(written().operatorExemptions).toEqual([{ operator: "certs", powers: ["read-secrets"], reason: "reads Secrets" }]);
        expect(printed.filter((l) => l.endsWith("not accepted: the pack refuses it")).map((l) => /\[([a-z-]+)\]/.exec(l)?.[1])).toEqual([
            "admission-writes",
            "crd-writes",
            "apiservice-writes",
        ]);
    });

    test("GIVEN an exemptions file naming an operator the stack does not declare, a power over RBAC, an unknown power, an empty reason and an unknown key WHEN run THEN every problem is named with its key, value and rule, exit 1, nothing written", () => {
        const bad = path.join(out, "bad.yaml");
        fs.writeFileSync(
            bad,
            'operators:\n  certz:\n    reason: ""\n    powers: [read-secrets, escalate, nope]\n  widgets:\n    powers: []\n    extra: 1\n',
        );
        const { code, lines: printed } = run("--exemptions", bad);
        expect(code).toBe(1);
        const powers =
            "everything, escalate, bind, impersonate, read-secrets, exec-pods, node-proxy, mint-tokens, admission-writes, crd-writes, apiservice-writes, csr-approval, privileged-scc, non-resource-urls";
        expect(printed).toEqual([
            [
                `error: invalid exemptions file ${bad}: 7 problems`,
                '  - operators.certz: "certz" names no operator the stack declares (its operators: ["certs","widgets"]); an exemption is for one of the stack\'s operators',
                '  - operators.certz.reason: "" must be a non-empty string: why the operator needs these powers',
                '  - operators.certz.powers[1]: "escalate" cannot be accepted per operator: it is a power over RBAC itself (escalate: write roles that grant what the writer does not hold); review the role by name instead (k8s-no-broad-grants allowedRoles)',
                `  - operators.certz.powers[2]: "nope" is not a power of the dangerous-request set (${powers})`,
                '  - operators.widgets.extra: "extra" is not a key of an operator\'s exemption (its keys: reason, powers)',
                "  - operators.widgets.reason: undefined must be a non-empty string: why the operator needs these powers",
                `  - operators.widgets.powers: [] must be a non-empty list of powers (${powers})`,
            ].join("\n"),
        ]);
        expect(fs.existsSync(path.join(out, "config"))).toBe(false);
    });
});
