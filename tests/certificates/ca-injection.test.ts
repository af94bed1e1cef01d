/**
 * caInjection: CA bundles for existing cluster objects, as `npm run render --cluster` shows
 * them: one read and one server-side-apply patch per object, writing only the bundle field
 * (self-signed) or the injector's annotation (delegated modes).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { formatReport } from "../../components/shared/problems";
import { ClusterState } from "../../scripts/render/cluster-state";
import { flattenConfig } from "../../scripts/render/config-file";
import { renderProgram, RenderResult } from "../../scripts/render/render";
import { renderFile, resourcesOfType, ROOT } from "../helpers/render";
import { tsxCommand } from "../helpers/tsx";

const FIXTURES = path.join("tests", "fixtures", "certificates");
const existing = ClusterState.fromFile(path.join(ROOT, FIXTURES, "existing-objects.yaml"));

/** The config file of one mode (what a reviewer renders with `npm run render`). */
function renderMode(mode: "self-signed" | "service-ca" | "cert-manager"): Promise<RenderResult> {
    return renderFile(path.join(FIXTURES, `${mode}.yaml`), { cluster: existing });
}

const ENTRY_IDS = [
    "v1.metrics.example.io",
    "v1.apps",
    "team-a/trusted-ca",
    "team-a/service-ca-only",
    "rules.policy.example.io",
    "notes.policy.example.io",
    "policy-defaults",
    "injected-by-service-ca",
];

/** The monitoring team's CA, as the fixture publishes it (read independently of the code under test). */
const METRICS_CA = (existing.find("kubernetes:core/v1:ConfigMap", "monitoring/metrics-ca")!.data as Record<string, string>)["ca.crt"];

function render(
    certificates: Record<string, unknown>,
    entries: Record<string, unknown>[],
    platform: string,
    cluster: Record<string, unknown>,
): Promise<RenderResult> {
    return renderProgram({
        config: flattenConfig({
            cluster: { name: "prod", platform, ...(cluster.renderYamlToDirectory ? cluster : { kubeContext: "test", ...cluster }) },
            certificates,
            caInjection: entries,
        }),
        cluster: existing,
    });
}

/** Patches as `[file, object]`, in registration order. */
function patches(result: RenderResult): [string, unknown][] {
    return result.manifests.filter((m) => m.patch).map((m) => [m.file, m.object]);
}

const FORCE = { "pulumi.com/patchForce": "true" };

/** The group and kind every CRD patch carries (the fixture CRDs', existing-objects.yaml): the provider's Check needs them. */
const RULE_IDENTITY = { group: "policy.example.io", names: { kind: "Rule" } };
const NOTES_IDENTITY_PATCH = {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "notes.policy.example.io" },
    spec: { group: "policy.example.io", names: { kind: "Note" } },
};

const NOTHING_WRITTEN_WARNINGS = [
    'caInjection: APIService "v1.apps" is served locally by the API server (no spec.service): there is no caBundle to set; nothing written',
    'caInjection: CustomResourceDefinition "notes.policy.example.io" has spec.conversion.strategy "None", not "Webhook": it calls no conversion webhook, so there is no caBundle to set; nothing written',
];

describe("caInjection in mode self-signed", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderMode("self-signed");
    });

    test("GIVEN existing objects WHEN rendered THEN each is read, and each patch sets only its bundle field(s)", () => {
        expect(result.errors).toEqual([]);
        // Reads answer in any order; the resources declared from them come in config order.
        expect(result.reads.map((r) => `${r.id} ${r.outcome}`).sort()).toEqual(
            [...ENTRY_IDS, "monitoring/metrics-ca"].map((id) => `${id} found`).sort(),
        );
        expect(patches(result)).toEqual([
            [
                "patches/APIService_apiregistration.k8s.io_cluster_v1.metrics.example.io.yaml",
                // Served by the monitoring team: the CA it publishes, not the stack's.
                {
                    apiVersion: "apiregistration.k8s.io/v1",
                    kind: "APIService",
                    metadata: { annotations: FORCE, name: "v1.metrics.example.io" },
                    spec: { caBundle: Buffer.from(METRICS_CA).toString("base64") },
                },
            ],
            [
                "patches/APIService_apiregistration.k8s.io_cluster_v1.apps.yaml",
                { apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", metadata: { name: "v1.apps" } },
            ],
            [
                "patches/ConfigMap_core_team-a_trusted-ca.yaml",
                {
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    metadata: { annotations: FORCE, name: "trusted-ca", namespace: "team-a" },
                    data: { "service-ca.crt": "[unknown]" },
                },
            ],
            [
                "patches/ConfigMap_core_team-a_service-ca-only.yaml",
                {
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    metadata: { annotations: FORCE, name: "service-ca-only", namespace: "team-a" },
                    data: { "service-ca.crt": "[unknown]" },
                },
            ],
            [
                "patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_rules.policy.example.io.yaml",
                {
                    apiVersion: "apiextensions.k8s.io/v1",
                    kind: "CustomResourceDefinition",
                    metadata: { annotations: FORCE, name: "rules.policy.example.io" },
                    spec: { ...RULE_IDENTITY, conversion: { webhook: { clientConfig: { caBundle: "[unknown]" } } } },
                },
            ],
            ["patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_notes.policy.example.io.yaml", NOTES_IDENTITY_PATCH],
            [
                "patches/MutatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy-defaults.yaml",
                {
                    apiVersion: "admissionregistration.k8s.io/v1",
                    kind: "MutatingWebhookConfiguration",
                    metadata: { annotations: FORCE, name: "policy-defaults" },
                    webhooks: [
                        { clientConfig: { caBundle: "[unknown]" }, name: "pods.defaults.example.io" },
                        { clientConfig: { caBundle: "[unknown]" }, name: "jobs.defaults.example.io" },
                    ],
                },
            ],
            [
                "patches/ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_injected-by-service-ca.yaml",
                {
                    apiVersion: "admissionregistration.k8s.io/v1",
                    kind: "ValidatingWebhookConfiguration",
                    metadata: { name: "injected-by-service-ca" },
                },
            ],
        ]);
    });

    test("GIVEN two objects served by policy/policy with caSource.issue WHEN rendered THEN the stack issues that Service's serving certificate once, into the named Secret", () => {
        const secrets = resourcesOfType(result, "kubernetes:core/v1:Secret").filter((r) => r.read === undefined);
        expect(secrets.map((r) => r.inputs.metadata)).toEqual([
            expect.objectContaining({ name: "policy-serving-cert", namespace: "policy" }),
        ]);
        expect(resourcesOfType(result, "tls:index/certRequest:CertRequest").map((r) => (r.inputs.dnsNames as string[])[0])).toEqual([
            "policy.policy",
        ]);
    });

    test("GIVEN objects with nothing to trust or another injector WHEN rendered THEN a warning names each and nothing is written", () => {
        expect(result.warnings.sort()).toEqual([
            ...NOTHING_WRITTEN_WARNINGS,
            'caInjection: ValidatingWebhookConfiguration "injected-by-service-ca": it carries service.beta.openshift.io/inject-cabundle="TRUE", so OpenShift\'s service-ca writes its bundle; writing the self-signed bundle too would make the two overwrite each other, so nothing is written (remove the annotation, or the entry)',
        ]);
    });

    test("GIVEN existing objects WHEN rendered THEN the caInjection stack output says, per object, whether the stack writes its bundle: exactly the objects whose patch sets a field", () => {
        const written = "bundle written by the stack";
        expect(result.stackOutputs.caInjection).toEqual({
            "APIService v1.metrics.example.io": written,
            "APIService v1.apps": "nothing written",
            "ConfigMap team-a/trusted-ca": written,
            "ConfigMap team-a/service-ca-only": written,
            "CustomResourceDefinition rules.policy.example.io": written,
            "CustomResourceDefinition notes.policy.example.io": "nothing written",
            "MutatingWebhookConfiguration policy-defaults": written,
            "ValidatingWebhookConfiguration injected-by-service-ca": "nothing written",
        });
        // The same set, from the patches: a patch that writes sets more than its identity.
        const setsAField = patches(result)
            .filter(([, object]) => JSON.stringify(object).includes("caBundle") || JSON.stringify(object).includes("service-ca.crt"))
            .map(([file]) => file);
        expect(setsAField).toHaveLength(Object.values(result.stackOutputs.caInjection as object).filter((v) => v === written).length);
    });
});

describe("caInjection in mode service-ca", () => {
    let result: RenderResult;
    beforeAll(async () => {
        result = await renderMode("service-ca");
    });

    test("GIVEN existing objects WHEN rendered THEN each patch sets only service-ca's request annotation, and no caBundle", () => {
        expect(result.errors).toEqual([]);
        const annotated = { "pulumi.com/patchForce": "true", "service.beta.openshift.io/inject-cabundle": "true" };
        expect(patches(result)).toEqual([
            [
                "patches/APIService_apiregistration.k8s.io_cluster_v1.metrics.example.io.yaml",
                {
                    apiVersion: "apiregistration.k8s.io/v1",
                    kind: "APIService",
                    metadata: { annotations: annotated, name: "v1.metrics.example.io" },
                },
            ],
            [
                "patches/APIService_apiregistration.k8s.io_cluster_v1.apps.yaml",
                { apiVersion: "apiregistration.k8s.io/v1", kind: "APIService", metadata: { name: "v1.apps" } },
            ],
            [
                "patches/ConfigMap_core_team-a_service-ca-only.yaml",
                { apiVersion: "v1", kind: "ConfigMap", metadata: { annotations: annotated, name: "service-ca-only", namespace: "team-a" } },
            ],
            [
                "patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_rules.policy.example.io.yaml",
                {
                    apiVersion: "apiextensions.k8s.io/v1",
                    kind: "CustomResourceDefinition",
                    metadata: { annotations: annotated, name: "rules.policy.example.io" },
                    spec: RULE_IDENTITY,
                },
            ],
            ["patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_notes.policy.example.io.yaml", NOTES_IDENTITY_PATCH],
            [
                "patches/MutatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy-defaults.yaml",
                {
                    apiVersion: "admissionregistration.k8s.io/v1",
                    kind: "MutatingWebhookConfiguration",
                    metadata: { annotations: annotated, name: "policy-defaults" },
                },
            ],
            [
                "patches/ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_injected-by-service-ca.yaml",
                {
                    apiVersion: "admissionregistration.k8s.io/v1",
                    kind: "ValidatingWebhookConfiguration",
                    metadata: { annotations: annotated, name: "injected-by-service-ca" },
                },
            ],
        ]);
        expect(result.reads.map((r) => r.id)).not.toContain("team-a/openshift-service-ca.crt");
        expect(result.warnings.sort()).toEqual(NOTHING_WRITTEN_WARNINGS);
    });
});

describe("caInjection in mode cert-manager", () => {
    test("GIVEN existing objects, each naming its Certificate WHEN rendered THEN each patch sets only cainjector's inject-ca-from", async () => {
        const result = await renderMode("cert-manager");
        expect(result.errors).toEqual([]);
        const injectFrom = { "cert-manager.io/inject-ca-from": "policy/policy-webhook-cert", "pulumi.com/patchForce": "true" };
        expect(patches(result).map(([file, object]) => [file, (object as { metadata: unknown }).metadata])).toEqual([
            [
                "patches/APIService_apiregistration.k8s.io_cluster_v1.metrics.example.io.yaml",
                {
                    annotations: { ...injectFrom, "cert-manager.io/inject-ca-from": "monitoring/metrics-cert" },
                    name: "v1.metrics.example.io",
                },
            ],
            ["patches/APIService_apiregistration.k8s.io_cluster_v1.apps.yaml", { name: "v1.apps" }],
            [
                "patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_rules.policy.example.io.yaml",
                { annotations: injectFrom, name: "rules.policy.example.io" },
            ],
            [
                "patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_notes.policy.example.io.yaml",
                { name: "notes.policy.example.io" },
            ],
            [
                "patches/MutatingWebhookConfiguration_admissionregistration.k8s.io_cluster_policy-defaults.yaml",
                { annotations: injectFrom, name: "policy-defaults" },
            ],
            // service-ca's request means nothing on plain Kubernetes: no competing injector there.
            [
                "patches/ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_injected-by-service-ca.yaml",
                { annotations: { ...injectFrom, "cert-manager.io/inject-ca-from": "audit/audit-cert" }, name: "injected-by-service-ca" },
            ],
        ]);
        // Beyond identity only a CRD's group and kind, which the provider's Check needs on every CRD patch.
        expect(
            patches(result)
                .filter(
                    ([, object]) =>
                        Object.keys(object as object)
                            .sort()
                            .join() !== "apiVersion,kind,metadata",
                )
                .map(([file, object]) => [file, (object as { spec: unknown }).spec]),
        ).toEqual([
            ["patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_rules.policy.example.io.yaml", RULE_IDENTITY],
            ["patches/CustomResourceDefinition_apiextensions.k8s.io_cluster_notes.policy.example.io.yaml", NOTES_IDENTITY_PATCH.spec],
        ]);
        expect(result.warnings.sort()).toEqual(NOTHING_WRITTEN_WARNINGS);
        const annotated = "annotated for cert-manager's cainjector, which writes the bundle";
        expect(result.stackOutputs.caInjection).toEqual({
            "APIService v1.metrics.example.io": annotated,
            "APIService v1.apps": "nothing written",
            "CustomResourceDefinition rules.policy.example.io": annotated,
            "CustomResourceDefinition notes.policy.example.io": "nothing written",
            "MutatingWebhookConfiguration policy-defaults": annotated,
            "ValidatingWebhookConfiguration injected-by-service-ca": annotated,
        });
    });
});

/**
 * A read-time refusal is an error thrown where the patch body is computed, which fails the
 * program as `pulumi preview` fails it; jest's sandboxed `process` does not see that rejection,
 * so these run the render CLI, as an admin would.
 */
function renderCli(
    entries: Record<string, unknown>[],
    mode = "self-signed",
): { status: number | null; errors: string[]; patchFiles: string[] } {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "ca-source-"));
    try {
        const config = path.join(tmp, "stack.yaml");
        const document = {
            config: {
                "cluster-platform:cluster": { name: "prod", platform: "openshift", kubeContext: "test" },
                "cluster-platform:certificates": { mode },
                "cluster-platform:caInjection": entries,
            },
        };
        fs.writeFileSync(config, stringify(document));
        const out = path.join(tmp, "out");
        const run = spawnSync(
            ...tsxCommand(path.join(ROOT, "scripts", "render", "cli.ts"), [
                "--config",
                config,
                "--cluster",
                path.join(FIXTURES, "existing-objects.yaml"),
                "--out",
                out,
            ]),
            {
                cwd: ROOT,
                encoding: "utf8",
            },
        );
        const patchDir = path.join(out, "kubernetes", "patches");
        return {
            status: run.status,
            errors: run.stderr.split("\n").filter((line) => line.startsWith("error: ")),
            patchFiles: fs.existsSync(patchDir) ? fs.readdirSync(patchDir).sort() : [],
        };
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
}

/** The CLI's line for an error thrown while the patch body is computed (the SDK names the first property that needs it). */
/** A planning error, attributed to the CaInjection component (a ResourceError, shown under its row). */
const patchError = (message: string, property = "metadata") =>
    `error: cluster-platform:certificates:CaInjection (certificates-ca-injection): error serializing property "${property}": ${message}`;

describe("caInjection: a CA bundle only where it is the right one", () => {
    test("GIVEN a self-signed webhook configuration served by another team's Service and no caSource WHEN rendered THEN it fails naming the object and its backend, and writes nothing", () => {
        const result = renderCli([{ kind: "MutatingWebhookConfiguration", name: "policy-defaults" }]);
        expect(result.status).toBe(1);
        expect(result.errors).toEqual([
            patchError(
                'caInjection: MutatingWebhookConfiguration "policy-defaults": webhook "pods.defaults.example.io" is served by Service policy/policy, webhook "jobs.defaults.example.io" is served by Service policy/policy, and caInjection[].caSource does not say where its CA comes from; in self-signed mode the stack writes its own CA only where it issues the backend\'s certificate ({issue: {service: "<namespace>/<name>", secretName}}) or into the CA a ConfigMap names ({configMap: {name: "<namespace>/<name>", key}}), never into another team\'s backend by default',
            ),
        ]);
        expect(result.patchFiles).toEqual([]);
    });

    test("GIVEN caSource.issue naming another Service than the object's backend WHEN rendered THEN it fails naming the backend", () => {
        const result = renderCli([
            {
                kind: "APIService",
                name: "v1.metrics.example.io",
                caSource: { issue: { service: "policy/policy", secretName: "policy-serving-cert" } },
            },
        ]);
        expect(result.errors).toEqual([
            patchError(
                'caInjection: APIService "v1.metrics.example.io": spec.service is served by Service monitoring/metrics, not by caSource.issue.service "policy/policy", whose certificate the stack issues; the stack\'s CA would be the wrong one there (list the object once per backend it trusts, or name the CA it needs with caSource.configMap)',
            ),
        ]);
    });

    test("GIVEN service-ca mode and a ConfigMap holding other keys WHEN rendered THEN it is refused: no copy of the service CA that could go stale", () => {
        const result = renderCli([{ kind: "ConfigMap", name: "trusted-ca", namespace: "team-a" }], "service-ca");
        expect(result.status).toBe(1);
        expect(result.errors).toEqual([
            patchError(
                'caInjection: ConfigMap "team-a/trusted-ca" holds other keys (corporate-root.crt), which service-ca\'s injection would delete (it replaces the whole data), and a copy made by the stack would go stale when service-ca rotates its CA; give the bundle a ConfigMap of its own, or point its consumers at team-a/openshift-service-ca.crt, which OpenShift keeps current',
                "data",
            ),
        ]);
    });

    test("GIVEN caSource.issue naming a Service in a namespace that does not exist WHEN rendered THEN a config error names it before anything is registered", async () => {
        const result = await render(
            { mode: "self-signed" },
            [
                {
                    kind: "MutatingWebhookConfiguration",
                    name: "policy-defaults",
                    caSource: { issue: { service: "gatekeeper/policy", secretName: "policy-tls" } },
                },
            ],
            "openshift",
            {},
        );
        expect(result.errors).toEqual([
            formatReport([
                {
                    path: "caInjection[0].caSource.issue.service",
                    message:
                        'Namespace "gatekeeper" does not exist in the cluster: the stack writes the serving certificate of Service "gatekeeper/policy" to Secret "gatekeeper/policy-tls" there, and never creates the namespace',
                },
            ]),
        ]);
        expect(result.resources).toEqual([]);
    });

    test("GIVEN a trust-bundle ConfigMap and no caSource WHEN rendered THEN it gets the stack's CA (it has no backend)", async () => {
        const result = await render(
            { mode: "self-signed" },
            [{ kind: "ConfigMap", name: "service-ca-only", namespace: "team-a" }],
            "openshift",
            {},
        );
        expect(result.errors).toEqual([]);
        expect(patches(result).map(([file]) => file)).toEqual(["patches/ConfigMap_core_team-a_service-ca-only.yaml"]);
    });
});

describe("caInjection without a cluster", () => {
    test("GIVEN the provider renders YAML to a directory WHEN rendered THEN nothing is read or patched and one warning names every entry", async () => {
        const entries = [
            { kind: "APIService", name: "v1.metrics.example.io" },
            { kind: "APIService", name: "v1.apps" },
            { kind: "ConfigMap", name: "trusted-ca", namespace: "team-a" },
        ];
        const result = await render({ mode: "self-signed" }, entries, "openshift", { renderYamlToDirectory: "out/yaml" });
        expect(result.errors).toEqual([]);
        expect(result.reads).toEqual([]);
        expect(patches(result)).toEqual([]);
        expect(resourcesOfType(result, "tls:index/selfSignedCert:SelfSignedCert")).toEqual([]);
        expect(result.warnings).toEqual([
            'skipped caInjection into APIService "v1.metrics.example.io", APIService "v1.apps", ConfigMap "team-a/trusted-ca": the Kubernetes provider renders YAML to a directory (cluster.renderYamlToDirectory), so there is no cluster to read or patch',
        ]);
    });

    test("GIVEN an entry naming an object that does not exist WHEN rendered THEN the render fails as a preview would", async () => {
        const result = await render({ mode: "service-ca" }, [{ kind: "APIService", name: "v1.missing.example.io" }], "openshift", {});
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
            "kubernetes:apiregistration.k8s.io/v1:APIService (ca-injection-read-apiservice-v1.missing.example.io): Preview failed: resource 'v1.missing.example.io' does not exist",
        ]);
    });
});

describe("the example stack", () => {
    test("GIVEN examples/openshift-aws.yaml and its cluster objects WHEN rendered THEN the ConfigMap keeps its keys and both webhooks get the bundle", async () => {
        const result = await renderFile("examples/openshift-aws.yaml", {
            cluster: ClusterState.fromFile(path.join(ROOT, FIXTURES, "openshift-aws.cluster.yaml")),
        });
        expect(result.errors).toEqual([]);
        // The example also patches OLMConfig (olm.manageOLMConfig) and Infrastructure (aws day-2 tags); only caInjection's patches are compared here.
        expect(
            patches(result).filter(([file]) => !file.startsWith("patches/OLMConfig_") && !file.startsWith("patches/Infrastructure_")),
        ).toEqual([
            [
                "patches/ConfigMap_core_openshift-config_trusted-webhook-ca.yaml",
                {
                    apiVersion: "v1",
                    kind: "ConfigMap",
                    metadata: { annotations: FORCE, name: "trusted-webhook-ca", namespace: "openshift-config" },
                    data: { "service-ca.crt": "[unknown]" },
                },
            ],
            [
                "patches/ValidatingWebhookConfiguration_admissionregistration.k8s.io_cluster_example-policy-webhook.yaml",
                {
                    apiVersion: "admissionregistration.k8s.io/v1",
                    kind: "ValidatingWebhookConfiguration",
                    metadata: { annotations: FORCE, name: "example-policy-webhook" },
                    webhooks: [
                        { clientConfig: { caBundle: "[unknown]" }, name: "pods.policy.example.io" },
                        { clientConfig: { caBundle: "[unknown]" }, name: "deployments.policy.example.io" },
                    ],
                },
            ],
        ]);
    });
});
