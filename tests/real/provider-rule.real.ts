/**
 * The Kubernetes provider's create and delete rule on the version the lockfile pins (4.25.0, the
 * one the real tier builds), which the stack's adoption rule (components/shared/adoption.ts) and
 * its rename aliases (components/operator/rename.ts) are written against, observed with a
 * one-ConfigMap program (programs/provider-rule):
 *
 * - a create is a server-side apply under the resource's own field manager, so an object that
 *   exists is taken over (a provider from 4.29 on answers AlreadyExists unless
 *   `upsertExistingObjects` is set), and a value another manager applied differently is a field
 *   conflict that fails the create;
 * - a delete is a DELETE by name: when a resource is renamed without an alias, the engine creates
 *   the new one (over the same object) and then deletes the old one, which deletes the object the
 *   new resource now records. The next preview shows nothing; only a refresh finds it gone.
 *
 * When the pinned provider changes, these tests say which of the rules above moved.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { applyObjects, getObject, kubectl, kubectlRun } from "./helpers/kubectl";
import { changedSteps, previewSteps } from "./helpers/preview";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const NAMESPACE = "provider-rule";
const PROGRAM = path.join(REPO_ROOT, "tests", "real", "programs", "provider-rule");

function program(name: string, config: { resource: string; object: string; upsert?: boolean }): TestStack {
    const project = path.join(realEnv("REAL_WORK"), "stacks", name, "project");
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(
        path.join(project, "Pulumi.yaml"),
        stringify({ name: "provider-rule", runtime: "nodejs", main: path.relative(project, path.join(PROGRAM, "index.js")) }),
    );
    return new TestStack(name, programConfig(config), { projectDirectory: project });
}

function programConfig(config: { resource: string; object: string; upsert?: boolean }): Record<string, unknown> {
    return {
        "provider-rule:context": process.env.REAL_CONTEXT ?? "real",
        "provider-rule:namespace": NAMESPACE,
        "provider-rule:resource": config.resource,
        "provider-rule:object": config.object,
        "provider-rule:upsert": String(config.upsert ?? false),
    };
}

const stacks: TestStack[] = [];

beforeAll(() => {
    applyObjects([{ apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } }]);
});

afterAll(() => {
    for (const stack of stacks) {
        const destroyed = stack.destroy();
        expect({ status: destroyed.status, output: destroyed.status === 0 ? "" : explain(destroyed) }).toEqual({ status: 0, output: "" });
    }
    kubectlRun(["delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=false"]);
});

describe("the pinned Kubernetes provider's create and delete (4.25.0)", () => {
    test("GIVEN a ConfigMap the stack declares WHEN its resource is renamed without an alias and applied THEN the create takes the object over and the old resource's delete deletes it; a preview sees nothing, a refresh finds it gone", () => {
        const stack = program("provider-rule-rename", { resource: "first", object: "renamed" });
        stacks.push(stack);
        expect(stack.up().status).toBe(0);
        expect(getObject("configmap", "renamed", NAMESPACE)?.data).toEqual({ declared: "by the stack" });

        stack.setConfig(programConfig({ resource: "second", object: "renamed" }));
        expect(changedSteps(previewSteps(stack)).map((s) => `${s.op} ${s.name}`)).toEqual(["delete first", "create second"]);
        const renamed = stack.up();
        expect({ status: renamed.status, output: renamed.status === 0 ? "" : explain(renamed) }).toEqual({ status: 0, output: "" });
        expect(getObject("configmap", "renamed", NAMESPACE)).toBeUndefined();
        expect(stack.preview(["--expect-no-changes"]).status).toBe(0);
        expect(changedSteps(previewSteps(stack, ["--refresh"])).map((s) => `${s.op} ${s.name}`)).toEqual(["create second"]);
    });

    test("GIVEN an object made outside the stack WHEN a provider without upsertExistingObjects creates it THEN the create takes it over (same uid), where 4.29+ would answer AlreadyExists; AND GIVEN a field another manager holds with another value THEN the create fails with a field conflict naming it", () => {
        applyObjects([
            {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name: "made-before", namespace: NAMESPACE },
                data: { declared: "by the stack" },
            },
        ]);
        const before = getObject("configmap", "made-before", NAMESPACE)?.metadata.uid;
        const adopting = program("provider-rule-existing", { resource: "existing", object: "made-before" });
        stacks.push(adopting);
        const created = adopting.up();
        expect({ status: created.status, output: created.status === 0 ? "" : explain(created) }).toEqual({ status: 0, output: "" });
        expect(getObject("configmap", "made-before", NAMESPACE)?.metadata.uid).toBe(before);

        kubectl(["create", "configmap", "made-other", "-n", NAMESPACE, "--from-literal=declared=by someone else"]);
        const conflicting = program("provider-rule-conflict", { resource: "conflicting", object: "made-other" });
        stacks.push(conflicting);
        const refused = conflicting.up();
        expect(refused.status).not.toBe(0);
        expect(refused.stdout).toMatch(/Apply failed with 1 conflict: conflict with "kubectl-create" using v1: \.data\.declared/);
        expect(getObject("configmap", "made-other", NAMESPACE)?.data).toEqual({ declared: "by someone else" });
    });
});
