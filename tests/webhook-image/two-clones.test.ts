/**
 * The same image from every clone (docs/webhook-image.md, *Same digest from every clone*):
 * PKO's workspace, CI and an admin's laptop check the same commit out differently (remote URL as
 * ssh or https or a fork's, full or shallow history, or a Flux archive with no .git at all) and
 * install node_modules separately; the webhook image's content hash, which decides its digest,
 * must not see any of that.
 *
 * No network here, so "installed separately" is simulated with what differs between two real
 * installs of one lockfile: one copy keeps the files' attributes, the other gets fresh mtimes,
 * group-writable modes and npm's hidden lockfile (node_modules/.package-lock.json).
 */
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { planImage } from "../../components/webhook-image/build";
import { Lockfile, productionClosure } from "../../components/webhook-image/closure";
import { checkoutProvenance, provenanceLabels } from "../../components/webhook-image/provenance";
import { SourceError } from "../../components/webhook-image/sources";
import { WEBHOOK_INPUT_PATHS } from "../../components/webhook-image";
import { compileWebhook, imageContent, ROOT } from "../helpers/webhook-project";

const BASE = "gcr.io/distroless/nodejs22-debian12:nonroot@sha256:13593b7570658e8477de39e2f4a1dd25db2f836d68a0ba771251572d23bb4f8e";
const WEBHOOK_PACKAGES = ["@kubernetes/client-node", "pino", "prom-client"];

function git(cwd: string, ...args: string[]): string {
    return execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
}

function closureLocations(): string[] {
    const lockfile = JSON.parse(readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as Lockfile;
    return productionClosure(lockfile, WEBHOOK_PACKAGES, { os: process.platform, cpu: process.arch }).locations;
}

/**
 * Copies the closure's packages into `clone` with cp(1) (`-a` keeps attributes, `-R` gives fresh
 * mtimes): each outermost package once, then the nested node_modules entries that are not in the
 * closure themselves are dropped, so the copy holds exactly the closure.
 */
function installClosure(clone: string, style: "preserve" | "fresh"): void {
    const locations = closureLocations();
    const inClosure = new Set(locations);
    const outermost = locations.filter((location) => !locations.some((other) => location.startsWith(`${other}/`)));
    for (const location of outermost) {
        const target = path.join(clone, location);
        mkdirSync(path.dirname(target), { recursive: true });
        execFileSync("cp", [style === "preserve" ? "-a" : "-R", path.join(ROOT, location), target]);
        dropNestedOutsideClosure(clone, location, inClosure);
    }
    if (style === "fresh") {
        writeFileSync(
            path.join(clone, "node_modules", ".package-lock.json"),
            '{"name":"cluster-platform","lockfileVersion":3,"packages":{}}\n',
        );
        const groupWritable = (directory: string): void => {
            for (const entry of readdirSync(directory, { withFileTypes: true })) {
                const absolute = path.join(directory, entry.name);
                if (entry.isDirectory()) {
                    groupWritable(absolute);
                } else if (entry.isFile()) {
                    chmodSync(absolute, statSync(absolute).mode | 0o020);
                }
            }
        };
        groupWritable(path.join(clone, "node_modules"));
    }
}

function dropNestedOutsideClosure(clone: string, location: string, inClosure: Set<string>): void {
    const nested = path.join(clone, location, "node_modules");
    if (!existsSync(nested)) {
        return;
    }
    for (const entry of readdirSync(nested)) {
        const packages = entry.startsWith("@") ? readdirSync(path.join(nested, entry)).map((name) => `${entry}/${name}`) : [entry];
        for (const name of packages) {
            const packageLocation = `${location}/node_modules/${name}`;
            if (inClosure.has(packageLocation)) {
                dropNestedOutsideClosure(clone, packageLocation, inClosure);
            } else {
                rmSync(path.join(clone, packageLocation), { recursive: true, force: true });
            }
        }
    }
}

/**
 * The content hash and labels a clone's program would give the webhook image. The clone's
 * `dist/` is its own copy of the compile of its content (`compileWebhook`, shared by every
 * checkout of the same sources): what differs between the clones (git metadata, file attributes,
 * npm's hidden lockfile) is no input of the compiler; it could reach the digest only through the
 * provenance labels and the node_modules layer, which each clone gives from its own files.
 */
async function imageOf(clone: string): Promise<{ contentHash: string; labels: Record<string, string> }> {
    compileWebhook(path.join(clone, "dist"), clone);
    const labels = provenanceLabels(checkoutProvenance(clone, WEBHOOK_INPUT_PATHS));
    const plan = await planImage(imageContent(clone, BASE, { labels }));
    return { contentHash: plan.contentHash, labels };
}

describe("the webhook image digest across clones of one commit", () => {
    let workspace: string;
    let laptop: string;
    let ci: string;
    let flux: string;

    beforeAll(() => {
        workspace = mkdtempSync(path.join(os.tmpdir(), "two-clones-"));
        laptop = path.join(workspace, "laptop");
        ci = path.join(workspace, "ci");
        flux = path.join(workspace, "flux");
        const head = git(ROOT, "rev-parse", "HEAD");
        // A full clone whose origin is an ssh URL, and a shallow clone (CI's --depth 1, PKO's
        // shallow: true) whose origin is a fork's https URL.
        git(workspace, "clone", "--quiet", "--no-checkout", ROOT, laptop);
        git(laptop, "checkout", "--quiet", head);
        git(laptop, "remote", "set-url", "origin", "git@github.com:platform-team/cluster-platform.git");
        git(workspace, "init", "--quiet", ci);
        git(ci, "fetch", "--quiet", "--depth", "1", `file://${ROOT}`, head);
        git(ci, "checkout", "--quiet", "FETCH_HEAD");
        git(ci, "remote", "add", "origin", "https://x-access-token:token@github.com/someones-fork/cluster-platform");
        // What a Flux GitRepository artifact holds: the commit's files, no .git.
        mkdirSync(flux);
        execFileSync("sh", ["-c", `git -C "${ROOT}" archive --format=tar ${head} | tar -x -C "${flux}"`]);
        installClosure(laptop, "preserve");
        installClosure(ci, "fresh");
        installClosure(flux, "fresh");
    }, 120_000);

    afterAll(() => {
        rmSync(workspace, { recursive: true, force: true });
    });

    test("GIVEN a full clone with an ssh origin, a shallow clone of a fork over https and a Flux archive, each with its own node_modules WHEN each plans the webhook image THEN all get the same labels and the same content hash", async () => {
        expect(git(ci, "rev-parse", "--is-shallow-repository")).toBe("true");
        expect(existsSync(path.join(flux, ".git"))).toBe(false);
        const [fromLaptop, fromCi, fromFlux] = [await imageOf(laptop), await imageOf(ci), await imageOf(flux)];
        expect(Object.keys(fromLaptop.labels)).toEqual(["dev.cluster-platform.source-tree"]);
        expect(fromCi.labels).toEqual(fromLaptop.labels);
        expect(fromFlux.labels).toEqual(fromLaptop.labels);
        expect(fromCi.contentHash).toBe(fromLaptop.contentHash);
        expect(fromFlux.contentHash).toBe(fromLaptop.contentHash);
    }, 180_000);

    test("GIVEN a checkout whose webhook source differs by one byte WHEN its source tree is taken THEN the label differs", () => {
        const main = path.join(ci, "webhook", "main.ts");
        const original = readFileSync(main);
        try {
            const before = checkoutProvenance(ci, WEBHOOK_INPUT_PATHS).sourceTree;
            writeFileSync(main, Buffer.concat([original, Buffer.from(" ")]));
            expect(checkoutProvenance(ci, WEBHOOK_INPUT_PATHS).sourceTree).not.toBe(before);
        } finally {
            writeFileSync(main, original);
        }
    });

    test("GIVEN a clone whose node_modules holds another version of a package than the lockfile WHEN it plans the image THEN it refuses, naming both versions, instead of building another digest", async () => {
        const pino = path.join(ci, "node_modules", "pino", "package.json");
        const manifest = JSON.parse(readFileSync(pino, "utf8")) as { version: string };
        const locked = manifest.version;
        writeFileSync(pino, JSON.stringify({ ...manifest, version: "0.0.1" }));
        try {
            await expect(planImage(imageContent(ci, BASE))).rejects.toEqual(
                new SourceError([`node_modules/pino is pino@0.0.1 but package-lock.json names pino@${locked}: run npm ci`]),
            );
        } finally {
            writeFileSync(pino, JSON.stringify(manifest));
        }
    });
});
