import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { ROOT } from "../helpers/render";

// The SDK's own reader, the one cmd/run/run.js uses to decide ts-node's transpileOnly.
const tsutils = require("@pulumi/pulumi/tsutils") as { loadTypeScriptCompilerOptions(file: string): Record<string, unknown> };

describe("how the Pulumi Node.js language host loads the program", () => {
    const runtime = parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")).runtime;
    const tsconfig = path.join(ROOT, runtime.options.tsconfig);

    test("GIVEN Pulumi.yaml's runtime options WHEN the host reads the tsconfig they name THEN ts-node transpiles only (noCheck), with no environment variable", () => {
        expect(runtime).toEqual({ name: "nodejs", options: { packagemanager: "npm", typescript: true, tsconfig: "tsconfig.pulumi.json" } });
        expect(tsutils.loadTypeScriptCompilerOptions(tsconfig).noCheck).toBe(true);
    });

    test("GIVEN the host's defaults (module nodenext) under that tsconfig's own options THEN the program is compiled as tsc compiles it (CommonJS, node resolution, ES2022)", () => {
        const own = tsutils.loadTypeScriptCompilerOptions(tsconfig);
        const project = tsutils.loadTypeScriptCompilerOptions(path.join(ROOT, "tsconfig.json"));
        const effective = { target: "ES2020", module: "nodenext", moduleResolution: "nodenext", ...own };
        expect([effective.target, effective.module, effective.moduleResolution]).toEqual([
            project.target,
            project.module,
            project.moduleResolution,
        ]);
    });
});
