/**
 * The image's provenance labels, made only of what every clone of one commit agrees on, so
 * that PKO's workspace, CI and an admin's laptop build the same digest for the same commit:
 *
 * - `org.opencontainers.image.source` comes from package.json's `repository` field (committed
 *   content), never from the clone's `origin` remote, which differs between clones (ssh or
 *   https, credentials, a fork, PKO's `projectRepo` as written).
 * - `dev.cluster-platform.source-tree` identifies the webhook's inputs by content: a sha256
 *   over `git ls-tree -r HEAD -- <paths>` (mode, git blob id and path of every input file).
 *   The last commit touching those paths, which the image used to carry, is not the same in a
 *   shallow clone (CI's `--depth 1`, PKO's `shallow: true`; pulumi/pulumi-kubernetes-operator
 *   operator/api/pulumi/shared/stack_types.go `GitSource.Shallow`), where every file's last
 *   commit is the one checked out.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import * as path from "node:path";
import { LABELS } from "./image-config";

export interface Provenance {
    /** Where the source lives (an https URL), from package.json's `repository`. */
    source?: string;
    /** `sha256:<hex>` over the git tree entries of the inputs at HEAD. */
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
    const text = typeof repository === "string" ? repository : typeof repository === "object" && repository !== null ? (repository as { url?: unknown }).url : undefined;
    if (typeof text !== "string") {
        return undefined;
    }
    const shorthand = /^(?:(github|gitlab|bitbucket):)?([\w.-]+\/[\w.-]+)$/.exec(text.trim());
    if (shorthand) {
        return `https://${SHORTHAND_HOSTS[shorthand[1] ?? "github"]}/${shorthand[2].replace(/\.git$/, "")}`;
    }
    return sourceUrlFromRemote(text.replace(/^git\+/, ""));
}

function git(projectDirectory: string, args: string[]): string | undefined {
    try {
        const out = execFileSync("git", args, { cwd: projectDirectory, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
        return out === "" ? undefined : out;
    } catch {
        return undefined;
    }
}

/**
 * The content identity of `paths` at HEAD: the same in every clone of a commit (full or
 * shallow, any remote, any location of the project inside the repository, since git prints
 * paths relative to the working directory), and the same across commits that leave them alone.
 */
export function sourceTreeOf(projectDirectory: string, paths: ReadonlyArray<string>): string | undefined {
    const listing = git(projectDirectory, ["ls-tree", "-r", "HEAD", "--", ...paths]);
    return listing === undefined ? undefined : `sha256:${createHash("sha256").update(`${listing}\n`).digest("hex")}`;
}

function packageRepository(projectDirectory: string): unknown {
    try {
        return (JSON.parse(readFileSync(path.join(projectDirectory, "package.json"), "utf8")) as { repository?: unknown }).repository;
    } catch {
        return undefined;
    }
}

/** Source and content identity of `paths` in the checkout at `projectDirectory`; no source tree outside a git checkout. */
export function gitProvenance(projectDirectory: string, paths: ReadonlyArray<string>): Provenance {
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
