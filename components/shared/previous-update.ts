/**
 * What the previous update left behind: the one owner of every stack output this program reads
 * back on its next update (through a StackReference to its own stack). Each key is named once
 * here, with one schema for its value; `readPreviousUpdate` reads and parses them all before the
 * first resource is registered, and every capability takes its typed value from the result.
 * `carriedOutputs` writes them under the same keys, so a key renamed here is renamed for the
 * writer and the reader together (and tests/shared/previous-update.test.ts pins the names that
 * stacks already hold: renaming one would make every existing stack start afresh).
 *
 * A value that does not match its schema (an output edited by hand, or written by a version that
 * used another shape) is reported as a warning naming the key, the expected shape and what the
 * update does without it, and treated as absent.
 */
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";

const stringList = z.array(z.string());

/** Every output the next update reads back: its key, the schema of its value, and what a bad value costs. */
export const CARRIED_OUTPUTS = {
    /** The certificates capability's CA trust state (components/certificates/trust.ts). */
    certificateTrust: {
        schema: z.object({ caBundle: stringList, servingCertificates: z.record(z.string(), z.string()) }),
        shape: "{caBundle: string[], servingCertificates: {[secret]: string}}",
        without: "CA rotation starts afresh (certificates go live at once)",
    },
    /** The aws-tags capability's managed and released `aws.userTags` keys (components/aws-tags/day2.ts). */
    awsUserTagKeys: {
        schema: z.object({ managed: stringList, released: stringList }),
        shape: "{managed: string[], released: string[]}",
        without: "tags removed from aws.userTags before this update will be removed from resources",
    },
    /** The install-time tag keys the stack has applied (components/aws-tags/day2.ts). */
    awsInstallTagKeys: {
        schema: stringList,
        shape: "a list of keys",
        without: "install-time tags removed since will be removed from resources",
    },
    /** The CRDs the stack installed and their fate on removal (components/shared/crd-retention.ts). */
    installedCrds: {
        schema: z.record(
            z.string(),
            z.object({
                owner: z.string(),
                onRemoval: z.enum(["keep", "delete"]),
                conversion: z.literal("webhook").optional(),
                kind: z.string().optional(),
            }),
        ),
        shape: '{[crd]: {owner, onRemoval: "keep" | "delete", conversion?: "webhook", kind?}}',
        without: "this preview cannot name the CRDs that leave the stack",
    },
    /** The kept CRDs whose conversion the stack holds at None, with their kinds (components/shared/crd-retention.ts). */
    conversionResets: {
        schema: z.record(z.string(), z.string()),
        shape: "{[crd]: kind}",
        without: "CRDs whose converting operator left earlier are no longer held at conversion None",
    },
    /** Each operator install's namespace, CSV and previous names (components/operator/rename.ts, `installRecords`). */
    operatorInstalls: {
        schema: z.record(z.string(), z.object({ namespace: z.string(), csv: z.string(), previousNames: stringList.optional() })),
        shape: "{[install]: {namespace, csv, previousNames?}}",
        without:
            "an install renamed without previousNames, or one taking over what a removed install declared for both, is not aliased to it: its creates meet those objects",
    },
    /** Per ClusterBundle, its shares, the roles it aggregates to and what each share copies (components/subscriptions/running-pods.ts). */
    subscriptionShareGrants: {
        schema: z.record(
            z.string(),
            z.object({
                shares: stringList,
                roles: stringList,
                sources: z
                    .record(z.string(), z.object({ kind: z.enum(["Secret", "ConfigMap"]), namespace: z.string(), name: z.string() }))
                    .optional(),
            }),
        ),
        shape: '{<bundle>: {shares: string[], roles: string[], sources?: {<share>: {kind: "Secret" | "ConfigMap", namespace, name}}}}',
        without: "this update cannot keep the shares running pods mount, nor say what they would lose",
    },
} as const;

/** The key of an output the next update reads back. */
export type CarriedKey = keyof typeof CARRIED_OUTPUTS;

/** The typed value of each carried output. */
export type Carried = { -readonly [K in CarriedKey]: z.infer<(typeof CARRIED_OUTPUTS)[K]["schema"]> };

export const CARRIED_KEYS = Object.keys(CARRIED_OUTPUTS) as CarriedKey[];

/** The previous update's outputs, parsed: a key is absent when the update did not write it or wrote something else. */
export interface PreviousUpdate {
    /** The values that matched their schema. */
    readonly values: Readonly<Partial<Carried>>;
    /** One line per output that was there but did not match its schema. */
    readonly warnings: readonly string[];
}

/** The previous update for a stack that has none (its first update, or a stack that is rendered). */
export const NO_PREVIOUS_UPDATE: PreviousUpdate = { values: {}, warnings: [] };

/** Parses the raw outputs (key → value, `undefined` where absent) with their schemas. Pure. */
export function parsePreviousUpdate(raw: Readonly<Partial<Record<CarriedKey, unknown>>>): PreviousUpdate {
    const values: Partial<Record<CarriedKey, unknown>> = {};
    const warnings: string[] = [];
    for (const key of CARRIED_KEYS) {
        const value = raw[key];
        if (value === undefined || value === null) {
            continue;
        }
        const { schema, shape, without } = CARRIED_OUTPUTS[key];
        const parsed = schema.safeParse(value);
        if (parsed.success) {
            values[key] = parsed.data;
        } else {
            warnings.push(`the previous update's ${key} output is not ${shape} (got ${JSON.stringify(value)}); ${without}`);
        }
    }
    return { values: values as Partial<Carried>, warnings };
}

/**
 * Reads every carried output of this stack's previous update, secret or not, and parses it.
 * Called once, before the first resource: the reference is a resource of its own, the only one
 * registered before the providers.
 */
export async function readPreviousUpdate(): Promise<PreviousUpdate> {
    const self = new pulumi.StackReference("previous-update", {
        name: `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
    });
    const raw: Partial<Record<CarriedKey, unknown>> = {};
    for (const key of CARRIED_KEYS) {
        const details = await self.getOutputDetails(key);
        raw[key] = details.value ?? details.secretValue;
    }
    return parsePreviousUpdate(raw);
}

/**
 * This update's carried outputs, under the keys the next update reads: only the ones given (a
 * capability that is off publishes nothing, and its next update reads nothing).
 */
export function carriedOutputs(values: { [K in CarriedKey]?: pulumi.Input<Carried[K]> }): Record<string, pulumi.Input<unknown>> {
    return Object.fromEntries(CARRIED_KEYS.filter((key) => values[key] !== undefined).map((key) => [key, values[key]]));
}
