import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { DAY } from "../helpers/clock";
import { stringify } from "yaml";
import { kubeVersionProblem } from "../../scripts/render/cli";
import { CSV_DIR } from "../helpers/operators";
import { ROOT } from "../helpers/render";
import { certificateRequest, generateKey, selfSign, signRequest } from "../helpers/tls-signer";
import { tsxCommand } from "../helpers/tsx";

/** A previous update's certificateTrust output whose CA, issued 770 days ago, is 20 days from expiry. */
async function ageingTrust(): Promise<{ caBundle: string[]; servingCertificates: Record<string, string> }> {
    const issued = new Date(Date.now() - 770 * DAY);
    const caKey = (await generateKey()).privateKeyPem;
    const { certPem: ca } = await selfSign(
        caKey,
        {
            subject: { commonName: "cluster-platform CA (prod-east)", organization: "cluster-platform" },
            validityPeriodHours: 790 * 24,
            allowedUses: ["cert_signing"],
            isCaCertificate: true,
        },
        issued,
    );
    const request = await certificateRequest(
        (await generateKey()).privateKeyPem,
        { commonName: "subscription-webhook.subscription-injection.svc" },
        ["subscription-webhook.subscription-injection.svc"],
    );
    const { certPem: leaf } = await signRequest(
        request,
        ca,
        caKey,
        { validityPeriodHours: 730 * 24, allowedUses: ["server_auth"] },
        issued,
    );
    return { caBundle: [ca], servingCertificates: { "subscription-injection/subscription-webhook-cert": leaf } };
}

const CLI = path.join(ROOT, "scripts", "render", "cli.ts");

function render(args: string[]) {
    return spawnSync(...tsxCommand(CLI, args), { cwd: ROOT, encoding: "utf8" });
}

/** Two renders at once: independent processes, so the pair costs about one on a 2-core machine. */
function renderConcurrently(...runs: string[][]): Promise<{ status: number | null }[]> {
    return Promise.all(
        runs.map(
            (args) =>
                new Promise<{ status: number | null }>((resolve, reject) => {
                    const child = spawn(...tsxCommand(CLI, args), { cwd: ROOT, stdio: "ignore" });
                    child.on("error", reject);
                    child.on("close", (status) => resolve({ status }));
                }),
        ),
    );
}

function filesUnder(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    for (const entry of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
        if (entry.isFile()) {
            const full = path.join(entry.parentPath, entry.name);
            out[path.relative(dir, full)] = fs.readFileSync(full, "utf8");
        }
    }
    return out;
}

describe("npm run render", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "render-cli-"));
    afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

    test("GIVEN the openshift-aws example rendered twice WHEN the outputs are compared THEN they are byte-identical", async () => {
        const [first, second] = await renderConcurrently(
            ["--config", "examples/openshift-aws.yaml", "--out", path.join(tmp, "a")],
            ["--config", "examples/openshift-aws.yaml", "--out", path.join(tmp, "b")],
        );
        expect(first.status).toBe(0);
        expect(second.status).toBe(0);
        const a = filesUnder(path.join(tmp, "a"));
        expect(Object.keys(a)).toContain("resources.json");
        expect(filesUnder(path.join(tmp, "b"))).toEqual(a);
    });

    test("GIVEN a config with 10 mistakes WHEN rendered THEN it exits 1, reports all 10 on stderr and writes nothing", () => {
        const out = path.join(tmp, "bad-out");
        const result = render(["--config", "tests/fixtures/ten-mistakes.yaml", "--out", out]);
        expect(result.status).toBe(1);
        expect(result.stderr).toBe(
            [
                "invalid configuration: 10 problems",
                '  - cluster-platform:aws.userTags["kubernetes.io/x"]: key is in the kubernetes.io namespace, which the platform reserves',
                '  - cluster-platform:caInjection[0].namespace: is required: ConfigMap "bundle" is namespaced',
                '  - cluster-platform:caInjection[1].kind: "Secret" is not one of "APIService", "ConfigMap", "CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"',
                '  - cluster-platform:certificates.issuer: is required when mode is "cert-manager"',
                "  - cluster-platform:certificates.renewBeforeDays: 900 must be less than certValidityDays (730)",
                "  - cluster-platform:cluster.name: \"Prod_East\" must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit",
                '  - cluster-platform:cluster.platform: "aws" is not one of "openshift", "kubernetes"',
                '  - cluster-platform:operators[1]: duplicate operator name "etcd" (already at index 0)',
                '  - cluster-platform:subscriptions.webhook.replicas: 1 is too few: failurePolicy "Fail" needs at least 2 replicas so one pod\'s restart cannot block every pod creation',
                '  - cluster-platform:webhookImage.output: "tarball" is not one of "registry", "oci-layout"',
                "",
            ].join("\n"),
        );
        expect(fs.existsSync(out)).toBe(false);
    });

    test("GIVEN the previous update's outputs with a CA near expiry WHEN rendered THEN outputs.json sits beside resources.json with certificateExpiry, and stderr warns naming the CA", async () => {
        const previous = path.join(tmp, "previous-outputs.json");
        fs.writeFileSync(previous, JSON.stringify({ certificateTrust: await ageingTrust() }));
        const run = render(["--config", "examples/openshift-aws.yaml", "--out", path.join(tmp, "expiry"), "--stack-outputs", previous]);
        expect(run.status).toBe(0);
        const outputs = JSON.parse(fs.readFileSync(path.join(tmp, "expiry", "outputs.json"), "utf8")) as Record<string, unknown>;
        // A preview: the certificates this update issues are not known before it runs, as in `pulumi preview`.
        expect(outputs).toMatchObject({ clusterName: "prod-east", certificateExpiry: "[unknown]" });
        expect(fs.existsSync(path.join(tmp, "expiry", "resources.json"))).toBe(true);
        expect(run.stderr).toMatch(
            /warning: the stack's CA \(O=cluster-platform, CN=cluster-platform CA \(prod-east\)\) is inside its renewal window \(since [^)]+\) and expires on \S+, in 20 days: run `pulumi up` 3 times \(this update included\)/,
        );
        expect(run.stderr).toContain("warning: serving certificate subscription-injection/subscription-webhook-cert expired on ");
    });

    test("GIVEN no arguments WHEN run THEN it prints the usage and exits 2", () => {
        const result = render([]);
        expect(result.status).toBe(2);
        expect(result.stderr).toContain("usage: npm run render -- --config");
    });

    test("GIVEN an operator whose CSV needs Kubernetes 1.23.0 WHEN rendered with --kube-version v1.22.17-eks-1 THEN it exits 1 naming both versions, as on such a cluster, and writes nothing", () => {
        const csv = path.join(ROOT, CSV_DIR, "node-maintenance-operator-0.0.1.clusterserviceversion.yaml");
        const config = path.join(tmp, "operator.yaml");
        fs.writeFileSync(
            config,
            stringify({
                cluster: { name: "old", platform: "kubernetes", kubeContext: "old" },
                operators: [{ name: "nm", csv, namespace: "nm", createNamespace: true, targetNamespaces: [] }],
            }),
        );

        const run = render(["--config", config, "--out", path.join(tmp, "old"), "--kube-version", "v1.22.17-eks-1"]);

        expect(run.status).toBe(1);
        expect(run.stderr).toContain(
            `cluster-platform:operators[0].csv: ${JSON.stringify(csv)} spec.minKubeVersion "1.23.0": the cluster's Kubernetes is "v1.22.17-eks-1", and OLM leaves this CSV Pending`,
        );
        expect(fs.existsSync(path.join(tmp, "old"))).toBe(false);
    });
});

describe("--kube-version", () => {
    /** go-semver's own reading of each version string (tests/catalog/oracle, `go run . minkube`): "" when it reads. */
    const GO_PARSE = (require("../catalog/oracle/minkube-cases.expected.json") as { parse: Record<string, string> }).parse;

    test("GIVEN versions as API servers give them WHEN checked THEN each is accepted", () => {
        for (const gitVersion of ["v1.34.1", "v1.29.5-gke.100", "v1.30.4+k3s1", "1.31.0"]) {
            expect([gitVersion, kubeVersionProblem(gitVersion)]).toEqual([gitVersion, undefined]);
        }
    });

    test("GIVEN a value OLM cannot read as a server version WHEN checked THEN the problem names the flag, the value, the form and go-semver's reason", () => {
        for (const read of ["1.0", "1.0.0.0", "10000000000000000000.0.0"]) {
            expect(GO_PARSE[read]).not.toBe("");
            expect(kubeVersionProblem(`v${read}`)).toBe(
                `--kube-version "v${read}": not a Kubernetes version as the API server's GET /version gives it (v<major>.<minor>.<patch>, e.g. v1.29.5 or v1.29.5-gke.100), so OLM could not read it either: ${GO_PARSE[read]}`,
            );
        }
        expect(kubeVersionProblem("latest")).toContain('--kube-version "latest": not a Kubernetes version');
    });
});
