/**
 * The webhook compiled at run time (components/webhook-image/compile.ts), as PKO's workspace
 * needs it: the same JavaScript the TypeScript CLI writes with tsconfig.build.json's options
 * (the oracle: `tsc -p` over a config that extends it, restricted to webhook/, which
 * tests/helpers/webhook-project.ts `compileWebhook` runs), and nothing else.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { compileApplication } from "../../components/webhook-image/compile";
import { compileWebhook, ROOT } from "../helpers/webhook-project";

/** Every `.js` file under `directory`, relative, with its text. */
function javascript(directory: string): Record<string, string> {
    const files: Record<string, string> = {};
    const walk = (dir: string) => {
        for (const entry of readdirSync(dir, { withFileTypes: true })) {
            const file = path.join(dir, entry.name);
            if (entry.isDirectory()) {
                walk(file);
            } else if (entry.name.endsWith(".js")) {
                files[path.relative(directory, file)] = readFileSync(file, "utf8");
            }
        }
    };
    walk(directory);
    return files;
}

describe("the webhook compiled at run time for a checkout nobody built", () => {
    const temporary: string[] = [];
    afterAll(() => temporary.forEach((d) => rmSync(d, { recursive: true, force: true })));

    test("GIVEN the repository's webhook sources WHEN compiled at run time THEN the JavaScript is file for file what tsc writes with tsconfig.build.json, and only the webhook's", () => {
        const ours = mkdtempSync(path.join(os.tmpdir(), "compile-ours-"));
        const theirs = mkdtempSync(path.join(os.tmpdir(), "compile-tsc-"));
        temporary.push(ours, theirs);
        const written = compileApplication({ projectDirectory: ROOT, application: "webhook", outputDirectory: path.relative(ROOT, ours) });
        expect(written.length).toBeGreaterThan(0);

        // Throws unless tsc exits 0 and prints nothing.
        compileWebhook(theirs);

        // The oracle is compiled without source maps (so one compile serves every test that needs
        // it); the build's options have them, so each of ours ends with tsc's trailer naming its
        // map, which is written beside it, and is otherwise the oracle's text.
        const compiled = javascript(ours);
        const trailer = (file: string) => `//# sourceMappingURL=${path.basename(file)}.map`;
        expect(
            Object.entries(compiled).map(([file, text]) => [
                file,
                text.endsWith(`\n${trailer(file)}`),
                existsSync(path.join(ours, `${file}.map`)),
            ]),
        ).toEqual(Object.keys(compiled).map((file) => [file, true, true]));
        const withoutTrailers = Object.fromEntries(
            Object.entries(compiled).map(([file, text]) => [file, text.slice(0, -trailer(file).length)]),
        );
        expect(withoutTrailers).toEqual(javascript(theirs));
        // The webhook's files, the neutral modules it imports (tests/webhook/module-graph.test.ts),
        // and pod-volumes.js, which tsc emits for a types-only import but nothing requires.
        expect(
            Object.keys(compiled)
                .filter((file) => !file.startsWith(`webhook${path.sep}`))
                .sort(),
        ).toEqual(["k8s-names.js", "order.js", "pod-volumes.js", "records.js"].map((file) => path.join("components", "shared", file)));
        expect(Object.keys(compiled)).toContain(path.join("webhook", "main.js"));
    }, 120_000);

    test("GIVEN an application folder with no sources WHEN compiled THEN it fails saying so", () => {
        expect(() => compileApplication({ projectDirectory: ROOT, application: "no-such-app", outputDirectory: "dist" })).toThrow(
            `cannot compile no-such-app: no sources under ${path.join(ROOT, "no-such-app")}${path.sep}`,
        );
    });
});
