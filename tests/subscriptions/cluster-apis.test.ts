/**
 * Every supported cluster (issue 27 point 5): the optional APIs subscription injection uses are
 * read from discovery before anything is registered; the ValidatingAdmissionPolicy falls back to
 * v1beta1 or is skipped with a warning, and the console samples are skipped when the Console
 * capability is off. The render answers discovery from `servedApis` as an API server would.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import { servedPlurals } from "../../components/shared/discovery";
import { CLUSTER_BUNDLE_POLICY_NAME } from "../../components/subscriptions/cluster-bundle-policy";
import { chooseSubscriptionApis, NO_CONSOLE_WARNING, UNGUARDED_WARNING } from "../../components/subscriptions/cluster-apis";
import { ClusterState, KubeObject } from "../../scripts/render/cluster-state";
import { manifestsNamed, renderFile, resourcesOfType, ROOT } from "../helpers/render";

const EXAMPLE = "examples/openshift-aws.yaml";
const CLUSTER_FILE = path.join(ROOT, "tests/fixtures/certificates/openshift-aws.cluster.yaml");
const clusterObjects = (): KubeObject[] => parseAllDocuments(fs.readFileSync(CLUSTER_FILE, "utf8")).map((d) => d.toJS() as KubeObject);

const POLICY = ["validatingadmissionpolicies", "validatingadmissionpolicybindings"];
const CONSOLE = { "console.openshift.io/v1": ["consoleyamlsamples"] };

describe("choosing the APIs from discovery (pure)", () => {
    const served = (table: Record<string, string[]>) =>
        Object.fromEntries(Object.entries(table).map(([gv, names]) => [gv, new Set(names)]));

    test.each([
        [
            "v1 and v1beta1 served (1.30+)",
            { "admissionregistration.k8s.io/v1": POLICY, "admissionregistration.k8s.io/v1beta1": POLICY },
            "v1",
        ],
        ["only v1beta1 served (1.28-1.29 with the beta API on)", { "admissionregistration.k8s.io/v1beta1": POLICY }, "v1beta1"],
        ["v1 serves webhooks but not policies (1.27)", { "admissionregistration.k8s.io/v1": ["mutatingwebhookconfigurations"] }, undefined],
        ["only the policy without its binding", { "admissionregistration.k8s.io/v1": ["validatingadmissionpolicies"] }, undefined],
        ["nothing", {}, undefined],
    ])("GIVEN %s WHEN chosen THEN the policy version is %s", (_case, table, version) => {
        expect(chooseSubscriptionApis(served(table))).toEqual({ admissionPolicyVersion: version, consoleSamples: false });
    });

    test("GIVEN the console group serves ConsoleYAMLSamples WHEN chosen THEN samples are on", () => {
        expect(chooseSubscriptionApis(served(CONSOLE)).consoleSamples).toBe(true);
    });

    test("GIVEN an APIResourceList WHEN read THEN its plurals are kept and subresources left out", () => {
        const body = {
            kind: "APIResourceList",
            resources: [{ name: "validatingadmissionpolicies" }, { name: "validatingadmissionpolicies/status" }, { verbs: [] }],
        };
        expect([...servedPlurals(body)]).toEqual(["validatingadmissionpolicies"]);
        expect([...servedPlurals(null)]).toEqual([]);
    });
});

describe("the rendered example on older or trimmed clusters", () => {
    const render = (servedApis: Record<string, string[]>) =>
        renderFile(EXAMPLE, { cluster: new ClusterState(clusterObjects()), servedApis });

    test("GIVEN a cluster serving ValidatingAdmissionPolicy only at v1beta1 WHEN rendered THEN the policy and binding are v1beta1 objects and the ClusterBundles wait for them", async () => {
        const result = await render({ "admissionregistration.k8s.io/v1beta1": POLICY, ...CONSOLE });
        expect(result.errors).toEqual([]);
        expect(manifestsNamed(result, "ValidatingAdmissionPolicy", CLUSTER_BUNDLE_POLICY_NAME).map((m) => m.apiVersion)).toEqual([
            "admissionregistration.k8s.io/v1beta1",
        ]);
        expect(manifestsNamed(result, "ValidatingAdmissionPolicyBinding", CLUSTER_BUNDLE_POLICY_NAME).map((m) => m.apiVersion)).toEqual([
            "admissionregistration.k8s.io/v1beta1",
        ]);
        expect(
            resourcesOfType(result, "kubernetes:admissionregistration.k8s.io/v1beta1:ValidatingAdmissionPolicy").map((r) => r.name),
        ).toEqual([CLUSTER_BUNDLE_POLICY_NAME]);
        const bundle = resourcesOfType(result, "kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle")[0];
        expect(bundle.options.dependsOn.filter((name) => name === CLUSTER_BUNDLE_POLICY_NAME)).toHaveLength(2);
        expect(result.warnings).not.toContain(UNGUARDED_WARNING);
    });

    test("GIVEN a cluster serving no ValidatingAdmissionPolicy API WHEN rendered THEN no policy is declared and one warning says what is unguarded", async () => {
        const result = await render(CONSOLE);
        expect(result.errors).toEqual([]);
        expect(manifestsNamed(result, "ValidatingAdmissionPolicy", CLUSTER_BUNDLE_POLICY_NAME)).toEqual([]);
        expect(manifestsNamed(result, "ValidatingAdmissionPolicyBinding", CLUSTER_BUNDLE_POLICY_NAME)).toEqual([]);
        expect(result.warnings.filter((warning) => warning.includes(UNGUARDED_WARNING))).toHaveLength(1);
        expect(resourcesOfType(result, "kubernetes:subscription.openshift.io/v1alpha1:ClusterBundle")).toHaveLength(1);
    });

    test("GIVEN OpenShift with the Console capability off WHEN rendered THEN no ConsoleYAMLSample is declared and one warning says so", async () => {
        const result = await render({ "admissionregistration.k8s.io/v1": POLICY });
        expect(result.errors).toEqual([]);
        expect(result.manifests.filter((m) => m.object.kind === "ConsoleYAMLSample")).toEqual([]);
        expect(result.warnings.filter((warning) => warning.includes(NO_CONSOLE_WARNING))).toHaveLength(1);
    });

    test("GIVEN OpenShift with the Console WHEN rendered THEN the ClusterBundle sample points at openshift-config-managed, where OpenShift keeps the entitlement", async () => {
        const result = await render({ "admissionregistration.k8s.io/v1": POLICY, ...CONSOLE });
        const sample = manifestsNamed(result, "ConsoleYAMLSample", "subscription-cluster-bundle-example")[0] as { spec: { yaml: string } };
        expect(sample.spec.yaml).toContain("namespace: openshift-config-managed");
        expect(sample.spec.yaml).not.toContain("namespace: openshift-config\n");
    });
});
