import { bundleDisruptionBudget, effectiveReplicas, needsDisruptionBudget, singlePodWarning } from "../../components/operator/replicas";
import type { StrategyDeployment } from "../../components/operator/csv";

const deployment = (replicas?: number) =>
    ({
        name: "d",
        spec: { ...(replicas === undefined ? {} : { replicas }), selector: {}, template: { spec: { containers: [] } } },
    }) as unknown as StrategyDeployment;

describe("operator replicas and fail-closed webhooks", () => {
    test("GIVEN the CSV's replicas and operators[].config.replicas WHEN combined THEN the override wins, then the CSV, then apps/v1's default of 1", () => {
        expect([
            effectiveReplicas(deployment(), undefined),
            effectiveReplicas(deployment(3), undefined),
            effectiveReplicas(deployment(3), { replicas: 5 }),
        ]).toEqual([1, 3, 5]);
    });

    test("GIVEN webhooks and replicas WHEN a budget is decided THEN only fail-closed webhooks (Fail, or unset as the API defaults it) with two pods or more get one", () => {
        const cases: [string | undefined, number, boolean][] = [
            ["Fail", 1, false],
            ["Fail", 2, true],
            [undefined, 2, true],
            ["Ignore", 3, false],
        ];
        expect(cases.map(([failurePolicy, replicas]) => needsDisruptionBudget([{ failurePolicy }], replicas))).toEqual(
            cases.map(([, , budget]) => budget),
        );
    });

    test("GIVEN one pod behind a fail-closed and a fail-open webhook WHEN warned THEN only the fail-closed one is named; with two pods, or only fail-open webhooks, nothing is said", () => {
        const webhooks = [
            { name: "v.x.io", failurePolicy: "Fail" },
            { name: "m.x.io", failurePolicy: "Ignore" },
        ];
        expect(singlePodWarning("d", webhooks, 1, "operators[2].config")).toBe(
            'deployment "d" runs 1 replica behind webhooks that fail closed (v.x.io): while its pod restarts or is evicted, every call they intercept is refused, and no PodDisruptionBudget is declared (with one pod it could only let the drain through or block it); set operators[2].config.replicas to 2 or more',
        );
        expect([singlePodWarning("d", webhooks, 2, "c"), singlePodWarning("d", [webhooks[1]], 1, "c")]).toEqual([undefined, undefined]);
    });

    test("GIVEN a bundle that ships a PodDisruptionBudget WHEN the stack decides on its own THEN one named after the Deployment or selecting its pods by matchLabels is the bundle's (the stack adds none); others are not", () => {
        const pdb = (name: string, selector: Record<string, unknown>) => ({
            kind: "PodDisruptionBudget",
            name,
            manifest: { spec: { selector } },
        });
        const pods = { app: "op", tier: "webhook" };
        // opentelemetry-operator 0.158.0 and dynatrace-operator 1.10.2 ship a budget named after their webhook Deployment.
        expect(bundleDisruptionBudget([pdb("op-webhook", { matchLabels: { other: "x" } })], "op-webhook", pods)).toBe("op-webhook");
        expect(bundleDisruptionBudget([pdb("any", { matchLabels: { app: "op" } })], "op-webhook", pods)).toBe("any");
        expect([
            bundleDisruptionBudget([pdb("any", { matchLabels: { app: "other" } })], "op-webhook", pods),
            bundleDisruptionBudget(
                [pdb("any", { matchLabels: { app: "op" }, matchExpressions: [{ key: "k", operator: "Exists" }] })],
                "op-webhook",
                pods,
            ),
            bundleDisruptionBudget([{ kind: "Service", name: "op-webhook", manifest: {} }], "op-webhook", pods),
            bundleDisruptionBudget([pdb("any", {})], "op-webhook", pods),
        ]).toEqual([undefined, undefined, undefined, undefined]);
    });
});
