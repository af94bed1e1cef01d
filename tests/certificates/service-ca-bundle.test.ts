import { OPERATOR_CONDITION_CRD, SAMPLE_CSVS } from "../helpers/operators";
import { renderConfig, resourcesOfType } from "../helpers/render";

const PEM = "-----BEGIN CERTIFICATE-----\nMIIBservice-ca\n-----END CERTIFICATE-----\n";
const PEM_BASE64 = Buffer.from(PEM, "utf8").toString("base64");
const VALIDATING = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration";
const MUTATING = "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration";
const CONVERSION_PATCH = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch";

const STACK = {
    cluster: { name: "test", platform: "openshift", kubeContext: "test" },
    certificates: { mode: "service-ca" },
    operators: [{ name: "widgets", csv: SAMPLE_CSVS.widgets, namespace: "widget-operator", targetNamespaces: [] }],
};
const PROXY = { apiVersion: "config.openshift.io/v1", kind: "Proxy", metadata: { name: "cluster" }, spec: {}, status: {} };
/** What OpenShift publishes in every namespace, with service-ca's bundle injected. */
const SERVICE_CA_CONFIGMAP = {
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: {
        name: "openshift-service-ca.crt",
        namespace: "default",
        annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
    },
    data: { "service-ca.crt": PEM },
};

type Webhooked = { metadata: { annotations?: Record<string, string> }; webhooks: { clientConfig: { caBundle?: string } }[] };

describe("service-ca mode: webhook configurations are verified from their creation (issue 28, point 6)", () => {
    test("GIVEN service-ca's bundle published in default/openshift-service-ca.crt WHEN the operator's webhooks are rendered THEN every webhook carries that bundle, the configuration keeps the inject annotation and ignores no caBundle, and the CRD conversion patch still leaves its bundle to service-ca", async () => {
        const result = await renderConfig(STACK, { cluster: [PROXY, OPERATOR_CONDITION_CRD, SERVICE_CA_CONFIGMAP] });
        expect(result.errors).toEqual([]);
        const configurations = [...resourcesOfType(result, VALIDATING), ...resourcesOfType(result, MUTATING)];
        expect(configurations.length).toBe(2);
        for (const configuration of configurations) {
            const object = configuration.inputs as unknown as Webhooked;
            expect(object.webhooks.map((w) => w.clientConfig.caBundle)).toEqual(object.webhooks.map(() => PEM_BASE64));
            expect(object.metadata.annotations?.["service.beta.openshift.io/inject-cabundle"]).toBe("true");
            expect(configuration.options.ignoreChanges ?? []).not.toContain("webhooks[*].clientConfig.caBundle");
        }
        const [conversion] = resourcesOfType(result, CONVERSION_PATCH);
        expect(conversion.options.ignoreChanges).toEqual(["spec.conversion.webhook.clientConfig.caBundle"]);
        expect(result.warnings.filter((w) => w.includes("service-ca's bundle"))).toEqual([]);
    });

    test("GIVEN no readable bundle WHEN rendered THEN the configurations carry the annotation only, ignore the field service-ca writes, and one warning says what that means", async () => {
        const result = await renderConfig(STACK, { cluster: [PROXY, OPERATOR_CONDITION_CRD] });
        expect(result.errors).toEqual([]);
        for (const configuration of [...resourcesOfType(result, VALIDATING), ...resourcesOfType(result, MUTATING)]) {
            const object = configuration.inputs as unknown as Webhooked;
            expect(object.webhooks.map((w) => w.clientConfig.caBundle)).toEqual(object.webhooks.map(() => undefined));
            expect(configuration.options.ignoreChanges).toContain("webhooks[*].clientConfig.caBundle");
        }
        expect(result.warnings.filter((w) => w.includes("service-ca's bundle"))).toEqual([
            `service-ca's bundle could not be read from ConfigMap default/openshift-service-ca.crt ("service-ca.crt"): webhook configurations created by this update get the inject annotation only and refuse calls until service-ca injects its bundle`,
        ]);
    });
});
