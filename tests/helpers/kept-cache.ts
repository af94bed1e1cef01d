/**
 * Directories the suite would otherwise build again in every test file that needs them (the
 * compiled webhook, the node base image's layout), built once and kept by the hash of everything
 * they are made from, beside the other tool caches of tests/setup/private-tmpdir.js (outside the
 * run's temporary directory, kept between runs). Outside jest (a bench script run by hand), there
 * is no such place and the caller builds its own.
 */
import { createHash } from "node:crypto";
import { chmodSync, existsSync, linkSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import * as path from "node:path";

/** Where the suite keeps tool caches (set by tests/setup/private-tmpdir.js), if this runs under it. */
const CACHES = process.env.CLUSTER_PLATFORM_TEST_CACHES;

/**
 * The kept directory of `kind` for `inputs` (everything its content depends on, as text), which
 * `fill` writes on first use; undefined outside the suite. Callers only read it (or link it, see
 * `linkTree`). Two workers filling the same one at once each write their own, and the first rename wins.
 */
export function keptDirectory(kind: string, inputs: readonly string[], fill: (directory: string) => void): string | undefined {
    if (CACHES === undefined) {
        return undefined;
    }
    const hash = createHash("sha256");
    for (const input of inputs) {
        hash.update(`${input.length}:${input}`);
    }
    const kept = path.join(CACHES, kind, hash.digest("hex"));
    if (!existsSync(kept)) {
        mkdirSync(path.dirname(kept), { recursive: true });
        const fresh = mkdtempSync(`${kept}.filling-`);
        try {
            fill(fresh);
            // As a directory made under the usual umask would be (mkdtemp's is private).
            chmodSync(fresh, 0o755);
            renameSync(fresh, kept);
        } catch (error) {
            rmSync(fresh, { recursive: true, force: true });
            if (!existsSync(kept)) {
                throw error;
            }
        }
    }
    return kept;
}

/**
 * `target` as a tree of hard links to `source`'s files (one file system: the caches and the run's
 * directory share /tmp's), its directories made anew with the same modes.
 */
export function linkTree(source: string, target: string): void {
    mkdirSync(target, { recursive: true });
    chmodSync(target, statSync(source).mode & 0o7777);
    for (const entry of readdirSync(source, { withFileTypes: true })) {
        const from = path.join(source, entry.name);
        const to = path.join(target, entry.name);
        if (entry.isDirectory()) {
            linkTree(from, to);
        } else {
            linkSync(from, to);
        }
    }
}
