/**
 * The image's provenance labels, made only of what every clone of one commit agrees on, so
 * that PKO's workspace, CI and an admin's laptop build the same digest for the same commit:
 *
 * - `org.opencontainers.image.source` comes from package.json's `repository` field (committed
 *   content), never from the clone's `origin` remote, which differs between clones (ssh or
 *   https, credentials, a fork, PKO's `projectRepo` as written).
 * - `dev.cluster-platform.source-tree` identifies the webhook's inputs by content: a sha256
 *   over the path, executable bit and sha256 of every input file, read from the checkout
 *   itself. Not from git: the last commit touching those paths, which the image used to carry,
 *   is not the same in a shallow clone (CI's `--depth 1`, PKO's `shallow: true`;
 *   pulumi/pulumi-kubernetes-operator operator/api/pulumi/shared/stack_types.go
 *   `GitSource.Shallow`), and a Flux source reaches PKO's workspace as an archive without `.git`
 *   (`fluxSource`), where no git command answers at all.
 */
import { createHash } from "node:crypto";
import { readdirSync, readFileSync, statSync } from "node:fs";
import * as path from "node:path";
import { LABELS } from "./image-config";

export interface Provenance {
    /** Where the source lives (an https URL), from package.json's `repository`. */
    source?: string;
    /** `sha256:<hex>` over the input files' paths, executable bits and contents. */
    sourceTree?: string;
}

/**
 * A git remote as an https URL without credentials or `.git`, or undefined for what is not
 * a network remote (a local path, a file:// URL).
 */
export function sourceUrlFromRemote(remote: string): string | undefined {
    const text = remote.trim();
    const scp = /^(?:[^@/\s]+@)?([^:/\s]+):(?!\/)(.+)$/.exec(text);
    if (scp && !text.includes("://")) {
        return `https://${scp[1]}/${scp[2].replace(/\.git$/, "").replace(/\/+$/, "")}`;
    }
    let url: URL;
    try {
        url = new URL(text);
    } catch {
        return undefined;
    }
    if (!["https:", "http:", "ssh:", "git:"].includes(url.protocol)) {
        return undefined;
    }
    const pathname = url.pathname.replace(/\.git$/, "").replace(/\/+$/, "");
    return `https://${url.hostname}${pathname}`;
}

/** npm's hosted-git shorthands (`github:o/r`, `gitlab:o/r`, `bitbucket:o/r`, bare `o/r` = GitHub). */
const SHORTHAND_HOSTS: Record<string, string> = { github: "github.com", gitlab: "gitlab.com", bitbucket: "bitbucket.org" };

/**
 * The source URL package.json's `repository` names (a string, or `{ type, url }` as npm
 * documents it: docs.npmjs.com/cli/configuring-npm/package-json#repository), or undefined.
 */
export function sourceUrlFromRepositoryField(repository: unknown): string | undefined {
    const text =
        typeof repository === "string"
            ? repository
            : typeof repository === "object" && repository !== null
              ? (repository as { url?: unknown }).url
              : undefined;
    if (typeof text !== "string") {
        return undefined;
    }
    const shorthand = /^(?:(github|gitlab|bitbucket):)?([\w.-]+\/[\w.-]+)$/.exec(text.trim());
    if (shorthand) {
        return `https://${SHORTHAND_HOSTS[shorthand[1] ?? "github"]}/${shorthand[2].replace(/\.git$/, "")}`;
    }
    return sourceUrlFromRemote(text.replace(/^git\+/, ""));
}

/** Files under `entry` (a file or a directory), skipping dot-entries (`.git`, editor state) and node_modules. */
function inputFiles(root: string, entry: string, out: string[]): void {
    const absolute = path.join(root, entry);
    let stat;
    try {
        stat = statSync(absolute);
    } catch {
        return;
    }
    if (stat.isFile()) {
        out.push(entry);
        return;
    }
    if (!stat.isDirectory()) {
        return;
    }
    for (const name of readdirSync(absolute)) {
        if (!name.startsWith(".") && name !== "node_modules") {
            inputFiles(root, path.join(entry, name), out);
        }
    }
}

/**
 * The content identity of `paths` in the checkout at `projectDirectory`: the same in every
 * checkout of a commit (full or shallow clone, any remote, a Flux archive, any location), and the
 * same across commits that leave them alone; undefined when none of them exists.
 */
export function sourceTreeOf(projectDirectory: string, paths: ReadonlyArray<string>): string | undefined {
    const files: string[] = [];
    for (const entry of paths) {
        inputFiles(projectDirectory, entry, files);
    }
    if (files.length === 0) {
        return undefined;
    }
    const lines = files
        .map((file) => {
            const absolute = path.join(projectDirectory, file);
            const executable = (statSync(absolute).mode & 0o111) !== 0 ? "755" : "644";
            return `${executable} ${createHash("sha256").update(readFileSync(absolute)).digest("hex")} ${file.split(path.sep).join("/")}`;
        })
        .sort();
    return `sha256:${createHash("sha256")
        .update(`${lines.join("\n")}\n`)
        .digest("hex")}`;
}

function packageRepository(projectDirectory: string): unknown {
    try {
        return (JSON.parse(readFileSync(path.join(projectDirectory, "package.json"), "utf8")) as { repository?: unknown }).repository;
    } catch {
        return undefined;
    }
}

/** Source and content identity of `paths` in the checkout at `projectDirectory`. */
export function checkoutProvenance(projectDirectory: string, paths: ReadonlyArray<string>): Provenance {
    return { source: sourceUrlFromRepositoryField(packageRepository(projectDirectory)), sourceTree: sourceTreeOf(projectDirectory, paths) };
}

/** The image labels for a provenance (only those known). */
export function provenanceLabels(provenance: Provenance): Record<string, string> {
    const labels: Record<string, string> = {};
    if (provenance.source !== undefined) {
        labels[LABELS.source] = provenance.source;
    }
    if (provenance.sourceTree !== undefined) {
        labels[LABELS.sourceTree] = provenance.sourceTree;
    }
    return labels;
}
