import { exampleStacks } from "../../scripts/policy/stacks";
import { renderFile, resourceNamed } from "../helpers/render";

const STACKS = exampleStacks();

/** The capability components of an OpenShift-on-AWS stack with subscriptions and tags (both examples). */
const OPENSHIFT_AWS_COMPONENTS = [
    "admission-webhook:AdmissionWebhook",
    "aws-tags:AwsTags",
    "aws-tags:WebhookImageRepository",
    "certificates:CaInjection",
    "certificates:CertificateAuthority",
    "certificates:Certificates",
    "operator:Operators",
    "subscriptions:SourceSync",
    "subscriptions:SubscriptionInjection",
    "subscriptions:SubscriptionWebhook",
    "webhook-image:WebhookImage",
];

/** The outputs of an OpenShift-on-AWS stack with subscriptions and tags (both examples). */
const OPENSHIFT_AWS_OUTPUTS = [
    "awsInstallTagKeys",
    "awsTaggedStorageClass",
    "awsUserTagKeys",
    "awsWebhookImageRepositoryUrl",
    "certificateExpiry",
    "certificateTrust",
    "clusterAccess",
    "clusterName",
    "installedCrds",
    "platform",
    "subscriptionClusterRoles",
    "subscriptionCrds",
    "subscriptionShareGrants",
    "webhookImageRef",
];

/** What each example installs: its capability components and the stack outputs an admin reads. */
const EXPECTED: Record<string, { components: string[]; outputs: string[] }> = {
    "Pulumi.local.yaml": {
        components: ["certificates:CaInjection", "certificates:Certificates", "operator:Operators"],
        outputs: ["clusterAccess", "clusterName", "platform"],
    },
    "examples/openshift-aws-minimal.yaml": {
        components: OPENSHIFT_AWS_COMPONENTS,
        outputs: OPENSHIFT_AWS_OUTPUTS,
    },
    "examples/openshift-aws.yaml": {
        // The full example also asks for the image registry's storage, and injects CA bundles into existing objects.
        components: [...OPENSHIFT_AWS_COMPONENTS, "aws-tags:ImageRegistryStorage"].sort(),
        outputs: ["awsImageRegistryStorage", ...OPENSHIFT_AWS_OUTPUTS, "caInjection"].sort(),
    },
};

describe("the whole program under mocks, for each example stack", () => {
    test("GIVEN the expectations below THEN they cover exactly the example stacks", () => {
        expect(Object.keys(EXPECTED).sort()).toEqual([...STACKS].sort());
    });

    test.each(STACKS)(
        "GIVEN %s WHEN rendered THEN it succeeds, installs exactly its capabilities and exports exactly its outputs",
        async (file) => {
            const result = await renderFile(file);
            expect(result.problems).toEqual([]);
            expect(result.errors).toEqual([]);
            expect(result.ok).toBe(true);
            const components = [
                ...new Set(
                    result.resources
                        .filter((r) => r.type.startsWith("cluster-platform:"))
                        .map((r) => r.type.slice("cluster-platform:".length)),
                ),
            ];
            expect(components.sort()).toEqual(EXPECTED[file].components);
            expect(Object.keys(result.stackOutputs).sort()).toEqual(EXPECTED[file].outputs);
        },
    );

    test("GIVEN the local stack WHEN rendered THEN the Kubernetes provider renders to ./out/local and AWS is off", async () => {
        const result = await renderFile("Pulumi.local.yaml");
        // An empty kubeconfig beside the render directory: provider 4.25.0 refuses a kubeconfig with
        // renderYamlToDirectory, which the SDK would fill from $KUBECONFIG (components/shared/cluster.ts).
        expect(resourceNamed(result, "pulumi:providers:kubernetes", "kubernetes").inputs).toEqual({
            enableServerSideApply: "true",
            kubeconfig: "",
            renderYamlToDirectory: "out/local",
        });
        expect(result.resources.filter((r) => r.type.startsWith("aws:") || r.type === "pulumi:providers:aws")).toEqual([]);
        expect(result.stackOutputs).toEqual({ clusterName: "local", platform: "kubernetes", clusterAccess: "render-to-directory" });
    });
});
