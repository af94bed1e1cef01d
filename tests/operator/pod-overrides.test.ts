import fc from "fast-check";
import { configProblemLines } from "../helpers/config-problems";
import { validateStackConfig } from "../../components/config";
import { withPodOverrides } from "../../components/operator/pod-overrides";
import { objectNamed, renderOperators, SAMPLE_CSVS, Yaml } from "../helpers/operators";

const base = { cluster: { name: "prod", platform: "kubernetes", kubeContext: "test" } };
const problemLines = (config: Record<string, unknown>) =>
    configProblemLines({ ...base, operators: [{ name: "op", csv: "op.yaml", namespace: "ops", config }] });

describe("operators[].config: OLM's Subscription config merge rules (olm/overrides/inject/inject.go)", () => {
    const pod = () => ({
        nodeSelector: { "kubernetes.io/os": "linux", zone: "a" },
        tolerations: [{ key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" }],
        containers: [
            {
                name: "manager",
                env: [
                    { name: "A", value: "1" },
                    { name: "B", value: "2" },
                ],
                resources: { limits: { cpu: "500m", memory: "128Mi" }, requests: { cpu: "10m" } },
            },
            { name: "proxy" },
        ],
    });

    test("GIVEN overrides of every kind WHEN applied THEN env merges by name (override wins, own names keep their place), tolerations append without repeats, resources and nodeSelector are replaced, on every container", () => {
        const result = withPodOverrides(pod(), {
            nodeSelector: { "node-role.kubernetes.io/infra": "" },
            tolerations: [
                { key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" },
                { key: "node-role.kubernetes.io/infra", operator: "Exists", effect: "NoSchedule" },
            ],
            resources: { requests: { memory: "256Mi" } },
            env: [
                { name: "C", value: "3" },
                { name: "A", valueFrom: { secretKeyRef: { name: "creds", key: "a" } } },
            ],
        });
        expect(result).toEqual({
            nodeSelector: { "node-role.kubernetes.io/infra": "" },
            tolerations: [
                { key: "dedicated", operator: "Equal", value: "ops", effect: "NoSchedule" },
                { key: "node-role.kubernetes.io/infra", operator: "Exists", effect: "NoSchedule" },
            ],
            containers: [
                {
                    name: "manager",
                    env: [
                        { name: "A", valueFrom: { secretKeyRef: { name: "creds", key: "a" } } },
                        { name: "B", value: "2" },
                        { name: "C", value: "3" },
                    ],
                    resources: { requests: { memory: "256Mi" } },
                },
                {
                    name: "proxy",
                    env: [
                        { name: "C", value: "3" },
                        { name: "A", valueFrom: { secretKeyRef: { name: "creds", key: "a" } } },
                    ],
                    resources: { requests: { memory: "256Mi" } },
                },
            ],
        });
    });

    test("GIVEN no overrides or an empty config WHEN applied THEN the pod spec is unchanged", () => {
        expect(withPodOverrides(pod(), undefined)).toEqual(pod());
        expect(withPodOverrides(pod(), {})).toEqual(pod());
    });

    test("GIVEN a toleration equal to one the pod has but for an explicit empty operator WHEN applied THEN it is not repeated (Go's zero value)", () => {
        const spec = { containers: [], tolerations: [{ key: "k", operator: "Exists" }] };
        expect(withPodOverrides(spec, { tolerations: [{ key: "k", operator: "Exists", value: "" }] }).tolerations).toEqual([
            { key: "k", operator: "Exists" },
        ]);
    });

    test("GIVEN any own env and any override env WHEN merged THEN each name appears once, with the override's value if it has one, own names first in their order", () => {
        const names = fc.uniqueArray(fc.constantFrom("A", "B", "C", "D", "E"));
        fc.assert(
            fc.property(names, names, (ownNames, overrideNames) => {
                const own = ownNames.map((name) => ({ name, value: "own" }));
                const overrides = overrideNames.map((name) => ({ name, value: "override" }));
                const env = withPodOverrides({ containers: [{ name: "c", env: own }] }, { env: overrides }).containers[0].env ?? [];
                const expectedNames = [...ownNames, ...overrideNames.filter((n) => !ownNames.includes(n))];
                expect(env.map((e) => e.name)).toEqual(expectedNames);
                for (const e of env) {
                    expect(e.value).toBe(overrideNames.includes(e.name) ? "override" : "own");
                }
            }),
        );
    });
});

describe("operators[].config: validated like the rest of the config", () => {
    test("GIVEN a valid config WHEN validated THEN it is kept as written", () => {
        const config = {
            nodeSelector: { "kubernetes.io/os": "linux" },
            tolerations: [{ operator: "Exists" }],
            resources: { limits: { cpu: "1", memory: "1.5Gi" }, requests: { cpu: "100m" } },
            env: [{ name: "LOG_LEVEL", value: "debug" }],
        };
        const result = validateStackConfig({ ...base, operators: [{ name: "op", csv: "op.yaml", namespace: "ops", config }] });
        expect(result.ok && result.config.operators[0].config).toEqual(config);
    });

    test("GIVEN every kind of mistake at once WHEN validated THEN each is reported with its path, value and rule", () => {
        expect(
            problemLines({
                nodeSelector: { "bad key!": "x", zone: "-bad" },
                tolerations: [
                    { operator: "Equal", value: "v" },
                    { key: "k", operator: "Exists", value: "v" },
                    { key: "k", tolerationSeconds: 30, effect: "NoSchedule" },
                ],
                resources: { limits: { cpu: "lots" } },
                env: [
                    { name: "OPERATOR_CONDITION_NAME", value: "x" },
                    { name: "1X", value: "x" },
                    { name: "A", value: "1", valueFrom: { configMapKeyRef: { name: "cm", key: "a" } } },
                    { name: "A" },
                ],
                replicas: 0,
            }),
        ).toEqual([
            `cluster-platform:operators[0].config.env[0].name: "OPERATOR_CONDITION_NAME" is set by the stack on every container (OLM's environment); it cannot be overridden`,
            'cluster-platform:operators[0].config.env[1].name: "1X" must be an environment variable name: [-._a-zA-Z][-._a-zA-Z0-9]*',
            'cluster-platform:operators[0].config.env[2]: "A": exactly one of value and valueFrom must be set',
            'cluster-platform:operators[0].config.env[3]: "A": exactly one of value and valueFrom must be set',
            'cluster-platform:operators[0].config.env[3]: duplicate environment variable "A" (already at index 2)',
            'cluster-platform:operators[0].config.nodeSelector.zone: "-bad" must be a label value: at most 63 characters of [A-Za-z0-9-_.], starting and ending with an alphanumeric character, or empty',
            `cluster-platform:operators[0].config.nodeSelector["bad key!"]: key "bad key!" must be a label key: an optional DNS-1123 subdomain prefix of at most 253 characters and '/', then a name of at most 63 characters of [A-Za-z0-9-_.] starting and ending with an alphanumeric character`,
            "cluster-platform:operators[0].config.replicas: 0 must be at least 1",
            'cluster-platform:operators[0].config.resources.limits.cpu: "lots" must be a Kubernetes quantity such as 100m, 1, 1.5, 512Mi or 2Gi',
            'cluster-platform:operators[0].config.tolerations[0].operator: "Equal": operator must be Exists when key is empty',
            'cluster-platform:operators[0].config.tolerations[1].value: "v": value must be empty when operator is Exists',
            'cluster-platform:operators[0].config.tolerations[2].effect: "NoSchedule": effect must be NoExecute when tolerationSeconds is set',
        ]);
    });
});

describe("operators[].config: rendered on every Deployment of the operator", () => {
    test("GIVEN the widgets operator with overrides WHEN rendered THEN each of its Deployments' pods carry them, after the CSV's env and before OLM's OPERATOR_CONDITION_NAME", async () => {
        const config = {
            nodeSelector: { "node-role.kubernetes.io/infra": "" },
            tolerations: [{ key: "node-role.kubernetes.io/infra", operator: "Exists", effect: "NoSchedule" }],
            resources: { requests: { cpu: "50m", memory: "64Mi" } },
            env: [{ name: "LOG_LEVEL", value: "debug" }],
        };
        const result = await renderOperators([
            { name: "widgets", csv: SAMPLE_CSVS.widgets, namespace: "widget-operator", targetNamespaces: [], config },
        ]);
        expect(result.errors).toEqual([]);
        for (const name of ["widget-controller", "widget-webhook"]) {
            const spec = objectNamed(result, "Deployment", name, "widget-operator").spec.template.spec;
            expect(spec.nodeSelector).toEqual({ "node-role.kubernetes.io/infra": "" });
            expect(spec.tolerations).toEqual([{ key: "node-role.kubernetes.io/infra", operator: "Exists", effect: "NoSchedule" }]);
            for (const container of spec.containers as Yaml[]) {
                expect(container.resources).toEqual({ requests: { cpu: "50m", memory: "64Mi" } });
                expect((container.env as Yaml[]).slice(-2)).toEqual([
                    { name: "LOG_LEVEL", value: "debug" },
                    { name: "OPERATOR_CONDITION_NAME", value: expect.any(String) },
                ]);
            }
        }
    });
});
