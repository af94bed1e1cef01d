import * as path from "node:path";
import { ClusterState } from "../../scripts/render/cluster-state";
import { flattenConfig } from "../../scripts/render/config-file";
import { renderProgram } from "../../scripts/render/render";
import { MINIMAL } from "../helpers/render";

const program = path.join(__dirname, "..", "fixtures", "reads-program");
const entitlement = {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "etc-pki-entitlement", namespace: "openshift-config" },
    data: { "entitlement.pem": "c2VjcmV0" },
};

describe("offline render of a program", () => {
    test("GIVEN the read object exists WHEN rendered THEN inputs show secrets and unknowns as a preview does, with options", async () => {
        const result = await renderProgram({ config: flattenConfig(MINIMAL), program, cluster: new ClusterState([entitlement]) });
        expect(result.errors).toEqual([]);
        expect(result.ok).toBe(true);
        expect(result.reads).toEqual([
            {
                type: "kubernetes:core/v1:Secret",
                name: "preflight-secret-openshift-config-etc-pki-entitlement",
                id: "openshift-config/etc-pki-entitlement",
                outcome: "found",
            },
        ]);
        expect(result.resources.map((r) => [r.type, r.name, r.read ?? null])).toEqual([
            ["kubernetes:core/v1:Secret", "preflight-secret-openshift-config-etc-pki-entitlement", "openshift-config/etc-pki-entitlement"],
            ["tls:index/privateKey:PrivateKey", "key", null],
            ["kubernetes:core/v1:Namespace", "ns", null],
            ["kubernetes:core/v1:Secret", "tls", null],
            ["kubernetes:core/v1:ConfigMap", "observed", null],
        ]);
        const secret = result.resources[3];
        expect(secret.inputs).toEqual({
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "tls", namespace: "team-a" },
            stringData: "[secret]",
            type: "kubernetes.io/tls",
        });
        expect(secret.options).toEqual({
            dependsOn: ["ns"],
            ignoreChanges: ["metadata.annotations"],
            deleteBeforeReplace: false,
            protect: false,
            retainOnDelete: false,
            additionalSecretOutputs: ["data", "stringData"],
            replaceOnChanges: [],
            aliases: [],
            // The key's PEM goes into stringData: the engine records that as a property dependency.
            propertyDependencies: { stringData: ["key"] },
        });
        // A secret anywhere in a property makes the whole property secret, as the engine does.
        expect(result.resources[4].inputs.data).toBe("[secret]");
        expect(result.manifests.map((m) => m.file)).toEqual([
            "Namespace_core_cluster_team-a.yaml",
            "Secret_core_team-a_tls.yaml",
            "ConfigMap_core_team-a_observed.yaml",
        ]);
    });

    test("GIVEN an unknown-valued input without secrets WHEN rendered THEN it shows as [unknown]", async () => {
        const result = await renderProgram({
            config: flattenConfig(MINIMAL),
            program: path.join(__dirname, "..", "fixtures", "unknown-program"),
        });
        expect(result.errors).toEqual([]);
        expect(result.resources[1].inputs).toEqual({
            apiVersion: "v1",
            data: { publicKey: "[unknown]" },
            kind: "ConfigMap",
            metadata: { name: "observed", namespace: "default" },
        });
    });

    test("GIVEN the read object is missing from --cluster WHEN rendered THEN the render fails as a preview would", async () => {
        const result = await renderProgram({ config: flattenConfig(MINIMAL), program, cluster: new ClusterState([]) });
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
            "kubernetes:core/v1:Secret (preflight-secret-openshift-config-etc-pki-entitlement): Preview failed: resource 'openshift-config/etc-pki-entitlement' does not exist",
        ]);
        expect(result.reads.map((r) => r.outcome)).toEqual(["missing"]);
    });

    test("GIVEN no --cluster WHEN rendered THEN reads are unknown and one warning lists the checks not done", async () => {
        const result = await renderProgram({ config: flattenConfig(MINIMAL), program });
        expect(result.ok).toBe(true);
        expect(result.warnings).toEqual([
            "no --cluster file: 1 pre-flight read not done (values unknown): kubernetes:core/v1:Secret openshift-config/etc-pki-entitlement",
        ]);
    });

    test("GIVEN an invalid object WHEN rendered THEN schema validation fails the render naming object and field", async () => {
        const result = await renderProgram({
            config: flattenConfig(MINIMAL),
            program: path.join(__dirname, "..", "fixtures", "invalid-program"),
        });
        expect(result.ok).toBe(false);
        expect(result.errors).toEqual([
            "ConfigMap (no name): has no metadata.name; Pulumi would auto-name it with a random suffix, so previews would not be deterministic",
            "Deployment team-a/web: spec.replicas: must be integer",
            "Deployment team-a/web: spec.template.spec.containers[0].name: is required",
        ]);
    });

    test("GIVEN a custom resource of a CRD the stack declares WHEN it has a field the schema lacks THEN the render fails", async () => {
        const result = await renderProgram({
            config: flattenConfig(MINIMAL),
            program: path.join(__dirname, "..", "fixtures", "crd-program"),
        });
        expect(result.errors).toEqual([
            "Widget team-a/bad: spec.colour: is not in the schema (the API server would prune it)",
            "Widget team-a/bad: spec.size: a string of 1 character is not of type integer",
        ]);
        expect(result.unvalidatedKinds).toEqual(["Gadget.example.com/v1"]);
    });
});
