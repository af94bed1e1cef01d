/**
 * The real tier's one retry: only where the API server (or a controller, or a cache of the
 * webhook's) is eventually consistent, each use naming why, bounded in time, and never past an
 * answer that is wrong rather than pending. `attempt` returns the value once the condition holds,
 * `undefined` while it is still pending, and throws for any answer that must not be retried (a
 * denial with another message, an error of another kind): that fails at once, so a briefly wrong
 * answer is not hidden behind later right ones.
 */
export async function eventually<T>(
    why: string,
    attempt: () => T | undefined | Promise<T | undefined>,
    options: { timeoutMs?: number; intervalMs?: number; describe?: () => string } = {},
): Promise<T> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const deadline = Date.now() + timeoutMs;
    for (let tries = 1; ; tries++) {
        const value = await attempt();
        if (value !== undefined) {
            return value;
        }
        if (Date.now() > deadline) {
            const last = options.describe ? `; last seen: ${options.describe()}` : "";
            throw new Error(`still pending after ${tries} tries in ${timeoutMs} ms (retried because ${why})${last}`);
        }
        await new Promise((r) => setTimeout(r, options.intervalMs ?? 250));
    }
}
