/**
 * kubectl against the run's cluster: the one built with the control plane (REAL_BIN) in the
 * hermetic tier, the user's on PATH with `--cluster existing`.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { allCrdsEstablished, crdEstablishment, type CrdStatus } from "../../../scripts/real/cluster";
import { eventually } from "./eventually";
import { realEnv } from "./stack";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- live objects are read as plain JSON, independently of the code under test
export type KubeObject = any;

export interface KubectlResult {
    readonly status: number;
    readonly stdout: string;
    readonly stderr: string;
}

function kubectlBinary(): string {
    return process.env.REAL_BIN ? path.join(process.env.REAL_BIN, "kubectl") : "kubectl";
}

/** Runs kubectl; `as` impersonates a user (`--as`), with `groups` as `--as-group`. */
export function kubectlRun(
    args: string[],
    options: { input?: string; as?: string; groups?: string[]; kubeconfig?: string } = {},
): KubectlResult {
    const identity = options.as ? ["--as", options.as, ...(options.groups ?? []).flatMap((g) => ["--as-group", g])] : [];
    // Its discovery cache goes into the run's directory, not the runner's ~/.kube.
    const cache = ["--cache-dir", path.join(realEnv("REAL_WORK"), "kube-cache")];
    const result = spawnSync(
        kubectlBinary(),
        ["--kubeconfig", options.kubeconfig ?? realEnv("REAL_KUBECONFIG"), ...cache, ...identity, ...args],
        {
            encoding: "utf8",
            input: options.input,
            maxBuffer: 64 << 20,
        },
    );
    if (result.error) {
        throw result.error;
    }
    return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** kubectl that must succeed; returns stdout. */
export function kubectl(args: string[], options: Parameters<typeof kubectlRun>[1] = {}): string {
    const result = kubectlRun(args, options);
    if (result.status !== 0) {
        throw new Error(`kubectl ${args.join(" ")} failed (exit ${result.status}): ${result.stderr.trim()}`);
    }
    return result.stdout;
}

/** `Kind.group` as kubectl takes it (`ClusterRole.rbac.authorization.k8s.io`; a core kind alone). */
function kindWithGroup(apiVersion: string, kind: string): string {
    return apiVersion.includes("/") ? `${kind}.${apiVersion.split("/")[0]}` : kind;
}

/** The objects this run created, one JSON line each, deleted (newest first) by the global teardown. */
export function createdObjectsLedger(): string {
    return path.join(realEnv("REAL_WORK"), "created-objects.jsonl");
}

/**
 * Creates each object that does not exist yet and records it in the ledger; an object that exists
 * (a namespace of the user's, OLM's own OLMConfig on a cluster with OLM) is left exactly as it is,
 * so `--cluster existing` changes nothing it did not create.
 */
export function applyObjects(objects: readonly KubeObject[]): void {
    for (const object of objects) {
        const { kind, metadata } = object;
        if (getObject(kindWithGroup(object.apiVersion, kind), metadata.name, metadata.namespace)) {
            continue;
        }
        kubectl(["create", "-f", "-"], { input: JSON.stringify(object) });
        fs.appendFileSync(
            createdObjectsLedger(),
            `${JSON.stringify({ apiVersion: object.apiVersion, kind, name: metadata.name, namespace: metadata.namespace })}\n`,
        );
    }
}

/** Deletes what the ledger records, newest first; returns what could not be deleted. */
export function deleteCreatedObjects(): string[] {
    const file = createdObjectsLedger();
    if (!fs.existsSync(file)) {
        return [];
    }
    const entries = fs
        .readFileSync(file, "utf8")
        .trim()
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as { apiVersion: string; kind: string; name: string; namespace?: string });
    const failures: string[] = [];
    for (const entry of entries.reverse()) {
        const result = kubectlRun(["delete", "--ignore-not-found", "--wait=false", "-f", "-"], {
            input: JSON.stringify({
                apiVersion: entry.apiVersion,
                kind: entry.kind,
                metadata: { name: entry.name, namespace: entry.namespace },
            }),
        });
        if (result.status !== 0) {
            failures.push(`${entry.kind} ${entry.namespace ? `${entry.namespace}/` : ""}${entry.name}: ${result.stderr.trim()}`);
        }
    }
    fs.rmSync(file);
    return failures;
}

/** One object as JSON, or undefined when it does not exist. */
export function getObject(kind: string, name: string, namespace?: string): KubeObject | undefined {
    const result = kubectlRun(["get", kind, name, ...(namespace ? ["-n", namespace] : []), "-o", "json"]);
    if (result.status !== 0) {
        if (/NotFound|not found/.test(result.stderr)) {
            return undefined;
        }
        throw new Error(`kubectl get ${kind} ${name} failed: ${result.stderr.trim()}`);
    }
    return JSON.parse(result.stdout) as KubeObject;
}

/** Waits until every CRD named is Established (`crdEstablishment` says why it is polled); a refused name fails at once. */
export async function waitForCrdsEstablished(names: readonly string[], timeoutMs = 60_000): Promise<void> {
    let last = "";
    await eventually(
        "the apiextensions controller writes a new CRD's conditions after the create returns",
        () => {
            const read = JSON.parse(kubectl(["get", ...names.map((name) => `crd/${name}`), "-o", "json"])) as KubeObject;
            const crds: CrdStatus[] = read.kind === "List" ? read.items : [read];
            last = crds
                .filter((crd) => crdEstablishment(crd) === "pending")
                .map((crd) => crd.metadata?.name)
                .join(", ");
            return allCrdsEstablished(crds) ? true : undefined;
        },
        { timeoutMs, describe: () => `not Established: ${last}` },
    );
}
