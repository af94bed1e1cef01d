import { mkdirSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { collectImageSources, SourceError, staleOutputs } from "../../components/webhook-image/sources";
import { withProject } from "../helpers/webhook-project";

const LINUX_AMD64 = [{ os: "linux", architecture: "amd64" }];
const SOURCE = { outputDirectory: "dist", application: "webhook", entrypoint: "webhook/main.js" };

describe("what goes into the image", () => {
    const project = withProject("each");

    test("GIVEN the stand-in webhook WHEN collected THEN the application layer holds /app/package.json and its compiled files, and the packages it requires are named", async () => {
        writeFileSync(path.join(project(), "dist", "webhook", "main.js.map"), "{}");
        writeFileSync(path.join(project(), "dist", "webhook", "main.d.ts"), "export {};");
        const sources = await collectImageSources({ projectDirectory: project(), ...SOURCE }, LINUX_AMD64);
        expect(sources.application.map((e) => `${e.mode.toString(8)} ${e.path}`)).toEqual([
            "644 app/package.json",
            "644 app/webhook/main.js",
            "644 app/webhook/review.js",
        ]);
        expect(sources.requiredPackages).toEqual(["pino", "prom-client"]);
        expect(sources.dependencies.some((e) => e.path === "app/node_modules/pino/package.json")).toBe(true);
        expect(sources.dependencies.filter((e) => /\.d\.[cm]?ts$|\.map$/.test(e.path))).toEqual([]);
        expect(sources.dependencies.filter((e) => e.path.includes("/node_modules/@pulumi/"))).toEqual([]);
    });

    test("GIVEN a compiled module outside the webhook folder that it requires WHEN collected THEN that module is packaged at its place under /app", async () => {
        mkdirSync(path.join(project(), "dist", "shared"), { recursive: true });
        writeFileSync(path.join(project(), "dist", "shared", "names.js"), "module.exports = { name: 'x' };\n");
        writeFileSync(
            path.join(project(), "dist", "webhook", "review.js"),
            "const { name } = require('../shared/names');\nmodule.exports = { review: () => name };\n",
        );
        const sources = await collectImageSources({ projectDirectory: project(), ...SOURCE }, LINUX_AMD64);
        expect(sources.application.map((e) => e.path)).toEqual([
            "app/package.json",
            "app/shared/names.js",
            "app/webhook/main.js",
            "app/webhook/review.js",
        ]);
    });

    test("GIVEN a webhook with several mistakes WHEN collected THEN one error lists every one of them", async () => {
        writeFileSync(
            path.join(project(), "dist", "webhook", "review.js"),
            "require('./missing');\nrequire('../../outside');\nrequire('fast-check');\nrequire('left-pad/x');\n// require('commented-out')\nconst s = \"require('in-a-string')\";\n",
        );
        writeFileSync(path.join(project(), "outside.js"), "");
        await expect(collectImageSources({ projectDirectory: project(), ...SOURCE }, LINUX_AMD64)).rejects.toEqual(
            new SourceError([
                'dist/webhook/review.js requires "./missing", which does not exist',
                'dist/webhook/review.js requires "../../outside", outside dist/, which the image cannot carry',
                'the application requires "fast-check", which is a devDependency in package.json: add it to "dependencies"',
                'the application requires "left-pad", which is not a dependency in package.json: add it to "dependencies"',
            ]),
        );
    });

    test("GIVEN no compiled webhook WHEN collected THEN the error says to build it first", async () => {
        rmSync(path.join(project(), "dist"), { recursive: true });
        await expect(collectImageSources({ projectDirectory: project(), ...SOURCE }, LINUX_AMD64)).rejects.toThrow(
            "cannot package the webhook image:\n  - dist/webhook/main.js does not exist: build the webhook first (npm run build)",
        );
    });

    test("GIVEN TypeScript sources newer than their output or never compiled WHEN checked THEN exactly those are stale", async () => {
        mkdirSync(path.join(project(), "webhook"), { recursive: true });
        for (const name of ["main", "review", "new"]) {
            writeFileSync(path.join(project(), "webhook", `${name}.ts`), "export {};\n");
        }
        const old = new Date("2020-01-01T00:00:00Z");
        utimesSync(path.join(project(), "webhook", "main.ts"), old, old);
        expect(await staleOutputs(project(), "webhook", "dist")).toEqual(["webhook/new.ts", "webhook/review.ts"]);
    });
});
