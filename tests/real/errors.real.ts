/**
 * How the real CLI shows a problem the program reports about one of its resources: the message
 * under that resource, without a stack or a dump of the resource. (The mock runtime does not run
 * the Node SDK's cmd/run error handler; the real tier showed "<ref *1> ResourceError: …" with the
 * stack and the resource object before components/shared/resource-errors.ts hid the stack of
 * plain Errors.) And how it shows a config with mistakes: every problem, on a runner whose Node.js
 * heap is small too (components/composition/package-frames.ts: the SDK's handler inspects the
 * error, which Node 20.20 could loop on until the heap ran out).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
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

    test("GIVEN a stack config with ten mistakes and a runner whose Node.js heap is 256 MB WHEN pulumi preview runs THEN the CLI lists the ten problems, and the program ends without a crash", () => {
        const config = parse(fs.readFileSync(path.join(REPO_ROOT, "tests", "fixtures", "ten-mistakes.yaml"), "utf8")) as Record<
            string,
            unknown
        >;
        const stack = new TestStack("error-config", config);
        stacks.push(stack);
        // Plenty for a program that stops at its config. Before package-frames.ts the SDK's inspect
        // of the error grew past it, and the CLI showed a heap dump and no problem at all.
        const preview = stack.preview([], { NODE_OPTIONS: "--max-old-space-size=256" });
        const output = preview.stdout + preview.stderr;

        expect(preview.status).not.toBe(0);
        expect(output).toContain("error: invalid configuration: 10 problems");
        expect(output.match(/^\s+- cluster-platform:/gm)).toHaveLength(10);
        expect(output).toContain('- cluster-platform:cluster.platform: "aws" is not one of "openshift", "kubernetes"');
        expect({ crashed: /heap out of memory|Program exited with non-zero exit code/.test(output) }).toEqual({ crashed: false });
    });
});
