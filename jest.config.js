/**
 * Jest runs the TypeScript sources through swc (transpile only: type-checking is
 * `npm run typecheck`), as CommonJS, the module system the Pulumi program and the
 * webhook both run under.
 */

/**
 * The entries (tests/helpers/test-group.ts). `npm test` and CI: the parts, tests/part-<n>.test.ts,
 * each running several folders in one module registry, so the Pulumi SDKs and the program load
 * eight times instead of once per folder (or about 200 times, once per file). A path to a folder's
 * entry (`npx jest tests/<area>.test.ts`) switches the entries to the folders' own; a path to a
 * file inside a test folder (`npx jest tests/<area>/<file>.test.ts`) to the files themselves.
 */
const args = process.argv.slice(2);
const namesTestFile = args.some((arg) => /(^|[\\/])tests[\\/][^\\/]+[\\/](.+[\\/])?[^\\/]+\.test\.ts$/.test(arg));
const namesFolderEntry = args.some((arg) => /(^|[\\/])tests[\\/](?!part-\d+\.test\.ts$)[^\\/]+\.test\.ts$/.test(arg));

module.exports = {
    testEnvironment: "node",
    roots: ["<rootDir>/tests"],
    testMatch: namesTestFile
        ? ["<rootDir>/tests/*/**/*.test.ts"]
        : namesFolderEntry
          ? ["<rootDir>/tests/*.test.ts", "!<rootDir>/tests/part-*.test.ts"]
          : ["<rootDir>/tests/part-*.test.ts"],
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
    // Four workers on the 2-core machines this runs on (jest's default is cores - 1, i.e. one):
    // many suites spend their time waiting on real peers (a registry, tsx/npm/node children,
    // policy analyzers over gRPC, a fleet preview's timeout), blocked in spawnSync or on a socket,
    // and with two workers a core sat idle through each wait. Eight parts on four workers took
    // 171-185 s on a 2-vCPU machine where four on two took 203-211 s and six on three 196 s, and
    // 187-205 s in clean-clone .ci/runs, where four on two took 194-215 s (docs/performance.md,
    // "Four workers on two cores").
    maxWorkers: 4,
};
