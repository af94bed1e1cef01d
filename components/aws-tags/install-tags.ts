/**
 * Install-time tags: what the OpenShift installer recorded in `Infrastructure/cluster`
 * (`config.openshift.io/v1`) at `status.platformStatus.aws.resourceTags`, a list of
 * `{key, value}` (openshift/api config/v1/types_infrastructure.go, `AWSPlatformStatus`:
 * `+listType=atomic`, at most 25). The stack only reads `status`: it belongs to the installer.
 * Pure: no Pulumi imports.
 *
 * An entry this stack cannot apply (malformed, repeated, or breaking the stricter rules of
 * rules.ts) is left out with a warning naming it; the other install-time tags still apply and
 * the update goes on (seed 004: operators apply what they can, a bad tag on the cluster object
 * is not the admin's config error).
 */
import { userTagIssues } from "./rules";

export const INFRASTRUCTURE_API_VERSION = "config.openshift.io/v1";
export const INFRASTRUCTURE_KIND = "Infrastructure";
export const INFRASTRUCTURE_NAME = "cluster";

const FIELD = "Infrastructure/cluster status.platformStatus.aws.resourceTags";

export interface InstallTags {
    tags: Record<string, string>;
    /** One warning each: why the object yields no tags, or which entries were left out and why. */
    notes: string[];
}

/** The install-time tags of an Infrastructure object as the API returns it. */
export function installTagsFromInfrastructure(infrastructure: unknown): InstallTags {
    const platformStatus = (
        infrastructure as { status?: { platformStatus?: { type?: unknown; aws?: { resourceTags?: unknown } } } } | undefined
    )?.status?.platformStatus;
    if (!platformStatus) {
        return { tags: {}, notes: ["Infrastructure/cluster has no status.platformStatus: no install-time tags"] };
    }
    if (platformStatus.type !== undefined && platformStatus.type !== "AWS") {
        return {
            tags: {},
            notes: [
                `Infrastructure/cluster status.platformStatus.type is ${JSON.stringify(platformStatus.type)}, not "AWS": no install-time tags`,
            ],
        };
    }
    const entries = platformStatus.aws?.resourceTags;
    if (entries === undefined || entries === null) {
        return { tags: {}, notes: [] };
    }
    if (!Array.isArray(entries)) {
        return { tags: {}, notes: [`${FIELD} is not a list: ${JSON.stringify(entries)}; no install-time tags are applied`] };
    }
    const tags: Record<string, string> = {};
    const notes: string[] = [];
    entries.forEach((entry: unknown, index) => {
        const { key, value } = (entry ?? {}) as { key?: unknown; value?: unknown };
        if (typeof key !== "string" || typeof value !== "string") {
            notes.push(`${FIELD}[${index}] is not {key: string, value: string}: ${JSON.stringify(entry)}; left out`);
        } else if (key in tags) {
            notes.push(
                `${FIELD}[${index}] repeats the key ${JSON.stringify(key)}; the first value ${JSON.stringify(tags[key])} is applied`,
            );
        } else {
            tags[key] = value;
        }
    });
    // The API validated these with its own (looser) pattern; AWS resources get only what the rules allow.
    const leftOut = new Set<string>();
    for (const issue of userTagIssues(tags)) {
        if (issue.key === undefined) {
            notes.push(`${FIELD}: ${issue.message}`);
        } else {
            notes.push(
                `${FIELD} ${JSON.stringify(issue.key)}: ${issue.message}; this tag is left out, the other install-time tags are applied`,
            );
            leftOut.add(issue.key);
        }
    }
    return { tags: Object.fromEntries(Object.entries(tags).filter(([key]) => !leftOut.has(key))), notes };
}
