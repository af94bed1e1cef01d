import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { Lockfile, packageNameOf, productionClosure, resolveFrom } from "../../components/webhook-image/closure";
import { ROOT } from "../helpers/root";

const LINUX_X64 = { os: "linux", cpu: "x64" };

function lockfile(packages: Lockfile["packages"]): Lockfile {
    return { lockfileVersion: 3, packages };
}

describe("production dependency closure from package-lock.json", () => {
    test("GIVEN this repository's lockfile and the packages the webhook requires WHEN the closure is computed THEN it is exactly the set `npm query` finds in node_modules", () => {
        const roots = ["@kubernetes/client-node", "pino", "prom-client"];
        const lock = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
        const selector = `:is(${roots.map((r) => `#${r}`).join(", ")})`;
        const npm = JSON.parse(
            execFileSync("npm", ["query", `${selector}, ${selector} *`], {
                cwd: ROOT,
                encoding: "utf8",
                stdio: ["ignore", "pipe", "ignore"],
            }),
        ) as Array<{ location: string }>;
        const closure = productionClosure(lock, roots, LINUX_X64);
        expect(closure.problems).toEqual([]);
        expect(closure.locations).toEqual([...new Set(npm.map((p) => p.location))].sort());
    });

    test("GIVEN nested versions WHEN a package's dependency is resolved THEN the nearest node_modules wins, as Node resolves it", () => {
        const packages = {
            "": { dependencies: { a: "1", c: "1" } },
            "node_modules/a": { dependencies: { b: "2" } },
            "node_modules/a/node_modules/b": { dependencies: { c: "1" } },
            "node_modules/b": {},
            "node_modules/c": {},
        };
        expect(resolveFrom(packages, "node_modules/a", "b")).toBe("node_modules/a/node_modules/b");
        expect(resolveFrom(packages, "node_modules/a/node_modules/b", "c")).toBe("node_modules/c");
        expect(productionClosure(lockfile(packages), ["a"], LINUX_X64)).toEqual({
            locations: ["node_modules/a", "node_modules/a/node_modules/b", "node_modules/c"],
            problems: [],
        });
    });

    test("GIVEN optional and peer dependencies WHEN the closure is computed for linux/x64 THEN other platforms' binaries and absent optional peers are left out, present peers kept", () => {
        const packages = {
            "": { dependencies: { tool: "1" } },
            "node_modules/tool": {
                optionalDependencies: { "tool-linux-x64": "1", "tool-darwin-arm64": "1", "tool-missing": "1" },
                peerDependencies: { peer: "1", "optional-peer": "1" },
                peerDependenciesMeta: { "optional-peer": { optional: true } },
            },
            "node_modules/tool-linux-x64": { optional: true, os: ["linux"], cpu: ["x64"] },
            "node_modules/tool-darwin-arm64": { optional: true, os: ["darwin"], cpu: ["arm64"] },
            "node_modules/peer": {},
        };
        expect(productionClosure(lockfile(packages), ["tool"], LINUX_X64)).toEqual({
            locations: ["node_modules/peer", "node_modules/tool", "node_modules/tool-linux-x64"],
            problems: [],
        });
        expect(productionClosure(lockfile(packages), ["tool"], { os: "darwin", cpu: "arm64" }).locations).toEqual([
            "node_modules/peer",
            "node_modules/tool",
            "node_modules/tool-darwin-arm64",
        ]);
    });

    test("GIVEN every kind of broken input WHEN the closure is computed THEN each problem is reported, naming the package and what to do", () => {
        const packages = {
            "": { dependencies: { app: "1", notlocked: "1" }, devDependencies: { "test-lib": "1" } },
            "node_modules/app": { dependencies: { gone: "1", linked: "1", devonly: "1" } },
            "node_modules/linked": { link: true, resolved: "packages/linked" },
            "node_modules/devonly": { dev: true },
            "node_modules/test-lib": { dev: true },
        };
        expect(productionClosure(lockfile(packages), ["app", "test-lib", "unknown", "notlocked"], LINUX_X64).problems).toEqual([
            '"notlocked" is in package.json but not in package-lock.json: run npm install',
            'the application requires "test-lib", which is a devDependency in package.json: add it to "dependencies"',
            'the application requires "unknown", which is not a dependency in package.json: add it to "dependencies"',
            'node_modules/app needs "gone", which package-lock.json does not list: run npm install',
            "node_modules/linked is a link (a workspace or `file:` dependency), which the image cannot carry: publish it or vendor it",
            "node_modules/devonly is marked dev-only in package-lock.json but a production package needs it: run npm install to repair the lockfile",
        ]);
    });

    test("GIVEN a lockfile v1 WHEN the closure is computed THEN the problem says to regenerate it with npm 7+", () => {
        expect(productionClosure({ lockfileVersion: 1 }, ["a"], LINUX_X64)).toEqual({
            locations: [],
            problems: [
                "package-lock.json has no `packages` map (lockfileVersion 2 or later, npm 7+): run npm install once with npm 7 or later",
            ],
        });
    });

    test.each([
        ["pino", "pino"],
        ["pino/file", "pino"],
        ["@kubernetes/client-node", "@kubernetes/client-node"],
        ["@kubernetes/client-node/dist/gen", "@kubernetes/client-node"],
        ["./local", undefined],
        ["../up", undefined],
        ["/abs", undefined],
        ["node:fs", undefined],
    ])("GIVEN the specifier %s WHEN its package is named THEN it is %s", (specifier, name) => {
        expect(packageNameOf(specifier)).toBe(name);
    });
});
