/**
 * Adoption with the `import` option on the real engine (issue 36, point 5). The program requires a
 * CLI of at least 3.226 (Pulumi.yaml), and since 3.174 (pulumi/pulumi #19339,
 * pkg/resource/deploy/step_generator.go `continueStepsFromImport`) the engine imports an object,
 * then generates the usual steps with the imported state as the old one: inputs that differ from
 * the live object (the tags the safety net merges) are an update in the same deployment, not the
 * old "inputs to import do not match the existing resource" failure, and that continuation goes to
 * the analyzers like any update. No AWS provider can be built here, so a Kubernetes object stands
 * in: labels merged by a stack transformation play the tags the safety net merges.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { stringify } from "yaml";
import { applyObjects, kubectl } from "./helpers/kubectl";
import { describe as explain, realEnv, REPO_ROOT, TestStack } from "./helpers/stack";

const PROGRAM = path.join(REPO_ROOT, "tests", "real", "programs", "import-adoption");
const NAMESPACE = "import-adoption";

/** A stack of the adoption program in its own project. */
function adoptionStack(name: string, config: Record<string, string>): TestStack {
    const project = path.join(realEnv("REAL_WORK"), "stacks", name, "project");
    fs.mkdirSync(project, { recursive: true });
    fs.writeFileSync(
        path.join(project, "Pulumi.yaml"),
        stringify({ name: "import-adoption", runtime: "nodejs", main: path.relative(project, path.join(PROGRAM, "index.js")) }),
    );
    const context = kubectl(["config", "current-context"]).trim();
    return new TestStack(
        name,
        Object.fromEntries(Object.entries({ context, ...config }).map(([key, value]) => [`import-adoption:${key}`, value])),
        { projectDirectory: project },
    );
}

beforeAll(() => {
    applyObjects([
        { apiVersion: "v1", kind: "Namespace", metadata: { name: NAMESPACE } },
        // A label of its own, which the program does not declare (a label another field manager owns and the program
        // changed would be a server-side apply conflict: a Kubernetes matter this stand-in leaves out).
        {
            apiVersion: "v1",
            kind: "ConfigMap",
            metadata: { name: "adopt-me", namespace: NAMESPACE, labels: { origin: "by-hand" } },
            data: { a: "1" },
        },
        {
            apiVersion: "rbac.authorization.k8s.io/v1",
            kind: "ClusterRole",
            metadata: { name: "import-adoption-reader" },
            rules: [{ apiGroups: [""], resources: ["configmaps"], verbs: ["get"] }],
        },
    ]);
});

describe("adopting an existing object with the import option, inputs differing from the live object", () => {
    test("GIVEN a live ConfigMap and a program whose transformation merges labels into it WHEN previewed and updated THEN the engine imports it and updates the labels in the same update; the next preview has nothing to do", () => {
        const stack = adoptionStack("import-adoption", { kind: "configmap", name: "adopt-me", namespace: NAMESPACE });
        const preview = stack.preview();
        expect({ status: preview.status, output: preview.status === 0 ? "" : explain(preview) }).toEqual({ status: 0, output: "" });
        // The import, then an update of the merged labels, in one preview.
        expect(preview.stdout).toContain("= kubernetes:core/v1:ConfigMap: (import)");
        expect(preview.stdout).toContain("~ kubernetes:core/v1:ConfigMap: (update)");
        const up = stack.up();
        expect({ status: up.status, output: up.status === 0 ? "" : explain(up) }).toEqual({ status: 0, output: "" });
        expect(up.stdout).not.toContain("inputs to import do not match");
        const labels = JSON.parse(
            kubectl(["get", "configmap", "adopt-me", "-n", NAMESPACE, "-o", "jsonpath={.metadata.labels}"]),
        ) as Record<string, string>;
        // The update makes the object the program's goal: the label it does not declare is gone, as the AWS provider
        // removes the tags a resource's declaration lacks (unless its ignoreTags covers them: docs/aws-tags.md).
        expect(labels).toEqual({ cost: "7536", owner: "program", team: "platform" });
        const again = stack.preview(["--expect-no-changes"]);
        expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
    });

    test("GIVEN a live ClusterRole imported with inputs granting every verb on everything WHEN previewed with the k8s-rbac pack THEN the pack judges the imported resource's update and refuses it", () => {
        const stack = adoptionStack("import-adoption-wildcard", {
            kind: "clusterrole",
            name: "import-adoption-reader",
            rules: JSON.stringify([{ apiGroups: ["*"], resources: ["*"], verbs: ["*"] }]),
        });
        const preview = stack.preview(["--policy-pack", path.join(REPO_ROOT, "policy-packs", "k8s-rbac")]);
        expect(preview.status).not.toBe(0);
        expect(preview.stdout + preview.stderr).toMatch(/k8s-no-wildcard-access/);
        // Nothing was adopted or changed: the live role still reads ConfigMaps only.
        expect(JSON.parse(kubectl(["get", "clusterrole", "import-adoption-reader", "-o", "jsonpath={.rules}"]))).toEqual([
            { apiGroups: [""], resources: ["configmaps"], verbs: ["get"] },
        ]);
    });
});
