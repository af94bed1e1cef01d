/**
 * Renaming an operator in config on the real engine and API server (issue 28, point 2; issue 35,
 * point 2): `operators[].previousNames` aliases the install's resources
 * (components/operator/rename.ts), and so does a rename without them, recognised from the
 * previous update's record of its installs (`operatorInstalls`). Either way the engine plans only
 * in-place updates, the cluster objects keep their uid, and the next preview is empty. Without an
 * alias the pinned provider would create over each object and then delete it with the old
 * resource (tests/real/provider-rule.real.ts). The preview-only check failed 2 runs in 3 before the
 * Deployments' pod templates carried their labels' fingerprint (components/shared/workload-metadata.ts).
 *
 * The sample bundle is used without its webhooks: the real tier runs no operator containers
 * (kwok), and the aliases of the webhook objects are the same rule as every other child's
 * (tests/operator/rename.test.ts shows them on every resource of the install under mocks).
 */
import { getObject, kubectlRun } from "./helpers/kubectl";
import { changedSteps, previewSteps } from "./helpers/preview";
import { destroyStack } from "./helpers/destroy";
import { operatorsOnlyStack, widgetBundle } from "./helpers/fixtures";
import { describe as explain, TestStack } from "./helpers/stack";

const NAMESPACE = "rename-operator";
const CRD = "widgets.samples.cluster-platform.io";

let stack: TestStack;
let csvPath: string;

function config(operator: object): Record<string, unknown> {
    return operatorsOnlyStack([{ csv: csvPath, namespace: NAMESPACE, createNamespace: true, targetNamespaces: [], ...operator }]);
}

beforeAll(() => {
    csvPath = widgetBundle("widgets-rename");
    stack = new TestStack("operator-rename", config({ name: "widgets" }));
});

afterAll(() => {
    try {
        if (stack) {
            // OLM's two aggregate roles are adopted, so kept on destroy (components/shared/adoption.ts).
            destroyStack(stack, [`CustomResourceDefinition/${CRD}`, "ClusterRole/aggregate-olm-edit", "ClusterRole/aggregate-olm-view"]);
        }
    } finally {
        // CRDs and adopted roles are kept on destroy: the test removes what it made.
        kubectlRun(["delete", "crd", CRD, "--ignore-not-found"]);
        kubectlRun(["delete", "clusterrole", "aggregate-olm-edit", "aggregate-olm-view", "--ignore-not-found"]);
    }
});

/** The uids of the objects the rename must keep. */
function uids(): string[] {
    return [
        ...["deployment/widget-controller", "deployment/widget-webhook", "serviceaccount/widget-controller"].map(
            (ref) => getObject(ref.split("/")[0], ref.split("/")[1], NAMESPACE)?.metadata.uid as string,
        ),
        getObject("crd", CRD)?.metadata.uid as string,
    ];
}

/** Previews the current config, applies it, and checks the plan was in-place updates only, the uids kept, the label moved and the next preview empty. */
function renamesInPlace(name: string): string {
    const before = uids();
    const steps = changedSteps(previewSteps(stack));
    // Only in-place updates (the operator label follows the new name); no step of another kind.
    expect(steps.filter((s) => s.op !== "update")).toEqual([]);
    expect(steps.length).toBeGreaterThan(0);
    const renamed = stack.up();
    expect({ status: renamed.status, output: renamed.status === 0 ? "" : explain(renamed) }).toEqual({ status: 0, output: "" });
    expect(uids()).toEqual(before);
    expect(getObject("deployment", "widget-controller", NAMESPACE)?.metadata.labels["cluster-platform.io/operator"]).toBe(name);
    const again = stack.preview(["--expect-no-changes"]);
    expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
    return renamed.stdout;
}

describe("renaming an operator (issues 28 and 35)", () => {
    test("GIVEN an installed operator renamed with previousNames WHEN previewed and applied THEN nothing is created, deleted or replaced, its objects keep their uid and the next preview is empty", () => {
        const installed = stack.up();
        expect(installed.status).toBe(0);
        stack.setConfig(config({ name: "gadgets", previousNames: ["widgets"] }));
        renamesInPlace("gadgets");
    });

    test("GIVEN it renamed again without previousNames WHEN previewed and applied THEN the previous update's record makes it the same rename: in-place updates only, the uids kept, a preview note naming both installs, and the next preview empty", () => {
        stack.setConfig(config({ name: "doohickeys" }));
        const output = renamesInPlace("doohickeys");
        expect(output).toContain('operator "doohickeys": taken as the rename of operator "gadgets"');
        expect(stack.outputs().operatorInstalls).toEqual({
            doohickeys: { namespace: NAMESPACE, csv: "widget-operator.v1.2.0", previousNames: ["widgets", "gadgets"] },
        });
    });
});
