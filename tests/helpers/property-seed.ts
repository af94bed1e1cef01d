/**
 * The one seed of every property test (fast-check). `tests/setup/property-seed.ts` sets it as
 * fast-check's global seed for every test file, so `fc.assert` and `fc.sample` without a seed of
 * their own replay the same cases on every run; a failing `fc.assert` prints the seed and the
 * shrunk counterexample. `FC_SEED=<n>` replays another population (a run that finds a failure
 * keeps its seed in the message, so it can be replayed the same way).
 */
export const PROPERTY_SEED: number = seedFrom(process.env.FC_SEED);

function seedFrom(value: string | undefined): number {
    if (value === undefined || value === "") {
        return 20261127;
    }
    const seed = Number(value);
    if (!Number.isSafeInteger(seed)) {
        throw new Error(`FC_SEED: ${JSON.stringify(value)} is not an integer seed`);
    }
    return seed;
}
