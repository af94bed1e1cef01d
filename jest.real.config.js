/**
 * The real tier (`npm run test:real`): the program on the real Pulumi engine, language host and
 * providers against a real API server (scripts/real/), one cluster for the whole run, so the files
 * run one after another in one worker. See docs/real-tier.md.
 */
const base = require("./jest.config.js");

module.exports = {
    testEnvironment: "node",
    roots: ["<rootDir>/tests/real"],
    testMatch: ["<rootDir>/tests/real/*.real.ts"],
    transform: base.transform,
    transformIgnorePatterns: base.transformIgnorePatterns,
    moduleFileExtensions: base.moduleFileExtensions,
    globalSetup: "<rootDir>/tests/real/setup/global-setup.ts",
    // Property tests run from the one seed (tests/helpers/property-seed.ts), as in the mock tier.
    setupFilesAfterEnv: ["<rootDir>/tests/setup/property-seed.ts"],
    globalTeardown: "<rootDir>/tests/real/setup/global-teardown.ts",
    // Engine runs against a real API server: an `up` of the full stack takes tens of seconds.
    testTimeout: 600000,
    maxWorkers: 1,
    // Each test's line and time in the log (jest prints them only for a lone file by default): what
    // a CI run's real tier spends, test by test, can then be read off its log.
    verbose: true,
};
