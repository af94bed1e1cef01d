/**
 * `npm run bench:render`: the whole program (index.ts) under Pulumi's mock runtime at scale —
 * 500 ClusterBundles and 500 Bundles (and 100 operator installs when `components/operator`
 * exists) — against the floor of registering the same number of plain Kubernetes resources in
 * the same run, with the same mocks.
 *
 * The mocks here are plain (inputs become state, reads answer empty): the offline render's own
 * work (recording, presentation, schema validation) is not the program's cost and is left out.
 * Last line: `bench:render ratio=<program / floor> resources=<n> resources_per_cluster_bundle=<k>`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { performance } from "node:perf_hooks";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { flattenConfig } from "../render/config-file";

const ROOT = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(ROOT, "index");
const CLUSTER_BUNDLES = 500;
const BUNDLES = 500;
const OPERATORS = 100;
const ROUNDS = 7;

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

/** The CSVs of the test data that support AllNamespaces, for operator installs. */
function operatorInstalls(): unknown[] {
    if (!fs.existsSync(path.join(ROOT, "components", "operator"))) {
        return [];
    }
    const dir = path.join(ROOT, "..", "shared", "testdata", "csvs");
    const csvs = ["argocd-operator-0.19.0", "cert-manager-1.16.1", "kubevirt-hyperconverged-operator-1.14.0", "node-maintenance-operator-0.0.1", "opentelemetry-operator-0.158.0", "strimzi-cluster-operator-0.12.2"].map(
        (name) => path.relative(ROOT, path.join(dir, `${name}.clusterserviceversion.yaml`)),
    );
    return Array.from({ length: OPERATORS }, (_, i) => ({ name: `op-${i}`, csv: csvs[i % csvs.length], namespace: `op-${i}`, targetNamespaces: [] }));
}

function stackConfig(clusterBundles: number, bundles: number, operators: unknown[]): Record<string, unknown> {
    return {
        cluster: { name: "bench", platform: "openshift" },
        subscriptions: {
            enabled: true,
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

async function run(body: () => Promise<unknown>, config: Record<string, unknown>): Promise<{ ms: number; count: number }> {
    const mocks = new PlainMocks();
    // "organization" is what the engine reports for self-managed (DIY) backends.
    await pulumi.runtime.setMocks(mocks, "cluster-platform", "bench", true, "organization");
    const flat = flattenConfig(config);
    pulumi.runtime.setAllConfig(flat.values, flat.secretKeys);
    const warn = console.warn;
    console.warn = () => undefined; // the program's one skipped-read warning per run is not the point here
    const start = performance.now();
    try {
        await pulumi.runtime.runInPulumiStack(async () => (await body()) as Record<string, unknown>);
        await pulumi.runtime.disconnect();
    } finally {
        console.warn = warn;
    }
    return { ms: performance.now() - start, count: mocks.count };
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
    const operators = operatorInstalls();
    const config = stackConfig(CLUSTER_BUNDLES, BUNDLES, operators);
    // What one more ClusterBundle adds (the driver's CRD reads are made once, for all of them).
    const perBundle = (await run(program, stackConfig(2, 0, []))).count - (await run(program, stackConfig(1, 0, []))).count;

    const warm = await run(program, config);
    const resources = warm.count;
    await run(floor(resources), {});
    // Program and floor run back to back, in alternating order, and each pair gives a ratio: on a
    // machine shared with other work, neighbours in time see the same load. The median pair wins.
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
    console.log(
        `program: ${CLUSTER_BUNDLES} ClusterBundles, ${BUNDLES} Bundles, ${operators.length} operator installs${operators.length === 0 ? " (components/operator not present)" : ""}`,
    );
    console.log(`program ms: [${programMs.map((m) => m.toFixed(0)).join(", ")}] (median ${median(programMs).toFixed(0)})`);
    console.log(`floor ms:   [${floorMs.map((m) => m.toFixed(0)).join(", ")}] (median ${median(floorMs).toFixed(0)})`);
    console.log(`ratio per pair: [${ratios.map((r) => r.toFixed(2)).join(", ")}] (median ${ratio.toFixed(2)})`);
    console.log(`bench:render ratio=${ratio.toFixed(2)} resources=${resources} resources_per_cluster_bundle=${perBundle}`);
}

main().catch((error) => {
    console.error(error);
    process.exit(1);
});
