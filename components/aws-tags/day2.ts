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
