/** The tests' calendar: one day in milliseconds, and the fixed instant certificate tests start from. */
export const DAY = 24 * 3600 * 1000;
export const T0 = new Date("2026-01-01T00:00:00Z");
