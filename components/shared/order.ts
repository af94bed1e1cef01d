/**
 * The one sort order of the repository for names and keys in what the program writes (stack
 * outputs, generated maps, messages, image layers): UTF-16 code-unit order, which is the same on
 * every machine. `localeCompare` depends on the runner's locale and ICU data, so the same stack
 * could preview a diff on another machine. A neutral module: it imports nothing, so the program,
 * the scripts and the admission server (whose image carries it) all import it.
 */

/** Negative, zero or positive as `a` sorts before, with or after `b` in code-unit order. */
export function compareText(a: string, b: string): number {
    return a < b ? -1 : a > b ? 1 : 0;
}

/** A comparator of items by one text field, in code-unit order. */
export function byText<T>(key: (item: T) => string): (a: T, b: T) => number {
    return (a, b) => compareText(key(a), key(b));
}

/** A comparator of `[key, value]` entries by key, in code-unit order. */
export function byEntryKey<V>(a: readonly [string, V], b: readonly [string, V]): number {
    return compareText(a[0], b[0]);
}
