/**
 * Runs one container of a Deployment the way a kubelet would, without a container runtime: the
 * image's root filesystem (skopeo copies it from the registry, umoci unpacks it and writes the
 * OCI runtime config its image config implies: args, env, user, working directory), the pod's
 * volumes written where the container mounts them (Secret items, emptyDirs, the service-account
 * token), the container's env on top of the image's, and the in-cluster API address; the process
 * runs chrooted, as the image's user, inside the cluster's network namespace, where every pod IP
 * kwok hands out is a local address (scripts/real/cluster.ts). The API server, bound to loopback
 * on the host, is reached through a relay on the host side of the veth pair.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { NETWORK } from "../../../scripts/real/cluster";
import { kubectl, type KubeObject } from "./kubectl";
import { realEnv, runTemp } from "./stack";

const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

export interface RunningContainer {
    readonly process: ChildProcess;
    /** What the process wrote, for a failing test's message. */
    output(): string;
    /** Writes the pod's volumes again from the live Secrets, as a kubelet's sync does after a Secret changes. */
    syncVolumes(): void;
    stop(): Promise<void>;
}

/**
 * A TCP relay from the veth's host side to the API server on loopback, in a process of its own:
 * the test blocks in kubectl (spawnSync) while the API server calls the webhook, which calls the
 * API server back, so the relay must not share the test's event loop. Resolves to its port.
 */
async function apiRelay(server: URL): Promise<{ port: number; close: () => Promise<void> }> {
    const script = `
        const net = require("node:net");
        const relay = net.createServer((inbound) => {
            const outbound = net.connect(${Number(server.port)}, ${JSON.stringify(server.hostname)});
            for (const s of [inbound, outbound]) s.on("error", () => { inbound.destroy(); outbound.destroy(); });
            inbound.pipe(outbound).pipe(inbound);
        });
        relay.listen(0, ${JSON.stringify(NETWORK.hostIp)}, () => console.log(relay.address().port));
        process.on("SIGTERM", () => process.exit(0));`;
    const child = spawn(process.execPath, ["-e", script], { stdio: ["ignore", "pipe", "inherit"] });
    const port = await new Promise<number>((resolve, reject) => {
        child.once("exit", (code) => reject(new Error(`the API relay exited with ${code}`)));
        child.stdout?.once("data", (d: Buffer) => resolve(Number(d.toString("utf8").trim())));
    });
    return {
        port,
        close: async () => {
            if (child.exitCode === null) {
                const exited = new Promise((resolve) => child.once("exit", resolve));
                child.kill("SIGTERM");
                await exited;
            }
        },
    };
}

interface RuntimeConfig {
    process: { args: string[]; env: string[]; cwd: string; user: { uid: number; gid: number } };
}

/** The image's root filesystem and its runtime config, unpacked under `dir`. */
export function unpackImage(image: string, dir: string): { rootfs: string; config: RuntimeConfig } {
    const layout = path.join(dir, "layout");
    const bundle = path.join(dir, "bundle");
    const env = { ...process.env, TMPDIR: runTemp() };
    execFileSync("skopeo", ["copy", "--src-tls-verify=false", `docker://${image}`, `oci:${layout}:image`], { stdio: "pipe", env });
    execFileSync("umoci", ["unpack", "--image", `${layout}:image`, bundle], { stdio: "pipe", env });
    return {
        rootfs: path.join(bundle, "rootfs"),
        config: JSON.parse(fs.readFileSync(path.join(bundle, "config.json"), "utf8")) as RuntimeConfig,
    };
}

function writeFile(rootfs: string, file: string, content: Buffer | string, uid: number, gid: number): void {
    const target = path.join(rootfs, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    fs.writeFileSync(target, content, { mode: 0o640 });
    fs.chownSync(target, uid, gid);
}

/** Writes the pod's volumes where `container` mounts them. */
function mountVolumes(rootfs: string, pod: KubeObject, container: KubeObject, namespace: string, uid: number, gid: number): void {
    const volumes = new Map<string, KubeObject>((pod.volumes ?? []).map((v: KubeObject) => [v.name, v]));
    for (const mount of container.volumeMounts ?? []) {
        const volume = volumes.get(mount.name);
        const target = path.join(rootfs, mount.mountPath);
        if (volume?.secret) {
            const secret = JSON.parse(kubectl(["get", "secret", volume.secret.secretName, "-n", namespace, "-o", "json"])) as KubeObject;
            const items: { key: string; path: string }[] =
                volume.secret.items ?? Object.keys(secret.data).map((key) => ({ key, path: key }));
            for (const item of items) {
                writeFile(rootfs, path.join(mount.mountPath, item.path), Buffer.from(secret.data[item.key], "base64"), uid, gid);
            }
        } else if (volume?.emptyDir) {
            fs.mkdirSync(target, { recursive: true });
            fs.chmodSync(target, 0o1777);
        } else {
            throw new Error(`pod-runtime: volume ${mount.name} (${JSON.stringify(volume)}) is not a kind this runtime mounts`);
        }
    }
}

/** The container's env over the image's: values, and the downward API's namespace and name. */
function containerEnv(image: string[], container: KubeObject, podName: string, namespace: string): Record<string, string> {
    const env: Record<string, string> = Object.fromEntries(image.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)]));
    for (const variable of container.env ?? []) {
        if (variable.value !== undefined) {
            env[variable.name] = variable.value;
        } else if (variable.valueFrom?.fieldRef?.fieldPath === "metadata.namespace") {
            env[variable.name] = namespace;
        } else if (variable.valueFrom?.fieldRef?.fieldPath === "metadata.name") {
            env[variable.name] = podName;
        } else {
            throw new Error(`pod-runtime: env ${variable.name} (${JSON.stringify(variable.valueFrom)}) is not a source this runtime fills`);
        }
    }
    return env;
}

/** Runs the first container of `deployment` (in `namespace`) from its image, as one of its pods. */
export async function runDeploymentContainer(namespace: string, deployment: string, dir: string): Promise<RunningContainer> {
    const spec = JSON.parse(kubectl(["get", "deployment", deployment, "-n", namespace, "-o", "json"])) as KubeObject;
    const podSpec = spec.spec.template.spec;
    const container = podSpec.containers[0];
    const podName = (
        JSON.parse(
            kubectl(["get", "pods", "-n", namespace, "-l", labelSelector(spec.spec.selector.matchLabels), "-o", "json"]),
        ) as KubeObject
    ).items[0].metadata.name;
    const { rootfs, config } = unpackImage(container.image, dir);
    const { uid, gid } = config.process.user;
    mountVolumes(rootfs, podSpec, container, namespace, uid, gid);

    // The service-account token a kubelet projects, and the cluster's CA.
    const serviceAccount = podSpec.serviceAccountName ?? "default";
    const token = kubectl(["create", "token", serviceAccount, "-n", namespace, "--duration=1h"]).trim();
    const kubeconfig = JSON.parse(
        kubectl(["config", "view", "--raw", "-o", "json"], { kubeconfig: realEnv("REAL_KUBECONFIG") }),
    ) as KubeObject;
    const cluster = kubeconfig.clusters[0].cluster;
    writeFile(rootfs, `${SERVICE_ACCOUNT_DIR}/token`, token, uid, gid);
    writeFile(rootfs, `${SERVICE_ACCOUNT_DIR}/ca.crt`, Buffer.from(cluster["certificate-authority-data"], "base64"), uid, gid);
    writeFile(rootfs, `${SERVICE_ACCOUNT_DIR}/namespace`, namespace, uid, gid);

    const relay = await apiRelay(new URL(cluster.server));
    const env = {
        ...containerEnv(config.process.env, container, podName, namespace),
        KUBERNETES_SERVICE_HOST: NETWORK.hostIp,
        KUBERNETES_SERVICE_PORT: String(relay.port),
    };
    // chroot starts in "/": a script path relative to the image's working directory is made absolute.
    const [command, ...args] = config.process.args.map((arg, i) =>
        i > 0 && !arg.startsWith("/") && !arg.startsWith("-") ? path.posix.join(config.process.cwd, arg) : arg,
    );
    const child = spawn("ip", ["netns", "exec", NETWORK.namespace, "chroot", `--userspec=${uid}:${gid}`, rootfs, command, ...args], {
        env,
        stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    return {
        process: child,
        output: () => output,
        syncVolumes: () => mountVolumes(rootfs, podSpec, container, namespace, uid, gid),
        stop: async () => {
            await terminate(child);
            await relay.close();
        },
    };
}

/**
 * Starts a long-running helper process (a backend, a keeper) and resolves once its stdout says
 * `ready`; rejects, with what it wrote, if it exits first. `output()` is everything it wrote since.
 */
export async function startUntilReady(
    what: string,
    command: string,
    args: readonly string[],
    options: { env: NodeJS.ProcessEnv },
    ready: string,
): Promise<{ child: ChildProcess; output: () => string }> {
    const child = spawn(command, args, { env: options.env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    child.stderr?.on("data", (d: Buffer) => (output += d.toString("utf8")));
    await new Promise<void>((resolve, reject) => {
        const check = () => (output.includes(ready) ? resolve() : undefined);
        child.stdout?.on("data", check);
        child.once("exit", (code) => reject(new Error(`${what} exited with ${code}:\n${output}`)));
    });
    return { child, output: () => output };
}

/** SIGTERM to a child this test started, awaited (nothing when it has already exited). */
export async function terminate(child: ChildProcess): Promise<void> {
    if (child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
    }
}

function labelSelector(labels: Record<string, string>): string {
    return Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(",");
}
