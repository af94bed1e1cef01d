import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import type { z } from "zod";
import { SECTION_NAMES, SECTIONS } from "../../components/config/schema";
import { configReferenceRows } from "../../components/config/reference";
import { CONFIG_NAMESPACE } from "../../components/shared/problems";
import { isRecord } from "../../components/shared/records";
import { ROOT } from "../helpers/render";

type Def = { type: string; innerType?: z.ZodType; shape?: Record<string, z.ZodType>; element?: z.ZodType; in?: z.ZodType };
const defOf = (schema: z.ZodType) => (schema as unknown as { _zod: { def: Def } })._zod.def;

/** The schema of one reference key (`section.field[].field`), found by walking the zod schema itself. */
function schemaAt(key: string): z.ZodType {
    const [section, ...rest] = key.slice(`${CONFIG_NAMESPACE}:`.length).split(".");
    let schema: z.ZodType = SECTIONS[section.replace("[]", "") as keyof typeof SECTIONS];
    const steps = [section, ...rest];
    for (const [i, step] of steps.entries()) {
        const field = step.replace("[]", "");
        if (i > 0) schema = objectOf(schema).shape![field];
        if (step.endsWith("[]")) schema = arrayOf(schema).element!;
    }
    return schema;
}
function unwrap(schema: z.ZodType, wanted: string): Def {
    let def = defOf(schema);
    while (def.type !== wanted) {
        const next = def.innerType ?? def.in;
        if (next === undefined) throw new Error(`no ${wanted} inside a ${def.type}`);
        def = defOf(next);
    }
    return def;
}
const objectOf = (schema: z.ZodType) => unwrap(schema, "object");
const arrayOf = (schema: z.ZodType) => unwrap(schema, "array");

/** What the program gets when the key is left out: the schema's own default, by parsing nothing. */
const actualDefault = (key: string): unknown => schemaAt(key).safeParse(undefined).data;

const rows = configReferenceRows();

describe("every config default is the schema's, wherever it is written", () => {
    test("GIVEN every reference row (docs/config-reference.md) WHEN its documented default is parsed by the key's schema THEN it is what leaving the key out gives, and a key without a documented default has none", () => {
        // A prefault documents its input (`{}`), which the schema parses to the full default.
        const disagreements = rows
            .map((row) => ({ row, documented: row.default === undefined ? undefined : schemaAt(row.key).parse(JSON.parse(row.default)) }))
            .filter(({ row, documented }) => JSON.stringify(documented) !== JSON.stringify(actualDefault(row.key)))
            .map(
                ({ row, documented }) =>
                    `${row.key}: documented ${JSON.stringify(documented)}, actual ${JSON.stringify(actualDefault(row.key))}`,
            );
        expect(disagreements).toEqual([]);
    });

    test("GIVEN the aws section, whose prefault is parsed WHEN it is left out THEN it parses as an explicit empty section does", () => {
        expect(SECTIONS.aws.parse(undefined)).toEqual(SECTIONS.aws.parse({}));
        expect(rows.find((row) => row.key === `${CONFIG_NAMESPACE}:aws`)?.default).toBe(JSON.stringify({ enabled: false, userTags: {} }));
    });

    test("GIVEN Pulumi.yaml's config block WHEN each section's declared default is parsed THEN it gives the same config as leaving the key out", () => {
        const config = (parse(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8")) as { config: Record<string, { default?: unknown }> })
            .config;
        const disagreements = SECTION_NAMES.filter((name) => config[name].default !== undefined).filter(
            (name) => JSON.stringify(SECTIONS[name].parse(config[name].default)) !== JSON.stringify(SECTIONS[name].parse(undefined)),
        );
        expect(disagreements).toEqual([]);
        expect(SECTION_NAMES.filter((name) => config[name].default === undefined)).toEqual(
            SECTION_NAMES.filter((name) => !SECTIONS[name].safeParse(undefined).success || SECTIONS[name].parse(undefined) === undefined),
        );
    });

    test("GIVEN every object key with a default WHEN it is left out THEN it parses as an empty object does: its default is its fields' defaults, not a second copy", () => {
        const copies = rows
            .filter((row) => {
                const left = schemaAt(row.key).safeParse(undefined);
                return left.success && isRecord(left.data) && schemaAt(row.key).safeParse({}).success;
            })
            .filter((row) => JSON.stringify(actualDefault(row.key)) !== JSON.stringify(schemaAt(row.key).parse({})))
            .map((row) => row.key);
        expect(copies).toEqual([]);
    });

    test("GIVEN a section default WHEN a field default inside it is read THEN the section's default is built from it (no second copy)", () => {
        const subscriptions = SECTIONS.subscriptions.parse(undefined);
        expect(subscriptions.webhook).toEqual(actualDefault(`${CONFIG_NAMESPACE}:subscriptions.webhook`));
        expect(subscriptions.webhook.replicas).toBe(actualDefault(`${CONFIG_NAMESPACE}:subscriptions.webhook.replicas`));
        expect(SECTIONS.certificates.parse(undefined).caValidityDays).toBe(
            actualDefault(`${CONFIG_NAMESPACE}:certificates.caValidityDays`),
        );
    });
});

/**
 * Descriptions that state a default in words, each with what the words claim. A new description
 * that mentions a default fails the first test until its claim is written here and checked.
 */
const STATED_DEFAULTS: Record<string, (value: unknown) => boolean> = {
    "subscriptions.webhook.image": (v) => v === undefined, // computed by the program: the built image's digest
    "subscriptions.sharedResourceDriver.serviceAccount": (v) =>
        JSON.stringify(v) === JSON.stringify({ name: "csi-driver-shared-resource", namespace: "openshift-builds" }),
    "operators[].deleteCrdsOnRemoval": (v) => v === false, // "default: kept"
    "aws.imageRegistryStorage": (v) => (v as { enabled?: unknown }).enabled === false, // "off by default"
    "webhookImage.baseImage": (v) =>
        typeof v === "string" && /^gcr\.io\/distroless\/nodejs22-debian12:nonroot@sha256:[0-9a-f]{64}$/.test(v), // "distroless Node.js 22 (nonroot)"
    "webhookImage.output": (v) => v === undefined, // chosen by the program from cluster.renderYamlToDirectory
    "webhookImage.deleteOnDestroy": (v) => v === false, // "by default images stay"
    "reconcile.stack": (v) => v === undefined, // "default: this stack"
    "reconcile.git.directory": (v) => v === undefined, // "default: its root"
    "reconcile.backend": (v) => v === undefined, // "default: Pulumi Cloud"
    "reconcile.resyncFrequencySeconds": (v) => v === undefined, // derived from certificates.renewBeforeDays
};

describe("config descriptions that state a default", () => {
    const stating = rows.filter((row) => /\bdefault\b/i.test(row.description)).map((row) => row.key.slice(`${CONFIG_NAMESPACE}:`.length));

    test("GIVEN every description WHEN it mentions a default THEN its claim is listed to be checked", () => {
        expect(stating.sort()).toEqual(Object.keys(STATED_DEFAULTS).sort());
    });

    test("GIVEN each description's stated default WHEN compared with the schema's actual default THEN the claim holds", () => {
        const wrong = Object.entries(STATED_DEFAULTS)
            .filter(([key, holds]) => !holds(actualDefault(`${CONFIG_NAMESPACE}:${key}`)))
            .map(([key]) => `${key}: actual ${JSON.stringify(actualDefault(`${CONFIG_NAMESPACE}:${key}`))}`);
        expect(wrong).toEqual([]);
    });
});
