/**
 * Runs the largest test folders first. Jest orders entries by their last run's durations, or, with
 * none cached (a fresh clone, as in CI), by the entry file's size; every entry here is the same
 * few lines (tests/helpers/test-group.ts), so that order would be arbitrary, and a long folder
 * started last leaves the other worker idle at the end. With no timings, an entry weighs what its
 * folder's test files weigh. The parts `npm test` runs (tests/part-<n>.test.ts) have no folder of
 * their own and weigh the same few bytes: packed to take about as long as each other
 * (tests/helpers/test-group.ts), they run in name order.
 */
const fs = require("node:fs");
const path = require("node:path");
const Sequencer = require("@jest/test-sequencer").default;

function folderBytes(entry) {
    const folder = entry.replace(/\.test\.ts$/, "");
    if (!fs.existsSync(folder)) {
        return fs.statSync(entry).size;
    }
    return fs
        .readdirSync(folder)
        .filter((name) => name.endsWith(".test.ts"))
        .reduce((sum, name) => sum + fs.statSync(path.join(folder, name)).size, 0);
}

class FolderSequencer extends Sequencer {
    sort(tests) {
        if (tests.every((test) => this.time(test) != null)) {
            return super.sort(tests);
        }
        const weight = new Map(tests.map((test) => [test.path, folderBytes(test.path)]));
        return [...tests].sort((a, b) => weight.get(b.path) - weight.get(a.path) || a.path.localeCompare(b.path));
    }
}

module.exports = FolderSequencer;
