/**
 * How the real tier's files are spread over clusters (scripts/real/shards.ts): every file once,
 * the recorded slow ones apart, and a recorded time for every file.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { RECORDED_SECONDS, shardFiles } from "../../scripts/real/shards";

describe("real-tier shards", () => {
    test("GIVEN the recorded files and unlisted ones WHEN split in two THEN every file is in exactly one shard and the two slowest are apart", () => {
        const files = [...Object.keys(RECORDED_SECONDS), "a.real.ts", "b.real.ts"].map((f) => `/repo/tests/real/${f}`);
        const shards = shardFiles(files, 2);
        expect(shards).toHaveLength(2);
        expect(shards.flat().sort()).toEqual([...files].sort());
        const slowest = Object.entries(RECORDED_SECONDS)
            .sort((a, b) => b[1] - a[1])
            .slice(0, 2)
            .map(([f]) => `/repo/tests/real/${f}`);
        expect(shards.map((s) => slowest.filter((f) => s.includes(f)).length)).toEqual([1, 1]);
    });

    test("GIVEN the real tier's files WHEN their recorded times are looked up THEN each file has one, and no recorded name is a file that is gone", () => {
        const files = fs
            .readdirSync(path.join(__dirname, "..", "real"))
            .filter((name) => name.endsWith(".real.ts"))
            .sort();
        expect(Object.keys(RECORDED_SECONDS).sort()).toEqual(files);
    });

    test("GIVEN one shard or fewer files than shards WHEN split THEN no empty shard", () => {
        expect(shardFiles(["/r/x.real.ts", "/r/y.real.ts"], 1)).toEqual([["/r/x.real.ts", "/r/y.real.ts"]]);
        expect(shardFiles(["/r/x.real.ts"], 3)).toEqual([["/r/x.real.ts"]]);
    });
});
