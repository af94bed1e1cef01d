/**
 * `npm run test:catalog`: the community catalog as a standing test. Every manifest of the 248
 * bundles is read as OLM's Go tooling reads it, and every bundle is planned in every install mode
 * its CSV supports; each install must be refused exactly when OLM would refuse it (the Go oracle,
 * tests/catalog/oracle/) with a message naming the bundle file, the field and the rule, or be
 * refused because its pods could not start (OLM installs such a bundle; the message says so).
 * Every other install is rendered (the whole program, installs batched per stack) and must declare
 * every object OLM would create, have every object a pod references, every Service the stack
 * generates select exactly its Deployment's pods (a bundle Service selecting none is counted: OLM
 * installs it as it is), and grant every RBAC rule of the CSV and the bundle. The checks are
 * written here, against the rendered objects and the oracle, never with the program's planning.
 *
 * Prints one line: `catalog: ...` with installable / refused (grouped by why) / failing and the
 * time; then, when something fails, one line per failure. Exits 1 when anything fails.
 * `CATALOG_ONLY=<substring>` limits the run to the bundles whose key contains it.
 */
import { fork } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { canonicalJson } from "../../components/shared/canonical-json";
import { goDecodeManifest, goYamlDocuments } from "../../components/shared/go-yaml";
import { type JsonSchema, structuralValidator } from "../../components/shared/structural-schema";
import type { KubeObject } from "../../scripts/render/cluster-state";
import type { RenderResult } from "../../scripts/render/render";
import {
    BUNDLES_ROOT,
    CatalogInstall,
    catalogBatches,
    catalogCluster,
    catalogInstalls,
    catalogVerdict,
    olmCreatedObjects,
    clusterObjectKeys,
    OracleBundle,
    OracleRule,
    planCatalogInstall,
    readCatalogOracle,
    renderCatalogInstalls,
    suppliedObjects,
} from "../helpers/catalog";
import { goJsonSha256 } from "../helpers/go-json";

type Json = Record<string, unknown>;
type Manifest = {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; labels?: Record<string, string> };
    [key: string]: unknown;
};

const BATCH = 24;

/** A failure and where it sorts: phase, then the file, bundle, install or batch it belongs to (workers merge by it). */
interface Failure {
    key: number;
    text: string;
}
const PHASE = { yaml: 0, schemas: 1e7, verdicts: 2e7, renders: 3e7 };

/** What a worker is given: first every bundle (read, compile, plan, judge), then every render batch. */
type Task =
    | { kind: "bundle"; bundle: string }
    | { kind: "batch"; index: number; installs: number[]; afterSupply: number[]; supplied: KubeObject[] };

/** One install as judged where it was planned; the parent batches the rendered ones and counts the rest. */
interface Judged {
    index: number;
    /** Refused by OLM's rules (the rules), refused for its pods (rendered after supplying them), rendered, or failed here. */
    outcome: "olm" | "pods" | "accepted" | "failed";
    olmRules?: string[];
    /** The cluster-scoped objects its plan declares (catalogBatches). */
    keys?: string[];
    /** What the pre-flight found missing for its pods, created first in its render. */
    supplied?: KubeObject[];
}
interface BundleResult {
    yamlFiles: number;
    schemas: number;
    judged: Judged[];
    failures: Failure[];
}
interface BatchResult {
    installable: number;
    idleServices: number;
    failures: Failure[];
}

/**
 * The run is split over `CATALOG_WORKERS` processes (default 2, one per core of the CI machine),
 * each handed the next task when it is free: first the bundles (each manifest read and each schema
 * compiled once, each install planned and judged once, where its bundle was read), then the render
 * batches, formed by the parent from every install's verdict. The parent merges the results in
 * file, bundle, install and batch order, so the output does not depend on the number of workers.
 */
async function main(): Promise<void> {
    const started = Date.now();
    if (process.env.CATALOG_WORKER !== undefined) return serveTasks();
    const workers = Math.max(1, Number(process.env.CATALOG_WORKERS ?? 2));
    const only = process.env.CATALOG_ONLY;
    const oracle = readCatalogOracle();
    const installs = catalogInstalls(oracle, only ? (b) => b.includes(only) : undefined);
    const pool = workers === 1 ? inProcess() : workerPool(workers);
    try {
        const bundles = (await pool.runAll(
            Object.keys(oracle.bundles).map((bundle): Task => ({ kind: "bundle", bundle })),
        )) as BundleResult[];
        const failures = bundles.flatMap((r) => r.failures);
        const judged = bundles.flatMap((r) => r.judged).sort((a, b) => a.index - b.index);
        const refusedWhy = new Map<string, number>();
        let refused = 0;
        for (const install of judged) {
            if (install.outcome === "olm") {
                refused++;
                for (const rule of install.olmRules!) refusedWhy.set(`OLM: ${rule}`, (refusedWhy.get(`OLM: ${rule}`) ?? 0) + 1);
            } else if (install.outcome === "pods") {
                refused++;
                refusedWhy.set(
                    "pods could not start (OLM installs it)",
                    (refusedWhy.get("pods could not start (OLM installs it)") ?? 0) + 1,
                );
            }
        }
        const rendered = judged.filter((i) => i.outcome === "accepted" || i.outcome === "pods");
        const batches = catalogBatches(rendered, (i) => i.keys!, BATCH).map((batch, index): Task => ({
            kind: "batch",
            index,
            installs: batch.map((i) => i.index),
            afterSupply: batch.filter((i) => i.outcome === "pods").map((i) => i.index),
            supplied: batch.flatMap((i) => i.supplied ?? []),
        }));
        const renders = (await pool.runAll(batches)) as BatchResult[];
        failures.push(...renders.flatMap((r) => r.failures));
        failures.sort((a, b) => a.key - b.key);
        const sum = <T>(results: T[], f: (r: T) => number) => results.reduce((n, r) => n + f(r), 0);
        const why = [...refusedWhy]
            .sort((a, b) => b[1] - a[1])
            .map(([k, v]) => `${k}: ${v}`)
            .join(", ");
        console.log(
            `catalog: ${new Set(installs.map((i) => i.bundle)).size} bundles, ${installs.length} installs (every supported install mode): ${sum(renders, (r) => r.installable)} installable / ${refused} refused (${why || "none"}) / ${failures.length} failing; ${sum(bundles, (r) => r.yamlFiles)} manifests read as Go reads them, ${sum(bundles, (r) => r.schemas)} CRD schemas compiled; ${sum(renders, (r) => r.idleServices)} bundle Services select no pod of their install (legal: OLM creates them as they are); ${workers} workers; ${((Date.now() - started) / 1000).toFixed(0)} s`,
        );
        for (const failure of failures) console.log(`  FAIL ${failure.text}`);
        process.exitCode = failures.length > 0 ? 1 : 0;
    } finally {
        pool.close();
    }
}

interface Pool {
    /** Every task's result, in the tasks' order. */
    runAll(tasks: Task[]): Promise<(BundleResult | BatchResult)[]>;
    close(): void;
}

/** The tasks run here, one after the other (CATALOG_WORKERS=1: one process to profile). */
function inProcess(): Pool {
    const worker = new Worker();
    return {
        runAll: async (tasks) => {
            const results = [];
            for (const task of tasks) results.push(await worker.run(task));
            return results;
        },
        close: () => undefined,
    };
}

/** `count` processes of this file (same Node flags: tsx's loader), each sent its next task when it answers. */
function workerPool(count: number): Pool {
    const children = Array.from({ length: count }, () =>
        fork(__filename, [], {
            env: { ...process.env, CATALOG_WORKER: "1" },
            // A larger young generation: parsing and compiling allocate much short-lived garbage, and
            // the default semi-space made the scavenger a sixth of the profile.
            execArgv: [...process.execArgv, "--max-semi-space-size=64"],
            stdio: ["ignore", "inherit", "inherit", "ipc"],
        }),
    );
    let failed: Error | undefined;
    const exits = children.map(
        (child, n) =>
            new Promise<never>((_, reject) =>
                child.on("exit", (code, signal) => {
                    failed ??= new Error(`catalog worker ${n} exited (${code ?? signal}) before its work was done`);
                    reject(failed);
                }),
            ),
    );
    exits.forEach((e) => e.catch(() => undefined));
    return {
        runAll: (tasks) => {
            const results: (BundleResult | BatchResult)[] = new Array(tasks.length);
            let next = 0;
            let done = 0;
            return new Promise((resolve, reject) => {
                if (tasks.length === 0) return resolve(results);
                exits.forEach((e) => e.catch(reject));
                for (const child of children) {
                    const give = () => {
                        if (next >= tasks.length) return;
                        const at = next++;
                        child.once("message", (message: { result?: BundleResult | BatchResult; error?: string }) => {
                            if (message.error !== undefined) return reject(new Error(`catalog worker: ${message.error}`));
                            results[at] = message.result!;
                            if (++done === tasks.length) resolve(results);
                            else give();
                        });
                        child.send(tasks[at]);
                    };
                    give();
                }
            });
        },
        close: () => children.forEach((child) => child.connected && child.disconnect()),
    };
}

/** A worker process: runs each task the parent sends and answers with its result; ends when the parent disconnects. */
function serveTasks(): void {
    const worker = new Worker();
    process.on("message", (task: Task) => {
        worker.run(task).then(
            (result) => process.send!({ result }),
            (error: unknown) => process.send!({ error: error instanceof Error ? (error.stack ?? error.message) : String(error) }),
        );
    });
}

/** What one process keeps between tasks: the oracle, the installs, and what it read of each bundle. */
class Worker {
    private readonly only = process.env.CATALOG_ONLY;
    private readonly oracle = readCatalogOracle();
    private readonly installs = catalogInstalls(this.oracle, this.only ? (b) => b.includes(this.only!) : undefined);
    private readonly fileIndex = new Map(Object.keys(this.oracle.files).map((file, index) => [file, index]));
    private readonly bundleIndex = new Map(Object.keys(this.oracle.bundles).map((bundle, index) => [bundle, index]));
    /** Each manifest as Go's decoder reads it, once per process (by path in the bundles folder). */
    private readonly decoded = new Map<string, ReturnType<typeof goDecodeManifest>>();

    run(task: Task): Promise<BundleResult | BatchResult> {
        return task.kind === "bundle" ? this.bundle(task.bundle) : this.batch(task);
    }

    private decode(file: string, text?: string): ReturnType<typeof goDecodeManifest> {
        let decoded = this.decoded.get(file);
        if (!decoded) {
            decoded = goDecodeManifest(text ?? fs.readFileSync(path.join(BUNDLES_ROOT, file), "utf8"));
            this.decoded.set(file, decoded);
        }
        return decoded;
    }

    private async bundle(bundle: string): Promise<BundleResult> {
        const failures: Failure[] = [];
        const yamlFiles = this.checkYaml(bundle, failures);
        const schemas = this.only && !bundle.includes(this.only) ? 0 : this.checkSchemas(bundle, failures);
        const judged: Judged[] = [];
        for (const [index, install] of this.installs.entries()) {
            if (install.bundle === bundle) judged.push(await this.judge(index, install, failures));
        }
        // Only the batches read these again, in whichever process renders them.
        for (const file of this.decoded.keys())
            if (file.startsWith(`${bundle}/`) && !file.includes("clusterserviceversion")) this.decoded.delete(file);
        return { yamlFiles, schemas, judged, failures };
    }

    /** Every manifest of the bundle: its first document and every document, as the Go oracle decoded them. */
    private checkYaml(bundle: string, failures: Failure[]): number {
        let count = 0;
        for (const [file, expected] of Object.entries(this.oracle.files)) {
            if (!file.startsWith(`${bundle}/`) || (this.only && !file.includes(this.only))) continue;
            count++;
            const text = fs.readFileSync(path.join(BUNDLES_ROOT, file), "utf8");
            const decoded = this.decode(file, text);
            const got = !decoded.ok ? "refused" : decoded.value === null ? "no object" : goJsonSha256(decoded.value);
            const want = expected.opm.error !== undefined ? "refused" : expected.opm.empty ? "no object" : expected.opm.sha256;
            const documents = goYamlDocuments(text).map((d) => (d.ok ? goJsonSha256(d.value) : "refused"));
            const wantDocuments = expected.documents.map((d) => (d.error !== undefined ? "refused" : d.sha256));
            if (got !== want || JSON.stringify(documents) !== JSON.stringify(wantDocuments)) {
                failures.push({
                    key: PHASE.yaml + this.fileIndex.get(file)!,
                    text: `${file}: read ${got} (documents ${documents.length}), Go reads ${want} (documents ${wantDocuments.length})${decoded.ok ? "" : `: ${decoded.error}`}`,
                });
            }
        }
        return count;
    }

    /** Every CRD version's schema of the bundle compiles in the one structural-schema validator, in both modes (two crashed the former render). */
    private checkSchemas(bundle: string, failures: Failure[]): number {
        let count = 0;
        for (const crd of this.oracle.bundles[bundle].objects.filter((o) => o.handling === "crd")) {
            const decoded = this.decode(`${bundle}/manifests/${crd.file}`);
            const versions = decoded.ok
                ? ((((decoded.value as Json | null)?.spec as Json | undefined)?.versions as Json[] | undefined) ?? [])
                : [];
            for (const version of versions) {
                const schema = (version.schema as Json | undefined)?.openAPIV3Schema as JsonSchema | undefined;
                if (!schema) continue;
                count++;
                try {
                    for (const unknownFields of ["ignore", "refuse"] as const)
                        structuralValidator(schema, { root: true, unknownFields })({ apiVersion: "x/v1", kind: "X", metadata: {} });
                } catch (error) {
                    failures.push({
                        key: PHASE.schemas + this.bundleIndex.get(bundle)!,
                        text: `${bundle} ${crd.file} version ${String(version.name)}: the schema validator fails on it: ${(error as Error).message.split("\n")[0]}`,
                    });
                }
            }
        }
        return count;
    }

    /** The pre-flight's verdict on one install against OLM's (the oracle). */
    private async judge(index: number, install: CatalogInstall, failures: Failure[]): Promise<Judged> {
        const fail = (text: string): Judged => {
            failures.push({ key: PHASE.verdicts + index, text });
            return { index, outcome: "failed" };
        };
        const facts = this.oracle.bundles[install.bundle];
        const planned = planCatalogInstall(install);
        const verdict = await catalogVerdict(install, planned);
        const where = `${install.bundle} (${install.mode})`;
        if (facts.refusals.length > 0) {
            if (!verdict.refused)
                return fail(
                    `${where}: OLM refuses it (${facts.refusals.map((r) => `${r.rule}, ${r.source}`).join("; ")}) but the program accepts it`,
                );
            const unnamed = facts.refusals.filter(
                (r) => !verdict.problems.some((p) => p.includes(install.bundle) && (r.file === undefined || p.includes(r.file))),
            );
            if (unnamed.length > 0)
                return fail(
                    `${where}: refused, but no message names the bundle file of OLM's reason: ${unnamed.map((r) => `${r.rule} (${r.file ?? "CSV"})`).join("; ")}; messages: ${verdict.problems.join(" | ")}`,
                );
            return { index, outcome: "olm", olmRules: [...new Set(facts.refusals.map((r) => r.rule))] };
        }
        const programOnly = verdict.problems.filter((p) => !verdict.podProblems.includes(p));
        if (programOnly.length > 0) return fail(`${where}: refused although OLM installs it: ${programOnly.join(" | ")}`);
        const plan = planned.plans[0];
        if (verdict.podProblems.length > 0) {
            const unclear = verdict.podProblems.filter((p) => !p.includes(install.bundle) || !p.includes("OLM would install"));
            if (unclear.length > 0)
                failures.push({
                    key: PHASE.verdicts + index,
                    text: `${where}: a pod-reference refusal does not name the bundle or say OLM installs it: ${unclear.join(" | ")}`,
                });
            // Rendered all the same with the missing objects created first, as the message tells the admin.
            return { index, outcome: "pods", keys: clusterObjectKeys(plan), supplied: suppliedObjects(plan) };
        }
        return { index, outcome: "accepted", keys: clusterObjectKeys(plan) };
    }

    /** One render of a batch of installs (the whole program, one stack) and the checks of each install in it. */
    private async batch(task: Extract<Task, { kind: "batch" }>): Promise<BatchResult> {
        const failures: Failure[] = [];
        const fail = (text: string) => failures.push({ key: PHASE.renders + task.index, text });
        const batch = task.installs.map((i) => this.installs[i]);
        const result = await renderCatalogInstalls(batch, task.supplied);
        if (!result.ok) {
            fail(
                `render of ${batch.map((i) => `${i.bundle} (${i.mode})`).join(", ")} failed: ${[...result.problems.map((p) => p.message), ...result.errors].join(" | ")}`,
            );
            return { installable: 0, idleServices: 0, failures };
        }
        let installable = 0;
        const idleServices: string[] = [];
        for (const [n, install] of batch.entries()) {
            const csvFile = `${install.bundle}/manifests/${this.oracle.bundles[install.bundle].csv!.file}`;
            const problems = checkInstall(
                install,
                this.oracle.bundles[install.bundle],
                result,
                batch,
                task.supplied,
                idleServices,
                this.decode(csvFile),
            );
            if (problems.length === 0 && !task.afterSupply.includes(task.installs[n])) installable++;
            problems.forEach((p) => fail(`${install.bundle} (${install.mode}): ${p}`));
        }
        return { installable, idleServices: idleServices.length, failures };
    }
}

const keyOf = (kind: string, name: string, namespace?: string) => `${kind} ${namespace ? `${namespace}/` : ""}${name}`;

/** The checks of one rendered install; each problem is a failure. */
function checkInstall(
    install: CatalogInstall,
    facts: OracleBundle,
    result: RenderResult,
    batch: readonly CatalogInstall[],
    supplied: Parameters<typeof catalogCluster>[1],
    idleServices: string[],
    csvDecoded: ReturnType<typeof goDecodeManifest>,
): string[] {
    const problems: string[] = [];
    const namespace = install.config.namespace;
    const manifests = result.manifests.map((m) => m.object as unknown as Manifest);
    const declared = new Map(manifests.map((m) => [keyOf(m.kind, m.metadata.name, m.metadata.namespace), m]));
    const cluster = new Set([
        ...catalogCluster(batch, supplied).map((o) => keyOf(o.kind, o.metadata.name, o.metadata.namespace)),
        // Every cluster has these: the API server creates them at start (kubernetes
        // pkg/registry/scheduling/rest/storage_scheduling.go, `AddSystemPriorityClasses`).
        ...["system-cluster-critical", "system-node-critical"].map((name) => keyOf("PriorityClass", name, undefined)),
    ]);
    const csv = facts.csv!;

    // 1. Every object OLM would create from the bundle is declared.
    const expected = olmCreatedObjects(facts, namespace, csvDecoded).map((o) => ({
        key: keyOf(o.kind, o.name, o.namespace),
        olmLabels: o.olmLabels,
    }));
    for (const { key, olmLabels } of expected) {
        const object = declared.get(key);
        if (!object) {
            problems.push(`${key} is not declared (OLM creates it)`);
        } else if (olmLabels && object.metadata.labels?.["olm.managed"] !== "true") {
            problems.push(`${key} lacks OLM's label olm.managed: "true"`);
        }
    }

    // 2. Every object a pod references exists (declared by the stack, or in the fresh cluster), or
    // another Deployment of the install runs as a ServiceAccount the CSV lets create it (RBAC cannot
    // limit a create by name), as HyperConverged's operator creates its operands' PriorityClass
    // (kubevirt/hyperconverged-cluster-operator cmd/hyperconverged-cluster-operator/main.go).
    const deployments = csv.deployments
        .map((d) => declared.get(keyOf("Deployment", d, namespace)))
        .filter((d): d is Manifest => d !== undefined);
    const serviceAccountOf = (d: Manifest) =>
        ((((d.spec as Json).template as Json).spec as Json).serviceAccountName as string) || "default";
    const createdByOperator = (kind: string, name: string, needing: Manifest) => {
        const [apiGroup, resource] = REFERENCED_RESOURCES[kind];
        return deployments.some(
            (d) =>
                d !== needing &&
                csv.permissions.some(
                    (p) =>
                        p.serviceAccount === serviceAccountOf(d) &&
                        (p.cluster || !["PriorityClass", "RuntimeClass"].includes(kind)) &&
                        (p.rules ?? []).some((r) => covers(r, { apiGroups: [apiGroup], resources: [resource], verbs: ["create"] })),
                ),
        );
    };
    for (const deployment of deployments) {
        const pod = ((deployment.spec as Json).template as Json).spec as Json;
        for (const [kind, name, where] of referencesIn(pod)) {
            const scoped = kind === "PriorityClass" || kind === "RuntimeClass" ? undefined : namespace;
            const key = keyOf(kind, name, scoped);
            if (!declared.has(key) && !cluster.has(key) && !createdByOperator(kind, name, deployment))
                problems.push(`Deployment ${deployment.metadata.name} references ${key} (${where}), which nothing provides`);
        }
    }

    // 3. Every Service the stack generates selects exactly its Deployment's pods.
    for (const service of manifests.filter((m) => m.kind === "Service" && m.metadata.namespace === namespace)) {
        const selector = (service.spec as Json | undefined)?.selector as Record<string, string> | undefined;
        if (!selector || Object.keys(selector).length === 0) continue; // a Service without selector selects no pods by design
        const selected = deployments.filter((d) => {
            const labels = ((((d.spec as Json).template as Json).metadata as Json | undefined)?.labels ?? {}) as Record<string, string>;
            return Object.entries(selector).every(([k, v]) => labels[k] === v);
        });
        const generated = service.metadata.labels?.["olm.managed"] !== "true";
        if (selected.length === 0 && !generated) {
            // Legal, and counted only: OLM's ExecutePlan creates a bundle's Service as it is, whatever it
            // selects (operator-framework/operator-lifecycle-manager pkg/controller/operators/catalog/
            // operator.go, the Service step; the pods may come from an operand the operator creates later).
            idleServices.push(`${install.bundle} Service ${service.metadata.name}`);
        } else if (generated && selected.length !== 1) {
            problems.push(
                `Service ${service.metadata.name} selects ${selected.length} Deployments' pods (${selected.map((d) => d.metadata.name).join(", ")}), not exactly its own`,
            );
        }
    }

    // 4. Every RBAC rule of the CSV and of the bundle is granted.
    const scopes = install.config.targetNamespaces.length === 0 ? [undefined] : install.config.targetNamespaces;
    for (const permission of csv.permissions) {
        for (const rule of permission.rules ?? []) {
            for (const scope of permission.cluster ? [undefined] : scopes) {
                if (!granted(manifests, { kind: "ServiceAccount", name: permission.serviceAccount, namespace }, rule, scope)) {
                    problems.push(
                        `${permission.cluster ? "clusterPermissions" : "permissions"} of ${permission.serviceAccount}: rule ${JSON.stringify(rule)} is not granted ${scope ? `in ${scope}` : "cluster-wide"}`,
                    );
                }
            }
        }
    }
    for (const object of facts.objects.filter((o) => o.rules || o.roleRef)) {
        const clusterScoped = object.kind.startsWith("Cluster");
        const rendered = declared.get(keyOf(object.kind, object.name, clusterScoped ? undefined : namespace));
        if (!rendered) continue; // reported above
        if (
            object.rules &&
            JSON.stringify(normalRules(rendered.rules as OracleRule[] | undefined)) !== JSON.stringify(normalRules(object.rules))
        ) {
            problems.push(`${object.kind} ${object.name}: its rules differ from the bundle's`);
        }
        // Compared as values, not as key order: the oracle's Go structs marshal apiGroup/kind/name while the
        // rendered object keeps the bundle file's order, and neither OLM nor the API server reads key order.
        if (
            object.roleRef &&
            (canonicalJson(rendered.roleRef) !== canonicalJson(object.roleRef) ||
                canonicalJson(rendered.subjects ?? []) !== canonicalJson(object.subjects ?? []))
        ) {
            problems.push(`${object.kind} ${object.name}: its roleRef or subjects differ from the bundle's`);
        }
    }
    return problems;
}

/** The API group and resource of each kind a pod spec names. */
const REFERENCED_RESOURCES: Record<string, [string, string]> = {
    ServiceAccount: ["", "serviceaccounts"],
    Secret: ["", "secrets"],
    ConfigMap: ["", "configmaps"],
    PersistentVolumeClaim: ["", "persistentvolumeclaims"],
    PriorityClass: ["scheduling.k8s.io", "priorityclasses"],
    RuntimeClass: ["node.k8s.io", "runtimeclasses"],
};

/**
 * Every object a pod spec names, by walking it (not through the program's own reference list).
 * Image pull Secrets are not among them: the kubelet pulls without a missing one (kubernetes
 * pkg/kubelet/kubelet_pods.go, `getPullSecretsForPod`).
 */
function referencesIn(pod: Json): [string, string, string][] {
    const found: [string, string, string][] = [];
    found.push(["ServiceAccount", (pod.serviceAccountName as string) || (pod.serviceAccount as string) || "default", "serviceAccountName"]);
    if (typeof pod.priorityClassName === "string") found.push(["PriorityClass", pod.priorityClassName, "priorityClassName"]);
    if (typeof pod.runtimeClassName === "string") found.push(["RuntimeClass", pod.runtimeClassName, "runtimeClassName"]);
    const mounted = new Set(
        ["containers", "initContainers", "ephemeralContainers"].flatMap((group) =>
            ((pod[group] as Json[] | undefined) ?? []).flatMap((c) =>
                [...((c.volumeMounts as Json[] | undefined) ?? []), ...((c.volumeDevices as Json[] | undefined) ?? [])].map((m) => m.name),
            ),
        ),
    );
    const walk = (value: unknown, where: string) => {
        if (Array.isArray(value)) return value.forEach((v, i) => walk(v, `${where}[${i}]`));
        if (value === null || typeof value !== "object") return;
        const node = value as Json;
        if (node.optional === true) return;
        for (const [key, child] of Object.entries(node)) {
            const at = `${where}.${key}`;
            if (key === "secretName" && typeof child === "string") found.push(["Secret", child, at]);
            else if (key === "claimName" && typeof child === "string") found.push(["PersistentVolumeClaim", child, at]);
            else if (
                (key === "secretRef" || key === "secretKeyRef" || key === "nodePublishSecretRef") &&
                child &&
                typeof child === "object"
            ) {
                if ((child as Json).optional !== true && typeof (child as Json).name === "string")
                    found.push(["Secret", (child as Json).name as string, at]);
            } else if ((key === "configMapRef" || key === "configMapKeyRef") && child && typeof child === "object") {
                if ((child as Json).optional !== true && typeof (child as Json).name === "string")
                    found.push(["ConfigMap", (child as Json).name as string, at]);
            } else if (key === "configMap" && child && typeof child === "object") {
                if ((child as Json).optional !== true && typeof (child as Json).name === "string")
                    found.push(["ConfigMap", (child as Json).name as string, at]);
            } else if (key === "secret" && child && typeof child === "object" && typeof (child as Json).name === "string") {
                if ((child as Json).optional !== true) found.push(["Secret", (child as Json).name as string, at]); // a projected source
            } else {
                walk(child, at);
            }
        }
    };
    walk(
        {
            // The kubelet mounts only volumes a container mounts or uses as a device
            // (kubernetes pkg/kubelet/volumemanager/populator/desired_state_of_world_populator.go).
            volumes: ((pod.volumes as Json[] | undefined) ?? []).filter((v) => mounted.has(v.name as string)),
            containers: pod.containers,
            initContainers: pod.initContainers,
        },
        "spec",
    );
    return found;
}

/** Whether a binding of `subject` in `scope` (cluster-wide when undefined) grants `rule` (RBAC's RuleAllows, wildcards included). */
function granted(
    manifests: readonly Manifest[],
    subject: { kind: string; name: string; namespace: string },
    rule: OracleRule,
    scope: string | undefined,
): boolean {
    const roles = (kind: string, name: string, namespace?: string) =>
        manifests.filter(
            (m) => m.kind === kind && m.metadata.name === name && (namespace === undefined || m.metadata.namespace === namespace),
        );
    const bindings = manifests.filter(
        (m) =>
            (m.kind === "ClusterRoleBinding" || (scope !== undefined && m.kind === "RoleBinding" && m.metadata.namespace === scope)) &&
            ((m.subjects as Json[] | undefined) ?? []).some(
                (s) => s.kind === subject.kind && s.name === subject.name && s.namespace === subject.namespace,
            ),
    );
    const rules = bindings.flatMap((b) => {
        const ref = b.roleRef as { kind: string; name: string };
        return roles(ref.kind, ref.name, ref.kind === "Role" ? b.metadata.namespace : undefined).flatMap(
            (r) => (r.rules as OracleRule[] | undefined) ?? [],
        );
    });
    return rules.some((r) => covers(r, rule));
}

function covers(grant: OracleRule, rule: OracleRule): boolean {
    const all = (have: string[] | undefined, want: string[] | undefined) =>
        (want ?? []).every((w) => (have ?? []).includes("*") || (have ?? []).includes(w));
    if ((rule.nonResourceURLs ?? []).length > 0) {
        return (
            all(grant.verbs, rule.verbs) &&
            (rule.nonResourceURLs ?? []).every((u) =>
                (grant.nonResourceURLs ?? []).some((g) => g === u || g === "*" || (g.endsWith("*") && u.startsWith(g.slice(0, -1)))),
            )
        );
    }
    const names =
        (grant.resourceNames ?? []).length === 0 || ((rule.resourceNames ?? []).length > 0 && all(grant.resourceNames, rule.resourceNames));
    return all(grant.apiGroups, rule.apiGroups) && all(grant.resources, rule.resources) && all(grant.verbs, rule.verbs) && names;
}

function normalRules(rules: readonly OracleRule[] | undefined): OracleRule[] {
    return (rules ?? []).map((r) => ({
        apiGroups: r.apiGroups ?? [],
        resources: r.resources ?? [],
        resourceNames: r.resourceNames ?? [],
        nonResourceURLs: r.nonResourceURLs ?? [],
        verbs: r.verbs ?? [],
    }));
}

main().catch((error: unknown) => {
    console.error(error);
    process.exitCode = 1;
});
