/**
 * Day-2 semantics of `aws.userTags` (seed 004, "removed without delete"): a key removed from
 * config stops being managed but stays on the resources that carry it. The stack remembers
 * which keys it manages in a stack output, reads it back on the next update (components/shared/previous-update.ts),
 * and puts `ignoreChanges` on `tags["<key>"]` for every key it has released, so `pulumi up`
 * neither removes the tag nor reverts later edits to it. Pure: no Pulumi imports.
 *
 * Released keys stay released (and ignored) in every later update, not just the next one:
 * with the ignore gone, the following `pulumi up` would remove the tag after all. A released
 * key that comes back into `aws.userTags` is managed again.
 */

export interface TagKeyState {
    /** Keys of `aws.userTags` in this update, sorted. */
    managed: string[];
    /** Keys once in `aws.userTags` and since removed: left on resources, no longer managed, sorted. */
    released: string[];
}

export const EMPTY_TAG_KEY_STATE: TagKeyState = { managed: [], released: [] };

/**
 * The previous update's state (its `awsUserTagKeys` output, shape-checked where it is read:
 * components/shared/previous-update.ts), sorted; empty on the first update.
 */
export function previousTagKeyState(previous: TagKeyState | undefined): TagKeyState {
    return previous ? { managed: [...previous.managed].sort(), released: [...previous.released].sort() } : EMPTY_TAG_KEY_STATE;
}

/** This update's state: the keys configured now, and every key managed or released before and not configured now. */
export function nextTagKeyState(previous: TagKeyState, configuredKeys: Iterable<string>): TagKeyState {
    const managed = [...new Set(configuredKeys)].sort();
    const current = new Set(managed);
    const released = [...new Set([...previous.released, ...previous.managed])].filter((k) => !current.has(k)).sort();
    return { managed, released };
}

/** The property path of one tag in a map-shaped `tags` input, as `ignoreChanges` takes it. */
export function tagPropertyPath(key: string): string {
    return `tags[${JSON.stringify(key)}]`;
}

/**
 * `ignoreChanges` entries for a resource with map-shaped tags: every released key except the
 * ones the resource sets itself (those it still manages).
 */
export function releasedTagIgnores(released: readonly string[], ownKeys: Iterable<string> = []): string[] {
    const own = new Set(ownKeys);
    return released.filter((k) => !own.has(k)).map(tagPropertyPath);
}

// ---------------------------------------------------------------- install-time tags

/**
 * The install-time tag keys the stack has applied (its `awsInstallTagKeys` output). Install-time tags
 * follow the same rule as user tags (seed 004: a tag removed from the list is not deleted from
 * AWS): a key applied once is left alone afterwards, so it is neither removed when it leaves
 * `status.platformStatus.aws.resourceTags` nor changed. The current keys are only known after
 * the cluster read, and `ignoreChanges` must be known when a resource is declared, so the keys
 * applied by earlier updates are what this update leaves alone: a key is applied at creation
 * (and added to existing resources by the first update that sees it), then never touched again.
 */
/** The previous update's install-time keys (shape-checked where read), deduplicated and sorted; none on the first update. */
export function previousInstallTagKeys(previous: readonly string[] | undefined): string[] {
    return [...new Set(previous ?? [])].sort();
}

/** The install-time keys to record for the next update: every key applied so far. */
export function nextInstallTagKeys(previous: readonly string[], current: Iterable<string>): string[] {
    return [...new Set([...previous, ...current])].sort();
}

/**
 * The keys every tagged resource leaves alone (`ignoreChanges`): keys released from
 * `aws.userTags`, and install-time keys applied by an earlier update, except the keys
 * `aws.userTags` sets now (those it manages).
 */
export function unmanagedTagKeys(userKeys: TagKeyState, previousInstallKeys: readonly string[]): string[] {
    const configured = new Set(userKeys.managed);
    return [...new Set([...userKeys.released, ...previousInstallKeys])].filter((k) => !configured.has(k)).sort();
}
