/**
 * `npm run bench:render [-- --no-operators]`: the whole program (index.ts) under Pulumi's mock
 * runtime at scale — 500 ClusterBundles and 500 Bundles (and 100 operator installs when
 * `components/operator` exists) — against the floor of registering the same number of plain
 * Kubernetes resources in the same run, with the same mocks.
 *
 * The mocks here are plain (inputs become state, reads answer empty): the offline render's own
 * work (recording, presentation, schema validation) is not the program's cost and is left out.
 * Last line: `bench:render ratio=<program / floor> resources=<n> resources_per_cluster_bundle=<k>`.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { flattenConfig } from "../render/config-file";
import { CURRENT_CLUSTER_APIS, CURRENT_CLUSTER_VERSION } from "../render/render";
import { setApiDiscovery, setServerVersion } from "../../components/shared/discovery";
import { setObjectLister, setObjectReader, setPresenceLookup } from "../../components/shared/object-presence";

const ROOT = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(ROOT, "index");
/** `--tiny`: the suite's smoke run (tests/render/bench-render.test.ts); its figures mean nothing. */
const TINY = process.argv.includes("--tiny");
const CLUSTER_BUNDLES = TINY ? 2 : 500;
const BUNDLES = TINY ? 2 : 500;
// Three installs at the tiny size: two of the same bundle, so the smoke run sees the per-install renames.
const OPERATORS = TINY ? 3 : 100;
const ROUNDS = TINY ? 1 : 7;

/** Counts what the program asks of the engine; answers as a preview would, without a cluster. */
class PlainMocks implements pulumi.runtime.Mocks {
    count = 0;
    newResource(args: pulumi.runtime.MockResourceArgs): pulumi.runtime.MockResourceResult {
        this.count++;
        return { id: args.id || undefined, state: args.id ? {} : args.inputs };
    }
    call(args: pulumi.runtime.MockCallArgs): pulumi.runtime.MockCallResult {
        return args.inputs;
    }
}

/**
 * OPERATORS installs, each of its own bundle: the sample widget operator (AllNamespaces, with a
 * webhook) and backup operator (its own namespace), alternating, copied to a temporary directory
 * with their API group, CSV name and webhook Deployment made unique per install, since two installs may not own the
 * same cluster-scoped objects.
 * None while the operator capability is absent.
 */
function operatorInstalls(workDir: string): unknown[] {
    if (!fs.existsSync(path.join(ROOT, "components", "operator"))) {
        return [];
    }
    const bundles = [
        { name: "widget-operator", allNamespaces: true },
        { name: "backup-operator", allNamespaces: false },
    ];
    return Array.from({ length: OPERATORS }, (_, i) => {
        const bundle = bundles[i % bundles.length];
        const source = path.join(ROOT, "tests", "fixtures", "operators", bundle.name, "manifests");
        const target = path.join(workDir, `op-${i}`, "manifests");
        fs.mkdirSync(target, { recursive: true });
        for (const file of fs.readdirSync(source)) {
            const text = fs
                .readFileSync(path.join(source, file), "utf8")
                .replaceAll("samples.cluster-platform.io", `samples-${i}.cluster-platform.io`)
                .replaceAll(`${bundle.name}.v`, `${bundle.name}-${i}.v`)
                // The webhook's Deployment names its Service and that Service's cluster-scoped
                // auth-delegator binding, which two installs may not share.
                .replaceAll("widget-webhook", `widget-webhook-${i}`);
            fs.writeFileSync(path.join(target, file), text);
        }
        return {
            name: `op-${i}`,
            csv: path.relative(ROOT, path.join(target, `${bundle.name}.clusterserviceversion.yaml`)),
            namespace: `op-${i}`,
            targetNamespaces: bundle.allNamespaces ? [] : [`op-${i}`],
        };
    });
}

function stackConfig(clusterBundles: number, bundles: number, operators: unknown[]): Record<string, unknown> {
    return {
        cluster: { name: "bench", platform: "openshift", kubeContext: "bench" },
        subscriptions: {
            enabled: true,
            // A pinned image, as a live stack that does not build one names it: the benchmark
            // measures the program's resources, not an image build (a live stack that builds
            // its image needs a registry it can push to, a config rule since).
            webhook: { image: `quay.io/example/subscription-webhook@sha256:${"5".repeat(64)}` },
            clusterBundles: Array.from({ length: clusterBundles }, (_, i) => ({
                name: `bundle-${i}`,
                alwaysInject: i % 2 === 0,
                entitlements: [{ name: `entitlement-${i}`, namespace: "openshift-config" }],
                yumRepositories: [{ name: `repos-${i}`, namespace: "openshift-config" }],
                aggregateToClusterRoles: ["edit", "admin"],
            })),
            bundles: Array.from({ length: bundles }, (_, i) => ({
                name: `bundle-${i}`,
                namespace: `team-${i % 50}`,
                entitlements: [{ name: "etc-pki-entitlement" }],
            })),
        },
        operators,
    };
}

/**
 * Runs `body` as a Pulumi program under fresh mocks. Measures this process's CPU time (user +
 * system), not wall time: the mock engine runs in-process, and CPU time barely moves when other
 * jobs share the cores, where wall time doubles.
 */
async function run(body: () => Promise<unknown>, config: Record<string, unknown>): Promise<{ ms: number; count: number }> {
    const mocks = new PlainMocks();
    // "organization" is what the engine reports for self-managed (DIY) backends.
    await pulumi.runtime.setMocks(mocks, "cluster-platform", "bench", true, "organization");
    const flat = flattenConfig(config);
    pulumi.runtime.setAllConfig(flat.values, flat.secretKeys);
    // The live stack's pre-flight asks the API server what exists and what it serves; answered here,
    // as the render answers them, so that no cluster is needed (and none is timed).
    setPresenceLookup(async (refs) => refs.map(() => "present" as const));
    // A fresh cluster: none of the operators' CRDs or Deployments the upgrade checks read exists yet.
    setObjectReader(async (refs) => refs.map(() => "absent" as const));
    setObjectLister(async () => []);
    setApiDiscovery(async (groupVersion) => new Set(CURRENT_CLUSTER_APIS[groupVersion] ?? []));
    setServerVersion(async () => CURRENT_CLUSTER_VERSION);
    const warn = console.warn;
    console.warn = () => undefined; // the program's one skipped-read warning per run is not the point here
    const start = process.cpuUsage();
    try {
        await pulumi.runtime.runInPulumiStack(async () => (await body()) as Record<string, unknown>);
        await pulumi.runtime.disconnect();
    } finally {
        console.warn = warn;
    }
    const used = process.cpuUsage(start);
    return { ms: (used.user + used.system) / 1000, count: mocks.count };
}

const program = () => (require(PROGRAM) as () => Promise<unknown>)();

/**
 * n registrations of plain resources: the stack itself and n - 1 ConfigMaps with a name and one
 * key, no parent, no options.
 */
function floor(n: number) {
    return async () => {
        for (let i = 0; i < n - 1; i++) {
            new k8s.core.v1.ConfigMap(`plain-${i}`, { metadata: { name: `plain-${i}`, namespace: "default" }, data: { key: "value" } });
        }
        return {};
    };
}

function median(values: number[]): number {
    const sorted = [...values].sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
    const workDir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-render-"));
    try {
        // `--no-operators` leaves the operator installs out, to see the subscriptions alone.
        await measure(process.argv.includes("--no-operators") ? [] : operatorInstalls(workDir));
    } finally {
        fs.rmSync(workDir, { recursive: true, force: true });
    }
}

async function measure(operators: unknown[]): Promise<void> {
    const config = stackConfig(CLUSTER_BUNDLES, BUNDLES, operators);
    // What one more ClusterBundle adds (the driver's CRD reads are made once, for all of them).
    const perBundle = (await run(program, stackConfig(2, 0, []))).count - (await run(program, stackConfig(1, 0, []))).count;

    const warm = await run(program, config);
    const resources = warm.count;
    await run(floor(resources), {});
    // Program and floor run back to back, in alternating order, and each pair gives a ratio
    // (neighbours in time see the same machine); the median pair's ratio is the result.
    const programMs: number[] = [];
    const floorMs: number[] = [];
    const ratios: number[] = [];
    const measureFloor = async () => {
        const plain = await run(floor(resources), {});
        if (plain.count !== resources) {
            throw new Error(`the floor registered ${plain.count} resources, the program ${resources}`);
        }
        return plain.ms;
    };
    const measureProgram = async () => (await run(program, config)).ms;
    for (let round = 0; round < ROUNDS; round++) {
        let p: number;
        let f: number;
        if (round % 2 === 0) {
            p = await measureProgram();
            f = await measureFloor();
        } else {
            f = await measureFloor();
            p = await measureProgram();
        }
        programMs.push(p);
        floorMs.push(f);
        ratios.push(p / f);
    }
    const ratio = median(ratios);
    console.log(`program: ${CLUSTER_BUNDLES} ClusterBundles, ${BUNDLES} Bundles, ${operators.length} operator installs`);
    console.log(`program CPU ms: [${programMs.map((m) => m.toFixed(0)).join(", ")}] (median ${median(programMs).toFixed(0)})`);
    console.log(`floor CPU ms:   [${floorMs.map((m) => m.toFixed(0)).join(", ")}] (median ${median(floorMs).toFixed(0)})`);
    console.log(`ratio per pair: [${ratios.map((r) => r.toFixed(2)).join(", ")}] (median ${ratio.toFixed(2)})`);
    console.log(`bench:render ratio=${ratio.toFixed(2)} resources=${resources} resources_per_cluster_bundle=${perBundle}`);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
