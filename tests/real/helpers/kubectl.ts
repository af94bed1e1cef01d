/**
 * kubectl against the run's cluster: the one built with the control plane (REAL_BIN) in the
 * hermetic tier, the user's on PATH with `--cluster existing`.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
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
    const result = spawnSync(kubectlBinary(), ["--kubeconfig", options.kubeconfig ?? realEnv("REAL_KUBECONFIG"), ...identity, ...args], {
        encoding: "utf8",
        input: options.input,
        maxBuffer: 64 << 20,
    });
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

/** Applies objects (server-side, as the admin "real-tier-fixtures" field manager). */
export function applyObjects(objects: readonly object[]): void {
    kubectl(["apply", "--server-side", "--field-manager=real-tier-fixtures", "-f", "-"], {
        input: JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }),
    });
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
