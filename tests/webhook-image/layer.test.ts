import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import fc from "fast-check";
import { canonicalGzipEngine } from "../../components/webhook-image/gzip";
import { completeLayer, compressLayer, layerDigests, LayerEntry, normalizedFileMode } from "../../components/webhook-image/layer";

const file = (p: string, text: string, mode = 0o644): LayerEntry => ({ path: p, type: "file", mode, content: Buffer.from(text) });

describe("reproducible layers", () => {
    test("GIVEN files in any order WHEN completed THEN every parent directory is added (0755) and entries are sorted with parents first", () => {
        expect(
            completeLayer([file("app/webhook/main.js", "x"), file("app/package.json", "{}"), file("app/webhook-extra.js", "y")]).map(
                (e) => `${e.type} ${e.mode.toString(8)} ${e.path}`,
            ),
        ).toEqual([
            "directory 755 app",
            "file 644 app/package.json",
            "directory 755 app/webhook",
            "file 644 app/webhook-extra.js",
            "file 644 app/webhook/main.js",
        ]);
    });

    test("GIVEN a path twice, or a file under a file WHEN completed THEN the conflict is named", () => {
        expect(() => completeLayer([file("app/a", "1"), file("app/a", "2")])).toThrow("layer has two entries for /app/a");
        expect(() => completeLayer([file("app/a", "1"), file("app/a/b", "2")])).toThrow(
            "layer entry /app/a/b lies under /app/a, which is a file",
        );
    });

    test("GIVEN source modes WHEN normalized THEN anything executable becomes 0755 and the rest 0644", () => {
        expect([0o600, 0o644, 0o664, 0o700, 0o744, 0o4755, 0o100].map(normalizedFileMode)).toEqual([
            0o644, 0o644, 0o644, 0o755, 0o755, 0o755, 0o755,
        ]);
    });

    test("GIVEN a layer WHEN GNU tar lists it THEN owners are 0/0, names empty, times the epoch, and the gzip header has no name and mtime 0", async () => {
        const layer = await compressLayer(
            completeLayer([
                file("app/main.js", "console.log(1)\n"),
                file("app/bin/run", "#!/bin/sh\n", 0o755),
                { path: "app/link", type: "symlink", mode: 0o777, linkTarget: "main.js" },
            ]),
        );
        const dir = mkdtempSync(path.join(os.tmpdir(), "layer-"));
        try {
            writeFileSync(path.join(dir, "layer.tgz"), layer.blob);
            const listing = execFileSync(
                "tar",
                ["--list", "--verbose", "--numeric-owner", "--full-time", "-zf", path.join(dir, "layer.tgz")],
                { encoding: "utf8", env: { ...process.env, TZ: "UTC" } },
            );
            expect(
                listing
                    .trim()
                    .split("\n")
                    .map((line) =>
                        line
                            .split(/\s+/)
                            .filter((_, i) => i !== 2)
                            .join(" "),
                    ),
            ).toEqual([
                "drwxr-xr-x 0/0 1970-01-01 00:00:00 app/",
                "drwxr-xr-x 0/0 1970-01-01 00:00:00 app/bin/",
                "-rwxr-xr-x 0/0 1970-01-01 00:00:00 app/bin/run",
                "lrwxrwxrwx 0/0 1970-01-01 00:00:00 app/link -> main.js",
                "-rw-r--r-- 0/0 1970-01-01 00:00:00 app/main.js",
            ]);
            // ID1 ID2 CM FLG(no FNAME) MTIME(0) XFL OS(Unix)
            expect([...layer.blob.subarray(0, 10)]).toEqual([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3]);
        } finally {
            rmSync(dir, { recursive: true, force: true });
        }
    });

    test("GIVEN any set of files in any order WHEN layered THEN the digests are the same, the tar digest matches the plan's, and Node's zlib and pako produce the same bytes", async () => {
        const entry = fc.record({
            name: fc.stringMatching(/^[a-z]{1,6}(\/[a-z]{1,6}){0,2}\.js$/),
            text: fc.string({ maxLength: 2000 }),
            executable: fc.boolean(),
        });
        await fc.assert(
            fc.asyncProperty(
                fc.uniqueArray(entry, { selector: (e) => e.name, minLength: 1, maxLength: 12 }),
                fc.infiniteStream(fc.nat()),
                async (entries, seeds) => {
                    const files = entries.map((e) => file(`app/${e.name}`, e.text, e.executable ? 0o755 : 0o644));
                    let shuffled: LayerEntry[];
                    try {
                        shuffled = [...files].sort(() => (seeds.next().value % 3) - 1);
                        completeLayer(files);
                    } catch {
                        return; // a file named like a directory of another: not a layer
                    }
                    const [a, b, c, plan] = await Promise.all([
                        compressLayer(completeLayer(files), "node-zlib"),
                        compressLayer(completeLayer(shuffled), "node-zlib"),
                        compressLayer(completeLayer(files), "pako"),
                        layerDigests(completeLayer(shuffled)),
                    ]);
                    expect(b.digest).toBe(a.digest);
                    expect(c.blob.equals(a.blob)).toBe(true);
                    expect(plan).toEqual({ diffId: a.diffId, uncompressedSize: a.uncompressedSize });
                },
            ),
            { numRuns: 40 },
        );
    });

    test("GIVEN this machine's Node.js WHEN the gzip engine is chosen THEN it is one whose output is reference zlib's", () => {
        expect(["node-zlib", "pako"]).toContain(canonicalGzipEngine());
    });
});
