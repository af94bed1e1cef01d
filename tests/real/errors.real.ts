/**
 * How the real CLI shows a problem the program reports about one of its resources: the message
 * under that resource, without a stack or a dump of the resource. (The mock runtime does not run
 * the Node SDK's cmd/run error handler; the real tier showed "<ref *1> ResourceError: …" with the
 * stack and the resource object before components/shared/resource-errors.ts hid the stack of
 * plain Errors.)
 */
import { applyObjects } from "./helpers/kubectl";
import { CONFIG_NAMESPACE, fullStackConfig, POLICY_WEBHOOK, preexistingObjects, requireBuild, TRUST_CONFIGMAP } from "./helpers/fixtures";
import { destroyStack } from "./helpers/destroy";
import { REPO_ROOT, TestStack } from "./helpers/stack";

const stacks: TestStack[] = [];

afterAll(() => {
    // Its up fails part-way, so which kept objects it created first is not fixed: the state says.
    for (const stack of stacks) {
        destroyStack(stack, "retained by its state");
    }
});

beforeAll(() => {
    requireBuild(REPO_ROOT);
    applyObjects(preexistingObjects());
});

describe("a reported problem on the real CLI", () => {
    test("GIVEN caInjection into another team's webhook with no caSource WHEN pulumi up runs THEN the CLI shows the program's message under the CaInjection component, with no stack and no object dump", () => {
        const stack = new TestStack(
            "error-display",
            fullStackConfig({
                operators: [],
                // The message is the certificates capability's; no pod is admitted here, so no webhook runs.
                subscriptions: { enabled: false },
                caInjection: [
                    { kind: "ConfigMap", name: TRUST_CONFIGMAP, namespace: CONFIG_NAMESPACE },
                    { kind: "ValidatingWebhookConfiguration", name: POLICY_WEBHOOK },
                ],
            }),
        );
        stacks.push(stack);
        const up = stack.up();
        const output = up.stdout + up.stderr;
        expect(up.status).not.toBe(0);
        // Under the CaInjection component: the caInjection stack output keeps the program running
        // until the plan is settled (components/certificates/ca-injection.ts, `outcomes`). The SDK
        // may name the input the failed Output fed ("metadata") before the program's message.
        const message = `caInjection: ValidatingWebhookConfiguration "${POLICY_WEBHOOK}": webhook "policy.real.example.com" is served by Service ${CONFIG_NAMESPACE}/policy-webhook, and caInjection[].caSource does not say where its CA comes from`;
        expect(output).toContain(message);
        expect(output).toMatch(
            /cluster-platform:certificates:CaInjection \(certificates-ca-injection\):\n\s+error: (error serializing property "metadata": )?caInjection:/,
        );
        expect(output).not.toMatch(/pulumi:pulumi:Stack \(cluster-platform-error-display\):\n(\s+warning: .*\n)*\s+error: /);
        expect({ ref: output.includes("<ref *"), stackFrames: /\n\s+at \S+ \(/.test(output) }).toEqual({ ref: false, stackFrames: false });
    });
});
