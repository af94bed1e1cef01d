/**
 * Jest runs the TypeScript sources through swc (transpile only: type-checking is
 * `npm run typecheck`), as CommonJS, the module system the Pulumi program and the
 * webhook both run under.
 */
module.exports = {
    testEnvironment: "node",
    roots: ["<rootDir>/tests"],
    // One entry per test folder (tests/<area>.test.ts, see tests/helpers/test-group.ts): the files of
    // a folder share one module registry, so the Pulumi SDKs and the program load once per folder.
    testMatch: ["<rootDir>/tests/*.test.ts"],
    testSequencer: "<rootDir>/tests/setup/sequencer.js",
    transform: {
        "/node_modules/@marcbachmann/cel-js/.+\\.js$": ["@swc/jest", { jsc: { target: "es2022" }, module: { type: "commonjs" } }],
        "^.+\\.ts$": [
            "@swc/jest",
            {
                jsc: { parser: { syntax: "typescript" }, target: "es2022" },
                module: { type: "commonjs" },
                sourceMaps: "inline",
            },
        ],
    },
    // @marcbachmann/cel-js ships only ES modules (Node.js itself requires them; jest's registry does not).
    transformIgnorePatterns: ["/node_modules/(?!@marcbachmann/cel-js/)"],
    moduleFileExtensions: ["ts", "js", "json"],
    setupFilesAfterEnv: ["<rootDir>/tests/setup/pulumi-stack-captures.ts"],
    testTimeout: 60000,
    // Two workers on the 2-core machines this runs on (jest's default is cores - 1, i.e. one):
    // many suites spend their time waiting on real peers (a registry, tsx/npm/node children,
    // policy analyzers over gRPC), so a second worker overlaps that waiting with work.
    maxWorkers: 2,
};
