/**
 * The webhook image changes only when what it runs changes: its content hash (the digest that
 * rolls the webhook Deployment) follows the files the server requires, and its source-tree label
 * follows WEBHOOK_INPUT_PATHS, which name the server and the neutral modules it imports. A helper
 * only the program uses can change without rolling the webhook.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { planImage } from "../../components/webhook-image/build";
import { WEBHOOK_INPUT_PATHS } from "../../components/webhook-image";
import { sourceTreeOf } from "../../components/webhook-image/provenance";
import { imageContent, ROOT, withProject } from "../helpers/webhook-project";

const BASE = `registry.example/base/node:22@sha256:${"1".repeat(64)}`;

describe("the webhook image's content hash", () => {
    const project = withProject("each");

    test("GIVEN a server that requires a neutral module WHEN a compiled module it does not require changes THEN the hash stays; WHEN the neutral module changes THEN it changes", async () => {
        const dist = path.join(project(), "dist");
        mkdirSync(path.join(dist, "components", "shared"), { recursive: true });
        const neutral = path.join(dist, "components", "shared", "names.js");
        const programOnly = path.join(dist, "components", "shared", "labels.js");
        writeFileSync(neutral, 'exports.name = "a";\n');
        writeFileSync(programOnly, "exports.labels = {};\n");
        writeFileSync(path.join(dist, "webhook", "uses-names.js"), 'require("../components/shared/names");\n');
        const hash = async () => (await planImage(imageContent(project(), BASE))).contentHash;

        const before = await hash();
        writeFileSync(programOnly, 'exports.labels = { team: "a" };\n');
        expect(await hash()).toBe(before);
        writeFileSync(neutral, 'exports.name = "b";\n');
        expect(await hash()).not.toBe(before);
    });
});

describe("the webhook image's source-tree label", () => {
    let checkout: string;
    beforeEach(() => {
        checkout = mkdtempSync(path.join(os.tmpdir(), "source-tree-"));
        for (const entry of [...WEBHOOK_INPUT_PATHS, "components/shared/labels.ts"]) {
            mkdirSync(path.dirname(path.join(checkout, entry)), { recursive: true });
            cpSync(path.join(ROOT, entry), path.join(checkout, entry), { recursive: true });
        }
    });
    afterEach(() => rmSync(checkout, { recursive: true, force: true }));

    const edit = (file: string) =>
        writeFileSync(path.join(checkout, file), `${readFileSync(path.join(checkout, file), "utf8")}// edited\n`);

    test("GIVEN the repository's inputs WHEN a program-only helper changes THEN the label stays; WHEN a neutral module the server imports changes THEN it changes", () => {
        const before = sourceTreeOf(checkout, WEBHOOK_INPUT_PATHS);
        edit("components/shared/labels.ts");
        expect(sourceTreeOf(checkout, WEBHOOK_INPUT_PATHS)).toBe(before);
        edit("components/shared/k8s-names.ts");
        expect(sourceTreeOf(checkout, WEBHOOK_INPUT_PATHS)).not.toBe(before);
    });
});
