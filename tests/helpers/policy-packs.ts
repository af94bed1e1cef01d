/**
 * Both policy packs, each run as the Pulumi CLI runs it (scripts/policy/analyzer.ts), started once
 * for every test file of a jest entry that asks (a folder's files share one module registry,
 * tests/helpers/test-group.ts) and ended when the worker exits: a pack takes seconds to start,
 * and Configure before each analysis leaves nothing of one test's config to the next.
 */
import type { Packs } from "../../scripts/policy/stacks";
import { startPacks } from "../../scripts/policy/stacks";

let running: Promise<Packs> | undefined;

/** How long a hook or test that may start the packs waits: ts-node type-checks each pack once (its cache then serves). */
export const PACKS_START = 300_000;

export function sharedPacks(): Promise<Packs> {
    running ??= startPacks({ shared: true });
    return running;
}
