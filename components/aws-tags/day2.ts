/**
 * Day-2 semantics of `aws.userTags` (seed 004, "removed without delete"): a key removed from
 * config stops being managed but stays on the resources that carry it. The stack remembers
 * which keys it manages in a stack output, reads it back through a StackReference to itself,
 * and puts `ignoreChanges` on `tags["<key>"]` for every key it has released, so `pulumi up`
 * neither removes the tag nor reverts later edits to it. Pure: no Pulumi imports.
 *
 * Released keys stay released (and ignored) in every later update, not just the next one:
 * with the ignore gone, the following `pulumi up` would remove the tag after all. A released
 * key that comes back into `aws.userTags` is managed again.
 */

/** The stack output holding the tag key state. */
export const TAG_KEY_STATE_OUTPUT = "awsUserTagKeys";

export interface TagKeyState {
    /** Keys of `aws.userTags` in this update, sorted. */
    managed: string[];
    /** Keys once in `aws.userTags` and since removed: left on resources, no longer managed, sorted. */
    released: string[];
}

export const EMPTY_TAG_KEY_STATE: TagKeyState = { managed: [], released: [] };

/**
 * Reads the previous update's state from its stack output. Anything else (no output on the
 * first update, or a value this version did not write) is reported and treated as empty.
 */
export function parseTagKeyState(value: unknown): { state: TagKeyState; warning?: string } {
    if (value === undefined || value === null) {
        return { state: EMPTY_TAG_KEY_STATE };
    }
    const candidate = value as Partial<Record<keyof TagKeyState, unknown>>;
    const isKeyList = (v: unknown): v is string[] => Array.isArray(v) && v.every((k) => typeof k === "string");
    if (typeof value === "object" && isKeyList(candidate.managed) && isKeyList(candidate.released)) {
        return { state: { managed: [...candidate.managed].sort(), released: [...candidate.released].sort() } };
    }
    return {
        state: EMPTY_TAG_KEY_STATE,
        warning: `the previous update's ${TAG_KEY_STATE_OUTPUT} output is not {managed: string[], released: string[]} (got ${JSON.stringify(value)}); tags removed from aws.userTags before this update will be removed from resources`,
    };
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
 * The stack output holding the install-time tag keys the stack has applied. Install-time tags
 * follow the same rule as user tags (seed 004: a tag removed from the list is not deleted from
 * AWS): a key applied once is left alone afterwards, so it is neither removed when it leaves
 * `status.platformStatus.aws.resourceTags` nor changed. The current keys are only known after
 * the cluster read, and `ignoreChanges` must be known when a resource is declared, so the keys
 * applied by earlier updates are what this update leaves alone: a key is applied at creation
 * (and added to existing resources by the first update that sees it), then never touched again.
 */
export const INSTALL_TAG_KEYS_OUTPUT = "awsInstallTagKeys";

/** Reads the previous update's install-time keys; anything but a list of strings is reported and treated as none. */
export function parseInstallTagKeys(value: unknown): { keys: string[]; warning?: string } {
    if (value === undefined || value === null) {
        return { keys: [] };
    }
    if (Array.isArray(value) && value.every((k) => typeof k === "string")) {
        return { keys: [...new Set(value)].sort() };
    }
    return {
        keys: [],
        warning: `the previous update's ${INSTALL_TAG_KEYS_OUTPUT} output is not a list of keys (got ${JSON.stringify(value)}); install-time tags removed since will be removed from resources`,
    };
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
