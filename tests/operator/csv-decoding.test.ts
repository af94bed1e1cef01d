/**
 * A CSV with a field set to null, read by the program as OLM reads it. OLM decodes the CSV with
 * Go's encoding/json into operator-framework/api's v1alpha1 types, where null leaves a field at
 * its zero value (so `replaces:` with no value, YAML's null, is no edge), except where a type
 * decodes itself and refuses null (spec.version). The expected answers are Go's:
 * tests/catalog/oracle `go run . csvnulls csvnulls-cases.json > csvnulls-cases.expected.json` sets
 * each path of the cases to null in the real node-maintenance CSV and decodes it with that library.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse, stringify } from "yaml";
import { type ClusterServiceVersion, parseCsv, permissionsOf } from "../../components/operator/csv";
import { CSV_DIR } from "../helpers/operators";
import { ROOT } from "../helpers/render";

const ORACLE = path.join(__dirname, "..", "catalog", "oracle");
const CASES = JSON.parse(fs.readFileSync(path.join(ORACLE, "csvnulls-cases.json"), "utf8")) as { base: string; paths: string[] };

interface GoResult {
    path: string;
    error?: string;
    view?: Record<string, unknown>;
}
const GO = JSON.parse(fs.readFileSync(path.join(ORACLE, "csvnulls-cases.expected.json"), "utf8")) as GoResult[];

/** The base CSV as JSON, as opm reads a bundle file (the base is plain YAML: no Go-only YAML classes). */
function baseCsv(): Record<string, unknown> {
    return JSON.parse(JSON.stringify(parse(fs.readFileSync(path.join(ORACLE, CASES.base), "utf8"))));
}

/** The document with the value at a dotted path (list indexes as numbers) set to null. */
function withNull(document: Record<string, unknown>, dotted: string): Record<string, unknown> {
    const keys = dotted.split(".");
    let node = document as Record<string, unknown>;
    for (const key of keys.slice(0, -1)) node = node[key] as Record<string, unknown>;
    node[keys[keys.length - 1]] = null;
    return document;
}

/** The program's reading of the fields Go's view holds, nil and empty written alike as Go's are. */
function viewOf(csv: ClusterServiceVersion): Record<string, unknown> {
    const deployments = csv.spec.install.spec.deployments;
    const { permissions, clusterPermissions } = permissionsOf(csv);
    const permissionView = (list: typeof permissions) => list.map((p) => ({ serviceAccount: p.serviceAccountName, rules: p.rules.length }));
    const describe = (api: { group: string; version: string; kind: string }) => `${api.group}/${api.version}, Kind=${api.kind}`;
    return {
        replaces: csv.spec.replaces ?? "",
        skips: csv.spec.skips ?? [],
        version: csv.spec.version ?? "",
        minKubeVersion: csv.spec.minKubeVersion ?? "",
        nativeAPIs: (csv.spec.nativeAPIs ?? []).map(describe),
        installModes: csv.spec.installModes.map((m) => `${m.type}=${m.supported}`),
        annotations: csv.metadata.annotations ?? {},
        deployments: deployments.map((d) => d.name),
        replicas: deployments.map((d) => (d.spec.replicas === undefined ? "unset" : String(d.spec.replicas))),
        deploymentLabels: deployments.map((d) => d.label ?? {}),
        podLabels: deployments.map((d) => d.spec.template.metadata?.labels ?? {}),
        permissions: permissionView(permissions),
        clusterPermissions: permissionView(clusterPermissions),
        ownedCRDs: csv.spec.customresourcedefinitions?.owned?.length ?? 0,
        requiredCRDs: csv.spec.customresourcedefinitions?.required?.length ?? 0,
        ownedAPIServices: csv.spec.apiservicedefinitions?.owned?.length ?? 0,
        requiredAPIServices: csv.spec.apiservicedefinitions?.required?.length ?? 0,
        webhooks: csv.spec.webhookdefinitions?.length ?? 0,
    };
}

/**
 * Where Go decodes the CSV and the program still refuses it, by a rule of its own rather than by
 * decoding: an install strategy without deployments, or a deployment without a name, installs
 * nothing OLM could run (`spec.install.spec.deployments` must name at least one).
 */
const PROGRAM_REFUSES = new Map([
    ["spec.install.spec.deployments", "spec.install.spec.deployments"],
    ["spec.install.spec", "spec.install.spec"],
    ["spec.install.spec.deployments.0.name", "spec.install.spec.deployments[0].name"],
]);

describe("a CSV with a field set to null, as OLM decodes it (Go's encoding/json into v1alpha1)", () => {
    test("GIVEN Go's table WHEN it was computed THEN it holds the base and every case, Go refusing only spec.version", () => {
        expect(GO.map((r) => r.path)).toEqual(["", ...CASES.paths]);
        expect(GO.filter((r) => r.error !== undefined).map((r) => r.path)).toEqual(["spec.version"]);
    });

    test.each(GO.map((r) => [r.path === "" ? "(none)" : r.path, r] as const))(
        "GIVEN the CSV with %s set to null WHEN the program reads it THEN it decodes exactly when Go does, to what Go holds",
        (_, go) => {
            const document = go.path === "" ? baseCsv() : withNull(baseCsv(), go.path);

            const read = parseCsv(stringify(document));

            if (go.error !== undefined) {
                expect(read.ok).toBe(false);
                return;
            }
            const refusedAt = PROGRAM_REFUSES.get(go.path);
            if (refusedAt !== undefined) {
                expect(read.ok ? [] : read.problems.map((p) => p.field)).toEqual([refusedAt]);
                return;
            }
            expect(read.ok ? viewOf(read.csv) : read.problems).toEqual(go.view);
        },
    );

    test("GIVEN a CSV file whose fields are left empty in YAML WHEN read THEN each reads as absent", () => {
        const text = fs
            .readFileSync(path.join(ROOT, CSV_DIR, "node-maintenance-operator-0.0.1.clusterserviceversion.yaml"), "utf8")
            .replace(/^ {2}minKubeVersion: .*$/m, "  minKubeVersion:\n  replaces:\n  skips:");

        const read = parseCsv(text);

        expect(read.ok && [read.csv.spec.minKubeVersion, read.csv.spec.replaces, read.csv.spec.skips]).toEqual([
            undefined,
            undefined,
            undefined,
        ]);
    });
});
