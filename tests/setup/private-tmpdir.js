/**
 * Every test run gets a temporary directory of its own (TMPDIR, which os.tmpdir() reads on each
 * call, and which the workers and every child process inherit), and must leave it empty: what a
 * test writes there it removes. `setUp` is jest's globalSetup, `tearDown` its globalTeardown,
 * which fails the run naming every leftover (and then removes them, so the machine stays clean).
 */
const fs = require("node:fs");
const os = require("node:os");
const path = require("node:path");

const VARIABLE = "CLUSTER_PLATFORM_TEST_TMPDIR";

/**
 * Tool caches are not test output: they live outside the run's directory, in one place kept
 * between runs (also the suite's own, tests/helpers/kept-cache.ts). ts-node (the Pulumi SDK's vendored 7.0.1, which the language host and policy
 * analyzers use) takes TS_NODE_CACHE_DIRECTORY; tsx has no such setting and caches in
 * `<tmpdir>/tsx-<uid>`, so that name is a link into the kept place.
 */
function toolCaches(directory) {
    const kept = path.join(os.tmpdir(), "cluster-platform-test-caches");
    process.env.TS_NODE_CACHE_DIRECTORY = path.join(kept, "ts-node");
    // The suite's own kept directories (tests/helpers/kept-cache.ts), keyed by their inputs' hash.
    process.env.CLUSTER_PLATFORM_TEST_CACHES = kept;
    const tsx = `tsx-${typeof process.getuid === "function" ? process.getuid() : 0}`;
    fs.mkdirSync(path.join(kept, tsx), { recursive: true });
    fs.symlinkSync(path.join(kept, tsx), path.join(directory, tsx));
    return [tsx];
}

function setUp() {
    const directory = fs.mkdtempSync(path.join(os.tmpdir(), "cluster-platform-tests-"));
    process.env[VARIABLE] = directory;
    process.env[`${VARIABLE}_LINKS`] = toolCaches(directory).join(",");
    process.env.TMPDIR = directory;
}

/** What is left in `directory`, one path per entry (a folder with its first entries). */
function leftovers(directory) {
    return fs
        .readdirSync(directory)
        .sort()
        .map((name) => {
            const full = path.join(directory, name);
            const inside = fs.statSync(full).isDirectory() ? fs.readdirSync(full).sort().slice(0, 3) : [];
            return inside.length > 0 ? `${name}/ (${inside.join(", ")}${inside.length === 3 ? ", ..." : ""})` : name;
        });
}

function tearDown() {
    const directory = process.env[VARIABLE];
    if (!directory || !fs.existsSync(directory)) {
        return;
    }
    for (const link of (process.env[`${VARIABLE}_LINKS`] ?? "").split(",").filter(Boolean)) {
        fs.rmSync(path.join(directory, link), { force: true });
    }
    const left = leftovers(directory);
    fs.rmSync(directory, { recursive: true, force: true });
    if (left.length > 0) {
        throw new Error(
            `the tests left ${left.length} entries in their temporary directory (each test removes what it writes there):\n  ${left.join("\n  ")}`,
        );
    }
}

module.exports = { setUp, tearDown, leftovers };
