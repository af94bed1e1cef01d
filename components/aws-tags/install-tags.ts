/**
 * Install-time tags: what the OpenShift installer recorded in `Infrastructure/cluster`
 * (`config.openshift.io/v1`) at `status.platformStatus.aws.resourceTags`, a list of
 * `{key, value}`. The stack only reads that object: the status belongs to the installer,
 * and the spec has no resourceTags field the API would keep. Pure: no Pulumi imports.
 */
import { TAG_SOURCE_LABELS, userTagIssues } from "./rules";

export const INFRASTRUCTURE_API_VERSION = "config.openshift.io/v1";
export const INFRASTRUCTURE_KIND = "Infrastructure";
export const INFRASTRUCTURE_NAME = "cluster";

export interface InstallTags {
    tags: Record<string, string>;
    /** Why the object yields no tags or which entries were unusable (for one warning each). */
    notes: string[];
    /** Entries that break the tag rules: AWS would refuse them, so the update must stop. */
    problems: string[];
}

/** The install-time tags of an Infrastructure object as the API returns it. */
export function installTagsFromInfrastructure(infrastructure: unknown): InstallTags {
    const platformStatus = (infrastructure as { status?: { platformStatus?: { type?: unknown; aws?: { resourceTags?: unknown } } } } | undefined)
        ?.status?.platformStatus;
    if (!platformStatus) {
        return { tags: {}, notes: ["Infrastructure/cluster has no status.platformStatus: no install-time tags"], problems: [] };
    }
    if (platformStatus.type !== undefined && platformStatus.type !== "AWS") {
        return {
            tags: {},
            notes: [`Infrastructure/cluster status.platformStatus.type is ${JSON.stringify(platformStatus.type)}, not "AWS": no install-time tags`],
            problems: [],
        };
    }
    const entries = platformStatus.aws?.resourceTags;
    if (entries === undefined || entries === null) {
        return { tags: {}, notes: [], problems: [] };
    }
    if (!Array.isArray(entries)) {
        return { tags: {}, notes: [], problems: [`status.platformStatus.aws.resourceTags is not a list: ${JSON.stringify(entries)}`] };
    }
    const tags: Record<string, string> = {};
    const problems: string[] = [];
    entries.forEach((entry: unknown, index) => {
        const { key, value } = (entry ?? {}) as { key?: unknown; value?: unknown };
        if (typeof key !== "string" || typeof value !== "string") {
            problems.push(`status.platformStatus.aws.resourceTags[${index}] is not {key: string, value: string}: ${JSON.stringify(entry)}`);
        } else if (key in tags) {
            problems.push(`status.platformStatus.aws.resourceTags[${index}] repeats the key ${JSON.stringify(key)}`);
        } else {
            tags[key] = value;
        }
    });
    // The API validated these with its own (looser) pattern; AWS resources get only what the rules allow.
    for (const issue of userTagIssues(tags)) {
        problems.push(issue.key === undefined ? `resourceTags: ${issue.message}` : `resourceTags ${JSON.stringify(issue.key)}: ${issue.message}`);
    }
    return { tags, notes: [], problems };
}

/** The error that stops an update when the install-time tags break the rules. */
export function installTagsError(problems: readonly string[]): string {
    return `${TAG_SOURCE_LABELS.install} cannot be applied to AWS resources:\n  - ${problems.join("\n  - ")}`;
}
