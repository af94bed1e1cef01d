/**
 * The community catalog's sample for the real tier (issue 35, point 7; tests/real/catalog-sample.real.ts),
 * chosen by rule from the Go oracle (tests/catalog/oracle) and the pre-flight, never by hand, so a
 * new catalog snapshot picks its own. Per kind of content (conversion webhooks, admission webhooks,
 * each OLM-supported bundle kind, bundle Secrets, ConfigMaps and RBAC, pods that need an object the
 * admin makes first), the first bundles in a fixed hashed order, one per producer family, that OLM installs (no refusal in the oracle),
 * the pre-flight accepts (or accepts once the admin has made what the pods reference) and the
 * hermetic cluster can run (`unrunnable` says why not), each in AllNamespaces mode where its CSV
 * supports it, else OwnNamespace.
 *
 * Pure apart from reading the bundles: `npx tsx tests/helpers/catalog-sample.ts` prints the sample.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { operatorsSchema } from "../../components/config/schema";
import { goDecodeManifest } from "../../components/shared/go-yaml";
import type { KubeObject } from "../../scripts/render/cluster-state";
import {
    BUNDLES_ROOT,
    type CatalogInstall,
    catalogVerdict,
    type OracleBundle,
    planCatalogInstall,
    readCatalogOracle,
    suppliedObjects,
} from "./catalog";

type Json = Record<string, unknown>;

/** How many bundles of each kind of content the sample takes. */
export const SAMPLE_QUOTAS: readonly (readonly [string, number])[] = [
    ["conversion webhook", 3],
    ["admission webhooks", 4],
    ["PodDisruptionBudget", 2],
    ["ServiceMonitor", 3],
    ["PrometheusRule", 2],
    ["bundle Secret", 2],
    ["bundle ConfigMap", 2],
    ["bundle RBAC", 2],
    ["pods need an admin's object", 2],
];

/**
 * API groups the hermetic cluster already serves through CRDs (scripts/real/cluster.ts applies
 * OpenShift's, OLM's and cert-manager's): a bundle owning one would take over another test's CRD.
 */
const CLUSTER_CRD_GROUPS = new Set(["cert-manager.io", "acme.cert-manager.io", "operators.coreos.com", "config.openshift.io"]);

/**
 * The cost cap. The file backend writes the whole checkpoint, CRD schemas included, after every
 * step, so a stack's time grows with (resources × state size): one bundle of 44 CRDs (176 of OLM's
 * per-API roles) took most of a 10-minute `up`. Bundles above the cap are as installable; the
 * catalog run checks them all (tests/catalog/run.ts).
 */
export const SAMPLE_LIMITS = { crds: 8, bytes: 512 * 1024 } as const;

export interface SampleInstall {
    readonly bundle: string;
    readonly facts: OracleBundle;
    /** The CSV file, and its content as Go decodes it. */
    readonly csvFile: string;
    readonly csv: Json;
    /** The operator's config entry: name and namespace from the bundle's folder. */
    readonly entry: { name: string; csv: string; namespace: string; targetNamespaces: string[]; createNamespace: boolean };
    /** What the pre-flight says the pods reference and nobody provides: the admin makes it, and the namespace, first. */
    readonly supplied: KubeObject[];
    /** Its kinds of content, as SAMPLE_QUOTAS names them. */
    readonly contents: string[];
}

/** A bundle's producer family: the operator name's first word (`ack` of ack-s3-controller); the sample takes one of each. */
const family = (s: SampleInstall) => s.entry.name.split("-")[0];

const PROMETHEUS_KINDS = new Set(["ServiceMonitor", "PrometheusRule", "PodMonitor"]);

function contentsOf(facts: OracleBundle, podsNeedObjects: boolean): string[] {
    const kinds = new Set(facts.objects.filter((o) => o.handling !== "crd").map((o) => o.kind));
    const webhooks = facts.csv!.webhooks;
    return [
        ...(webhooks.some((w) => w.startsWith("ConversionWebhook")) ? ["conversion webhook"] : []),
        ...(webhooks.some((w) => !w.startsWith("ConversionWebhook")) ? ["admission webhooks"] : []),
        ...[...kinds].filter((k) => PROMETHEUS_KINDS.has(k) || k === "PodDisruptionBudget"),
        ...(kinds.has("Secret") ? ["bundle Secret"] : []),
        ...(kinds.has("ConfigMap") ? ["bundle ConfigMap"] : []),
        ...(["Role", "RoleBinding", "ClusterRoleBinding", "ServiceAccount"].some((k) => kinds.has(k)) ? ["bundle RBAC"] : []),
        ...(podsNeedObjects ? ["pods need an admin's object"] : []),
    ];
}

/** Why the hermetic cluster cannot run the bundle as OLM would within the sample's cost, or undefined. */
export function unrunnable(bundle: string, facts: OracleBundle, csv: Json): string | undefined {
    const dir = path.join(BUNDLES_ROOT, bundle, "manifests");
    const bytes = fs.readdirSync(dir).reduce((n, f) => n + fs.statSync(path.join(dir, f)).size, 0);
    const crds = facts.objects.filter((o) => o.handling === "crd");
    if (crds.length > SAMPLE_LIMITS.crds || bytes > SAMPLE_LIMITS.bytes) return `over the cost cap (${crds.length} CRDs, ${bytes} bytes)`;
    const groups = new Set(crds.map((o) => o.name.slice(o.name.indexOf(".") + 1)));
    if ([...groups].some((g) => CLUSTER_CRD_GROUPS.has(g))) return "it owns a CRD the hermetic cluster already serves";
    // Its webhook server is an image kwok does not run: a rule beyond its own API groups would answer
    // (or, with failurePolicy Fail, refuse) the admission of the test's own objects.
    const foreign = (((csv.spec as Json).webhookdefinitions as Json[] | undefined) ?? [])
        .filter((d) => d.type !== "ConversionWebhook")
        .flatMap((d) => ((d.rules as Json[] | undefined) ?? []).flatMap((r) => (r.apiGroups as string[] | undefined) ?? []))
        .filter((g) => !groups.has(g));
    if (foreign.length > 0) return `a webhook's rules reach API groups it does not own (${[...new Set(foreign)].join(", ")})`;
    return undefined;
}

/** The sample: each quota filled in a fixed order (the bundle key's SHA-256) with bundles of families not yet chosen. */
export async function catalogSample(): Promise<SampleInstall[]> {
    const oracle = readCatalogOracle();
    const candidates: SampleInstall[] = [];
    for (const bundle of Object.keys(oracle.bundles).sort()) {
        const facts = oracle.bundles[bundle];
        if (facts.refusals.length > 0 || !facts.csv) continue;
        const mode = (["AllNamespaces", "OwnNamespace"] as const).find((m) => facts.csv!.installModes.includes(m));
        if (!mode) continue;
        const csvFile = path.join(BUNDLES_ROOT, bundle, "manifests", facts.csv.file);
        const decoded = goDecodeManifest(fs.readFileSync(csvFile, "utf8"));
        if (!decoded.ok || unrunnable(bundle, facts, decoded.value as Json)) continue;
        const name = bundle.split("/")[0];
        const entry = {
            name,
            csv: csvFile,
            namespace: name,
            targetNamespaces: mode === "OwnNamespace" ? [name] : [],
            createNamespace: true,
        };
        const install: CatalogInstall = { bundle, mode, config: operatorsSchema.parse([entry])[0] };
        const planned = planCatalogInstall(install);
        const verdict = await catalogVerdict(install, planned);
        if (verdict.problems.length > verdict.podProblems.length) continue;
        const supplied = verdict.podProblems.length > 0 ? suppliedObjects(planned.plans[0]) : [];
        candidates.push({
            bundle,
            facts,
            csvFile,
            csv: decoded.value as Json,
            entry: supplied.length > 0 ? { ...entry, createNamespace: false } : entry,
            supplied,
            contents: contentsOf(facts, supplied.length > 0),
        });
    }
    // A fixed order that is not the alphabet's (which would take one generator's bundles, ack-*, in a row).
    const order = (c: SampleInstall) => createHash("sha256").update(c.bundle).digest("hex");
    candidates.sort((a, b) => order(a).localeCompare(order(b)));
    const chosen: SampleInstall[] = [];
    for (const [content, quota] of SAMPLE_QUOTAS) {
        let taken = 0;
        for (const candidate of candidates) {
            if (taken === quota) break;
            if (!candidate.contents.includes(content) || chosen.some((c) => family(c) === family(candidate))) continue;
            chosen.push(candidate);
            taken++;
        }
    }
    return chosen.sort((a, b) => a.bundle.localeCompare(b.bundle));
}

if (require.main === module) {
    void catalogSample().then((sample) => {
        for (const s of sample)
            console.log(`${s.bundle} ${s.entry.targetNamespaces.length ? "OwnNamespace" : "AllNamespaces"}: ${s.contents.join(", ")}`);
        console.log(`${sample.length} bundles, ${sample.reduce((n, s) => n + s.facts.objects.length, 0)} bundle objects`);
    });
}
