import { validateStackConfig } from "../../components/config";
import { configProblemLines } from "../helpers/config-problems";

const base = { cluster: { name: "prod", platform: "openshift", kubeContext: "test" } };
const problemLines = configProblemLines;

describe("operators config", () => {
    test("GIVEN an operator without createNamespace WHEN validated THEN the stack creates its namespace", () => {
        const result = validateStackConfig({ ...base, operators: [{ name: "a", csv: "a.yaml", namespace: "ops" }] });
        expect(result.ok && result.config.operators).toEqual([
            { name: "a", csv: "a.yaml", namespace: "ops", createNamespace: true, targetNamespaces: [], deleteCrdsOnRemoval: false },
        ]);
    });

    test("GIVEN two operators in one namespace with different targetNamespaces WHEN validated THEN OLM's one-OperatorGroup-per-namespace rule is reported", () => {
        expect(
            problemLines({
                ...base,
                operators: [
                    { name: "a", csv: "a.yaml", namespace: "ops", targetNamespaces: ["team-a"] },
                    { name: "b", csv: "b.yaml", namespace: "ops", targetNamespaces: [] },
                ],
            }),
        ).toEqual([
            'cluster-platform:operators[1].targetNamespaces: operator "b": [] differs from operator "a" (operators[0]) in the same namespace "ops": OLM allows one OperatorGroup, so one set of target namespaces, per namespace',
        ]);
    });

    test("GIVEN two operators in one namespace that disagree on creating it WHEN validated THEN the disagreement is reported", () => {
        expect(
            problemLines({
                ...base,
                operators: [
                    { name: "a", csv: "a.yaml", namespace: "openshift-operators", createNamespace: false },
                    { name: "b", csv: "b.yaml", namespace: "openshift-operators" },
                ],
            }),
        ).toEqual([
            'cluster-platform:operators[1].createNamespace: operator "b": true differs from operator "a" (operators[0]) in the same namespace "openshift-operators": the namespace is either created by the stack or not',
        ]);
    });

    test("GIVEN two operators in one namespace that agree WHEN validated THEN there is no problem", () => {
        expect(
            problemLines({
                ...base,
                operators: [
                    { name: "a", csv: "a.yaml", namespace: "ops", targetNamespaces: ["x", "y"] },
                    { name: "b", csv: "b.yaml", namespace: "ops", targetNamespaces: ["y", "x"] },
                ],
            }),
        ).toEqual([]);
    });

    test("GIVEN an operator in the subscription webhook's namespace WHEN validated THEN both keys are named; with subscriptions off it is fine", () => {
        const operators = [{ name: "a", csv: "a.yaml", namespace: "subscription-injection", createNamespace: false }];
        const subscriptions = { enabled: true, webhook: { image: `quay.io/example/subscription-webhook@sha256:${"5".repeat(64)}` } };
        expect(problemLines({ ...base, operators, subscriptions })).toEqual([
            'cluster-platform:operators[0].namespace: operator "a": "subscription-injection" is also subscriptions.namespace, the subscription webhook\'s own namespace; give the operator a namespace of its own',
        ]);
        expect(problemLines({ ...base, operators, subscriptions: { enabled: false } })).toEqual([]);
    });

    test("GIVEN a repeated RBAC namespace WHEN validated THEN it is reported", () => {
        expect(
            problemLines({
                ...base,
                olm: { disableAllNamespacePermissionPromotion: true },
                operators: [{ name: "a", csv: "a.yaml", namespace: "ops", rbacNamespaces: ["x", "x"] }],
            }),
        ).toEqual(['cluster-platform:operators[0].rbacNamespaces[1]: duplicate RBAC namespace "x" (already at index 0)']);
    });
});
