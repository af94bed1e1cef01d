/**
 * Jest runs the TypeScript sources through swc (transpile only: type-checking is
 * `npm run typecheck`), as CommonJS, the module system the Pulumi program and the
 * webhook both run under.
 */

/**
 * `npx jest tests/<area>/<file>.test.ts` runs that one file: a path to a file inside a test folder
 * switches the entries to the files themselves. Without one (`npm test`, CI, `npx jest tests/<area>.test.ts`)
 * the entries are one per folder (tests/<area>.test.ts, see tests/helpers/test-group.ts), whose
 * files share one module registry, so the Pulumi SDKs and the program load once per folder: run
 * one entry per file, the whole suite would load them about 180 times and take minutes longer.
 */
const namesTestFile = process.argv.slice(2).some((arg) => /(^|[\\/])tests[\\/][^\\/]+[\\/](.+[\\/])?[^\\/]+\.test\.ts$/.test(arg));

module.exports = {
    testEnvironment: "node",
    roots: ["<rootDir>/tests"],
    // One entry per test folder (tests/<area>.test.ts, see tests/helpers/test-group.ts): the files of
    // a folder share one module registry, so the Pulumi SDKs and the program load once per folder.
    testMatch: namesTestFile ? ["<rootDir>/tests/*/**/*.test.ts"] : ["<rootDir>/tests/*.test.ts"],
    testPathIgnorePatterns: ["/node_modules/", "<rootDir>/tests/fixtures/", "<rootDir>/tests/real/"],
    // A private TMPDIR per run, which must be empty at the end (tests/setup/private-tmpdir.js).
    globalSetup: "<rootDir>/tests/setup/global-setup.js",
    globalTeardown: "<rootDir>/tests/setup/global-teardown.js",
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
    setupFilesAfterEnv: [
        "<rootDir>/tests/setup/pulumi-stack-captures.ts",
        "<rootDir>/tests/setup/temporary-directories.ts",
        "<rootDir>/tests/setup/property-seed.ts",
    ],
    testTimeout: 60000,
    // Two workers on the 2-core machines this runs on (jest's default is cores - 1, i.e. one):
    // many suites spend their time waiting on real peers (a registry, tsx/npm/node children,
    // policy analyzers over gRPC), so a second worker overlaps that waiting with work.
    maxWorkers: 2,
};
