import { CSV_DIR, objectsOf, readCsv, renderOperators, Yaml } from "../helpers/operators";

/** A Service's selector matches a pod when every selector label is on the pod (kubernetes' equality-based selector). */
const selects = (selector: Record<string, string>, podLabels: Record<string, string> | undefined) =>
    Object.entries(selector).every(([key, value]) => podLabels?.[key] === value);

const FILES = {
    argocd: "argocd-operator-0.19.0.clusterserviceversion.yaml",
    "node-maintenance": "node-maintenance-operator-0.0.1.clusterserviceversion.yaml",
    opentelemetry: "opentelemetry-operator-0.158.0.clusterserviceversion.yaml",
};

describe("webhook Services in a namespace shared by several operators (openshift-operators)", () => {
    test("GIVEN argocd, node-maintenance and opentelemetry in one namespace, all three selecting control-plane: controller-manager WHEN rendered THEN each webhook Service selects the pods of exactly its own Deployment", async () => {
        // The premise: the three CSVs' deployments share one selector label, so OLM's Services (selector = matchLabels) would cross.
        const shared = Object.values(FILES).map(
            (file) =>
                readCsv(file).spec.install.spec.deployments.find((d: Yaml) => d.spec.selector.matchLabels?.["control-plane"])?.spec.selector
                    .matchLabels["control-plane"],
        );
        expect(shared).toEqual(["controller-manager", "controller-manager", "controller-manager"]);

        const result = await renderOperators(
            Object.entries(FILES).map(([name, file]) => ({
                name,
                csv: `${CSV_DIR}/${file}`,
                namespace: "openshift-operators",
                targetNamespaces: [],
            })),
        );
        expect(result.errors).toEqual([]);
        const deployments = objectsOf(result, "Deployment");
        const services = objectsOf(result, "Service");
        expect(services.length).toBe(3);
        const selected = Object.fromEntries(
            services.map((service) => [
                service.metadata.name,
                deployments.filter((d) => selects(service.spec.selector, d.spec.template.metadata.labels)).map((d) => d.metadata.name),
            ]),
        );
        expect(selected).toEqual({
            "argocd-operator-controller-manager-service": ["argocd-operator-controller-manager"],
            "node-maintenance-operator-controller-manager-service": ["node-maintenance-operator-controller-manager"],
            "opentelemetry-operator-controller-manager-service": ["opentelemetry-operator-controller-manager"],
        });
        // Each Deployment's own selector is the CSV's, unchanged (a Deployment's selector is immutable, so
        // changing it would replace every existing operator Deployment), and still matches its pod template.
        const csvSelectors = Object.fromEntries(
            Object.values(FILES).flatMap((file) => readCsv(file).spec.install.spec.deployments.map((d: Yaml) => [d.name, d.spec.selector])),
        );
        expect(Object.fromEntries(deployments.map((d) => [d.metadata.name, d.spec.selector]))).toEqual(csvSelectors);
        for (const d of deployments) {
            expect(selects(d.spec.selector.matchLabels, d.spec.template.metadata.labels)).toBe(true);
        }
        // And the argocd Deployment's own selector alone would still reach the other two operators' pods:
        // only the Service narrows to one Deployment, through the label on the pods.
        const argocd = deployments.find((d) => d.metadata.name === "argocd-operator-controller-manager")!;
        expect(
            deployments
                .filter((d) => selects(argocd.spec.selector.matchLabels, d.spec.template.metadata.labels))
                .map((d) => d.metadata.name),
        ).toEqual([
            "argocd-operator-controller-manager",
            "node-maintenance-operator-controller-manager",
            "opentelemetry-operator-controller-manager",
        ]);
    });
});
