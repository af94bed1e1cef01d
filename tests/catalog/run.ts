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
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { canonicalJson } from "../../components/shared/canonical-json";
import { goDecodeManifest, goYamlDocuments } from "../../components/shared/go-yaml";
import { type JsonSchema, structuralValidator } from "../../components/shared/structural-schema";
import type { OperatorPlan } from "../../components/operator/plan";
import type { RenderResult } from "../../scripts/render/render";
import {
    BUNDLES_ROOT,
    CatalogInstall,
    CatalogOracle,
    catalogBatches,
    catalogCluster,
    catalogInstalls,
    catalogVerdict,
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

/** A failure and where it sorts: phase, then the file, bundle, install or batch it belongs to (shards merge by it). */
interface Failure {
    key: number;
    text: string;
}
const PHASE = { yaml: 0, schemas: 1e7, verdicts: 2e7, renders: 3e7 };

/** What one shard found; the parent adds them up. */
interface ShardResult {
    bundles: number;
    installs: number;
    installable: number;
    refused: number;
    refusedWhy: [string, number][];
    yamlFiles: number;
    schemas: number;
    idleServices: number;
    failures: Failure[];
}

/**
 * The run is split over `CATALOG_WORKERS` processes (default 2, one per core of the CI machine):
 * each shard plans and judges every install (cheap, and the batches depend on all of them) but reads
 * every n-th manifest, compiles every n-th bundle's schemas and renders every n-th batch, the costly
 * parts. The parent merges the shards' results in file, bundle, install and batch order, so the
 * output does not depend on the number of workers.
 */
async function main(): Promise<void> {
    const started = Date.now();
    const shardEnv = process.env.CATALOG_SHARD;
    if (shardEnv !== undefined) {
        const [shard, shards] = shardEnv.split("/").map(Number);
        process.stdout.write(`${JSON.stringify(await runShard(shard, shards))}\n`);
        return;
    }
    const workers = Math.max(1, Number(process.env.CATALOG_WORKERS ?? 2));
    const results =
        workers === 1
            ? [await runShard(0, 1)]
            : await Promise.all(Array.from({ length: workers }, (_, shard) => spawnShard(shard, workers)));
    const sum = (f: (r: ShardResult) => number) => results.reduce((n, r) => n + f(r), 0);
    const refusedWhy = new Map<string, number>();
    for (const [why, n] of results.flatMap((r) => r.refusedWhy)) refusedWhy.set(why, (refusedWhy.get(why) ?? 0) + n);
    const why = [...refusedWhy]
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k}: ${v}`)
        .join(", ");
    const failures = results.flatMap((r) => r.failures).sort((a, b) => a.key - b.key);
    console.log(
        `catalog: ${results[0].bundles} bundles, ${results[0].installs} installs (every supported install mode): ${sum((r) => r.installable)} installable / ${sum((r) => r.refused)} refused (${why || "none"}) / ${failures.length} failing; ${sum((r) => r.yamlFiles)} manifests read as Go reads them, ${sum((r) => r.schemas)} CRD schemas compiled; ${sum((r) => r.idleServices)} bundle Services select no pod of their install (legal: OLM creates them as they are); ${workers} workers; ${((Date.now() - started) / 1000).toFixed(0)} s`,
    );
    for (const failure of failures) console.log(`  FAIL ${failure.text}`);
    process.exitCode = failures.length > 0 ? 1 : 0;
}

/** This file again, as shard `shard` of `shards`, with the same Node flags (tsx's loader); its result is its last stdout line. */
function spawnShard(shard: number, shards: number): Promise<ShardResult> {
    return new Promise((resolve, reject) => {
        const child = spawn(process.execPath, [...process.execArgv, __filename], {
            env: { ...process.env, CATALOG_SHARD: `${shard}/${shards}` },
            stdio: ["ignore", "pipe", "inherit"],
        });
        let out = "";
        child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
        child.on("error", reject);
        child.on("close", (code) => {
            const last = out.trim().split("\n").pop() ?? "";
            if (code !== 0 || !last.startsWith("{"))
                reject(new Error(`catalog shard ${shard}/${shards} exited ${code}: ${out.slice(-2000)}`));
            else resolve(JSON.parse(last) as ShardResult);
        });
    });
}

async function runShard(shard: number, shards: number): Promise<ShardResult> {
    const mine = (index: number) => index % shards === shard;
    const only = process.env.CATALOG_ONLY;
    const oracle = readCatalogOracle();
    const failures: Failure[] = [];

    const yamlFiles = checkYaml(oracle, only, mine, failures);
    const schemas = checkSchemas(oracle, only, mine, failures);

    const installs = catalogInstalls(oracle, only ? (b) => b.includes(only) : undefined);
    const refusedWhy = new Map<string, number>();
    const accepted: CatalogInstall[] = [];
    const plans = new Map<CatalogInstall, OperatorPlan>();
    const afterSupply = new Set<CatalogInstall>();
    let refused = 0;
    // Every shard judges every install; shard 0 alone reports and counts the verdicts.
    const verdictFailures: Failure[] = [];
    for (const [index, install] of installs.entries()) {
        const fail = (text: string) => verdictFailures.push({ key: PHASE.verdicts + index, text });
        const facts = oracle.bundles[install.bundle];
        const planned = planCatalogInstall(install);
        const verdict = await catalogVerdict(install, planned);
        const olmRefuses = facts.refusals.length > 0;
        const where = `${install.bundle} (${install.mode})`;
        if (olmRefuses) {
            if (!verdict.refused) {
                fail(
                    `${where}: OLM refuses it (${facts.refusals.map((r) => `${r.rule}, ${r.source}`).join("; ")}) but the program accepts it`,
                );
                continue;
            }
            const unnamed = facts.refusals.filter(
                (r) => !verdict.problems.some((p) => p.includes(install.bundle) && (r.file === undefined || p.includes(r.file))),
            );
            if (unnamed.length > 0) {
                fail(
                    `${where}: refused, but no message names the bundle file of OLM's reason: ${unnamed.map((r) => `${r.rule} (${r.file ?? "CSV"})`).join("; ")}; messages: ${verdict.problems.join(" | ")}`,
                );
                continue;
            }
            refused++;
            for (const rule of new Set(facts.refusals.map((r) => r.rule)))
                refusedWhy.set(`OLM: ${rule}`, (refusedWhy.get(`OLM: ${rule}`) ?? 0) + 1);
            continue;
        }
        const programOnly = verdict.problems.filter((p) => !verdict.podProblems.includes(p));
        if (programOnly.length > 0) {
            fail(`${where}: refused although OLM installs it: ${programOnly.join(" | ")}`);
            continue;
        }
        if (verdict.podProblems.length > 0) {
            const unclear = verdict.podProblems.filter((p) => !p.includes(install.bundle) || !p.includes("OLM would install"));
            if (unclear.length > 0)
                fail(`${where}: a pod-reference refusal does not name the bundle or say OLM installs it: ${unclear.join(" | ")}`);
            refused++;
            refusedWhy.set("pods could not start (OLM installs it)", (refusedWhy.get("pods could not start (OLM installs it)") ?? 0) + 1);
            // Rendered all the same with the missing objects created first, as the message tells the admin.
            afterSupply.add(install);
        }
        accepted.push(install);
        plans.set(install, planned.plans[0]);
    }

    if (shard === 0) failures.push(...verdictFailures);

    let installable = 0;
    const idleServices: string[] = [];
    for (const [index, batch] of catalogBatches(accepted, plans, BATCH).entries()) {
        if (!mine(index)) continue;
        const fail = (text: string) => failures.push({ key: PHASE.renders + index, text });
        const supplied = batch.filter((i) => afterSupply.has(i)).flatMap((i) => suppliedObjects(plans.get(i)!));
        const result = await renderCatalogInstalls(batch, supplied);
        if (!result.ok) {
            fail(
                `render of ${batch.map((i) => `${i.bundle} (${i.mode})`).join(", ")} failed: ${[...result.problems.map((p) => p.message), ...result.errors].join(" | ")}`,
            );
            continue;
        }
        for (const install of batch) {
            const problems = checkInstall(install, oracle.bundles[install.bundle], result, batch, supplied, idleServices);
            if (problems.length === 0 && !afterSupply.has(install)) installable++;
            problems.forEach((p) => fail(`${install.bundle} (${install.mode}): ${p}`));
        }
    }

    return {
        bundles: new Set(installs.map((i) => i.bundle)).size,
        installs: installs.length,
        installable,
        refused: shard === 0 ? refused : 0,
        refusedWhy: shard === 0 ? [...refusedWhy] : [],
        yamlFiles,
        schemas,
        idleServices: idleServices.length,
        failures,
    };
}

/** Every manifest's first document and every document, as the Go oracle decoded them. */
function checkYaml(oracle: CatalogOracle, only: string | undefined, mine: (index: number) => boolean, failures: Failure[]): number {
    let count = 0;
    for (const [index, [file, expected]] of Object.entries(oracle.files).entries()) {
        if ((only && !file.includes(only)) || !mine(index)) continue;
        count++;
        const text = fs.readFileSync(path.join(BUNDLES_ROOT, file), "utf8");
        const decoded = goDecodeManifest(text);
        const got = !decoded.ok ? "refused" : decoded.value === null ? "no object" : goJsonSha256(decoded.value);
        const want = expected.opm.error !== undefined ? "refused" : expected.opm.empty ? "no object" : expected.opm.sha256;
        const documents = goYamlDocuments(text).map((d) => (d.ok ? goJsonSha256(d.value) : "refused"));
        const wantDocuments = expected.documents.map((d) => (d.error !== undefined ? "refused" : d.sha256));
        if (got !== want || JSON.stringify(documents) !== JSON.stringify(wantDocuments)) {
            failures.push({
                key: PHASE.yaml + index,
                text: `${file}: read ${got} (documents ${documents.length}), Go reads ${want} (documents ${wantDocuments.length})${decoded.ok ? "" : `: ${decoded.error}`}`,
            });
        }
    }
    return count;
}

/** Every CRD version's schema of the bundles compiles in the one structural-schema validator, in both modes (two crashed the former render). */
function checkSchemas(oracle: CatalogOracle, only: string | undefined, mine: (index: number) => boolean, failures: Failure[]): number {
    let count = 0;
    for (const [index, [bundle, facts]] of Object.entries(oracle.bundles).entries()) {
        if ((only && !bundle.includes(only)) || !mine(index)) continue;
        for (const crd of facts.objects.filter((o) => o.handling === "crd")) {
            const decoded = goDecodeManifest(fs.readFileSync(path.join(BUNDLES_ROOT, bundle, "manifests", crd.file), "utf8"));
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
                        key: PHASE.schemas + index,
                        text: `${bundle} ${crd.file} version ${String(version.name)}: the schema validator fails on it: ${(error as Error).message.split("\n")[0]}`,
                    });
                }
            }
        }
    }
    return count;
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
    const expected: { key: string; olmLabels: boolean }[] = [
        ...csv.deployments.map((d) => ({ key: keyOf("Deployment", d, namespace), olmLabels: false })),
        ...csv.serviceAccounts.map((sa) => ({ key: keyOf("ServiceAccount", sa, namespace), olmLabels: false })),
        ...csv.apiServices.map((a) => ({ key: keyOf("APIService", a), olmLabels: false })),
    ];
    const replaced = certResourceKeys(install, csv.file, namespace);
    for (const object of facts.objects) {
        if (object.handling === "crd") {
            expected.push({ key: keyOf("CustomResourceDefinition", object.name), olmLabels: false });
        } else {
            const clusterScoped = [
                "ClusterRole",
                "ClusterRoleBinding",
                "PriorityClass",
                "ConsoleYAMLSample",
                "ConsoleQuickStart",
                "ConsoleCLIDownload",
                "ConsoleLink",
                "ConsolePlugin",
            ].includes(object.kind);
            const key = keyOf(object.kind, object.name, clusterScoped ? undefined : namespace);
            expected.push({ key, olmLabels: !replaced.has(key) });
        }
    }
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

/**
 * The objects OLM's install of the CSV makes for each Deployment that serves a webhook or an owned
 * APIService, read from the CSV file: the Service `<deployment>-service`, its Secret
 * `<service>-cert` and that Secret's Role and RoleBinding. A bundle object of one of these names
 * is replaced: `installCertRequirementsForDeployment` deletes the bundle's Service and creates its
 * own, and updates the Secret, Role and RoleBinding to its own, none with the label olm.managed
 * (operator-framework/operator-lifecycle-manager pkg/controller/install/certresources.go;
 * `ServiceName`, `SecretName`). So such an object is expected, without OLM's bundle label.
 */
function certResourceKeys(install: CatalogInstall, csvFile: string, namespace: string): Set<string> {
    const decoded = goDecodeManifest(fs.readFileSync(path.join(BUNDLES_ROOT, install.bundle, "manifests", csvFile), "utf8"));
    const spec = (decoded.ok ? ((decoded.value as Json | null)?.spec as Json | undefined) : undefined) ?? {};
    const owned = ((spec.apiservicedefinitions as Json | undefined)?.owned as Json[] | undefined) ?? [];
    const served = new Set(
        [...((spec.webhookdefinitions as Json[] | undefined) ?? []), ...owned]
            .map((d) => d.deploymentName)
            .filter((d): d is string => typeof d === "string" && d !== ""),
    );
    return new Set(
        [...served].flatMap((deployment) => {
            const service = `${deployment}-service`;
            return [
                keyOf("Service", service, namespace),
                ...["Secret", "Role", "RoleBinding"].map((kind) => keyOf(kind, `${service}-cert`, namespace)),
            ];
        }),
    );
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
