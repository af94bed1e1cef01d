/**
 * The one owner of what the previous update left behind (components/shared/previous-update.ts):
 * the keys existing stacks hold, one schema per key, and the round trip from what one update
 * writes to what the next one reads.
 */
import * as path from "node:path";
import { CARRIED_KEYS, parsePreviousUpdate } from "../../components/shared/previous-update";
import { ClusterState } from "../../scripts/render/cluster-state";
import { readConfigFile } from "../../scripts/render/config-file";
import { renderProgram } from "../../scripts/render/render";
import { ROOT } from "../helpers/render";
import { tlsComputed } from "../helpers/tls-signer";

describe("the outputs the next update reads back", () => {
    test("GIVEN the owner module THEN its keys are exactly the names existing stacks hold (renaming one resets that state on every stack)", () => {
        expect([...CARRIED_KEYS].sort()).toEqual([
            "awsInstallTagKeys",
            "awsUserTagKeys",
            "certificateTrust",
            "conversionResets",
            "installedCrds",
            "operatorInstalls",
            "subscriptionShareGrants",
        ]);
    });

    test("GIVEN no previous update WHEN parsed THEN nothing is read and nothing is warned", () => {
        expect(parsePreviousUpdate({})).toEqual({ values: {}, warnings: [] });
        expect(parsePreviousUpdate({ certificateTrust: null })).toEqual({ values: {}, warnings: [] });
    });

    test("GIVEN a value of the right shape for every key WHEN parsed THEN each comes back as it was", () => {
        const raw = {
            certificateTrust: { caBundle: ["ca"], servingCertificates: { "ns/secret": "pem" } },
            awsUserTagKeys: { managed: ["b"], released: ["a"] },
            awsInstallTagKeys: ["k"],
            installedCrds: {
                "x.io": { owner: "operator a", onRemoval: "keep" },
                "y.io": { owner: "operator b", onRemoval: "keep", conversion: "webhook", kind: "Y" },
            },
            conversionResets: { "z.io": "Z" },
            operatorInstalls: { a: { namespace: "ops", csv: "a.v1", previousNames: ["z"] }, b: { namespace: "ops", csv: "b.v1" } },
            subscriptionShareGrants: { cluster: { shares: ["s"], roles: ["admin"] } },
        };
        expect(parsePreviousUpdate(raw)).toEqual({ values: raw, warnings: [] });
    });

    test("GIVEN a value of another shape for each key WHEN parsed THEN each is dropped with one warning naming key, shape, value and consequence", () => {
        const parsed = parsePreviousUpdate({
            certificateTrust: { caBundle: "x" },
            awsUserTagKeys: ["a"],
            awsInstallTagKeys: { a: 1 },
            installedCrds: { "x.io": { owner: "operator a", onRemoval: "maybe" } },
            conversionResets: { "z.io": 1 },
            operatorInstalls: { a: { namespace: "ops" } },
            subscriptionShareGrants: { cluster: { shares: "x" } },
        });
        expect(parsed.values).toEqual({});
        expect(parsed.warnings).toEqual([
            `the previous update's certificateTrust output is not {caBundle: string[], servingCertificates: {[secret]: string}} (got {"caBundle":"x"}); CA rotation starts afresh (certificates go live at once)`,
            `the previous update's awsUserTagKeys output is not {managed: string[], released: string[]} (got ["a"]); tags removed from aws.userTags before this update will be removed from resources`,
            `the previous update's awsInstallTagKeys output is not a list of keys (got {"a":1}); install-time tags removed since will be removed from resources`,
            `the previous update's installedCrds output is not {[crd]: {owner, onRemoval: "keep" | "delete", conversion?: "webhook", kind?}} (got {"x.io":{"owner":"operator a","onRemoval":"maybe"}}); this preview cannot name the CRDs that leave the stack`,
            `the previous update's conversionResets output is not {[crd]: kind} (got {"z.io":1}); CRDs whose converting operator left earlier are no longer held at conversion None`,
            `the previous update's operatorInstalls output is not {[install]: {namespace, csv, previousNames?}} (got {"a":{"namespace":"ops"}}); an install renamed without previousNames, or one taking over what a removed install declared for both, is not aliased to it: its creates meet those objects`,
            `the previous update's subscriptionShareGrants output is not {<bundle>: {shares: string[], roles: string[], sources?: {<share>: {kind: "Secret" | "ConfigMap", namespace, name}}}} (got {"cluster":{"shares":"x"}}); this update cannot keep the shares running pods mount, nor say what they would lose`,
        ]);
    });

    test("GIVEN an update of the every-capability example WHEN the next update reads its outputs THEN every key it carries is there and parses without a warning", async () => {
        // An `up` (preview: false), so the certificates' trust state is known; the example has no
        // operator, so its CRDs are the subscription capability's.
        const first = await renderProgram({
            config: readConfigFile(path.join(ROOT, "examples", "openshift-aws.yaml")),
            preview: false,
            computed: tlsComputed({ now: new Date("2026-01-01T00:00:00Z") }),
            cluster: ClusterState.fromFile(path.join(ROOT, "tests", "fixtures", "certificates", "openshift-aws.cluster.yaml")),
        });
        expect(first.errors).toEqual([]);
        // conversionResets is written only while a removed operator's CRDs are held at conversion None,
        // operatorInstalls only while operators are installed (the example has none).
        const expected = CARRIED_KEYS.filter((key) => key !== "conversionResets" && key !== "operatorInstalls").sort();
        const carried = Object.keys(first.stackOutputs).filter((key) => (CARRIED_KEYS as string[]).includes(key));
        expect(carried.sort()).toEqual(expected);
        const next = parsePreviousUpdate(first.stackOutputs);
        expect(next.warnings).toEqual([]);
        expect(Object.keys(next.values).sort()).toEqual(expected);
    }, 120_000);
});
