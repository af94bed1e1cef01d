/**
 * The image's provenance labels (`org.opencontainers.image.source` and `.revision`) from the
 * project's git checkout: the origin remote as a browsable https URL (credentials stripped) and
 * the last commit that touched what the image is built from, so unrelated commits do not
 * change the image's digest.
 */
import { execFileSync } from "node:child_process";

export interface Provenance {
    source?: string;
    revision?: string;
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

function git(projectDirectory: string, args: string[]): string | undefined {
    try {
        const out = execFileSync("git", args, { cwd: projectDirectory, encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] }).trim();
        return out === "" ? undefined : out;
    } catch {
        return undefined;
    }
}

/** Source and revision of `paths` in the checkout at `projectDirectory`; empty outside a git checkout. */
export function gitProvenance(projectDirectory: string, paths: ReadonlyArray<string>): Provenance {
    const remote = git(projectDirectory, ["remote", "get-url", "origin"]);
    const revision = git(projectDirectory, ["log", "-1", "--format=%H", "--", ...paths]);
    return { source: remote === undefined ? undefined : sourceUrlFromRemote(remote), revision };
}
