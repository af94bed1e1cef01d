/**
 * The pure parts of `npm run bench:real` (scripts/bench/real.ts): its sizes, the stacks it grows
 * and the marginal cost it prints. The benchmark itself runs on the real engine
 * (tests/real/bench.real.ts, at its smallest size).
 */
import { formatMarginals, parseSizes, type RealBenchResult } from "../../scripts/bench/real";

function result(
    family: "clusterBundles" | "operators",
    size: number,
    resources: number,
    preview: number,
    floorPreview: number,
): RealBenchResult {
    return {
        scenario: { family, size },
        resources,
        upSeconds: preview * 4,
        floorUpSeconds: floorPreview * 4,
        previewSeconds: preview,
        floorPreviewSeconds: floorPreview,
    };
}

describe("bench:real sizes", () => {
    test("GIVEN the default sizes WHEN parsed THEN five scenarios in order", () => {
        expect(parseSizes("clusterBundles:10,100,500;operators:10,50")).toEqual([
            { family: "clusterBundles", size: 10 },
            { family: "clusterBundles", size: 100 },
            { family: "clusterBundles", size: 500 },
            { family: "operators", size: 10 },
            { family: "operators", size: 50 },
        ]);
    });

    test("GIVEN an unknown family, a zero and a non-number WHEN parsed THEN one error names all three and the expected form", () => {
        expect(() => parseSizes("bundles:10;operators:0,x")).toThrow(
            'BENCH_SIZES="bundles:10;operators:0,x": family "bundles" is not clusterBundles or operators; size "0" of operators is not a positive integer; size "x" of operators is not a positive integer (expected e.g. "clusterBundles:10,100,500;operators:10,50")',
        );
        expect(() => parseSizes(" ; ")).toThrow('BENCH_SIZES=" ; ": no scenario');
    });
});

describe("bench:real marginal cost", () => {
    test("GIVEN three sizes of a family WHEN the marginals are formatted THEN the slope between the smallest and largest, program and floor, in ms per resource", () => {
        const lines = formatMarginals([
            result("clusterBundles", 100, 400, 9, 5),
            result("clusterBundles", 10, 100, 6, 2),
            result("clusterBundles", 500, 1600, 21, 17),
            result("operators", 10, 200, 7, 3),
        ]);
        // (21 - 6) s over 1,500 added resources = 10.0 ms; the floor (17 - 2) s = 10.0 ms; up is 4× both.
        expect(lines).toEqual([
            "bench:real family=clusterBundles resources=100..1600 marginal_preview_ms_per_resource=10.0 floor_marginal_preview_ms_per_resource=10.0 marginal_up_ms_per_resource=40.0 floor_marginal_up_ms_per_resource=40.0 goal=met",
        ]);
    });
});
