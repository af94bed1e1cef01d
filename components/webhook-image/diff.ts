/**
 * Whether the published image changes: the provider's `diff`, the only call a no-change preview
 * or update makes to it. Neutral, like components/shared/dynamic-module.ts: it imports nothing at
 * run time, so the SDK serializes `diffImage` by value into the provider's closure, and the
 * dynamic-provider host answers `diff` without loading the operations module, its libraries and
 * a TypeScript loader (about 0.7 s of that process's CPU on every preview: docs/performance.md).
 */
import type { WebhookImageInputs, WebhookImageOutputs } from "./operations";

export interface DiffOutcome {
    changes: boolean;
    replaces: string[];
    deleteBeforeReplace: boolean;
}

/** Inputs whose change means a different image somewhere else: a new resource, not an update. */
const REPLACING_INPUTS = ["repository", "output", "layoutDirectory"] as const;

/**
 * No change when the content hash, destination and delete policy are the same: an unchanged
 * webhook shows nothing in a preview, wherever the project is checked out.
 */
export function diffImage(olds: Partial<WebhookImageOutputs>, news: WebhookImageInputs): DiffOutcome {
    const replaces = REPLACING_INPUTS.filter((key) => (olds[key] ?? null) !== (news[key] ?? null));
    const changes =
        replaces.length > 0 ||
        olds.contentHash !== news.contentHash ||
        olds.deleteOnDestroy !== news.deleteOnDestroy ||
        olds.digest === undefined;
    return { changes, replaces: [...replaces], deleteBeforeReplace: false };
}
