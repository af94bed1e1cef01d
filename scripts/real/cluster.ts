/**
 * `npm run real:cluster -- start|stop`: a hermetic Kubernetes control plane on loopback.
 *
 * etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok, built from Go modules by
 * `npm run real:tools`, with certificates made at start (pki.ts). kwok plays one Ready node whose
 * pods become Running/Ready without a container runtime, so Deployments become Available.
 *
 * Backends the API server must call (admission and conversion webhooks, APIServices) need no
 * kube-proxy: with --enable-aggregator-routing the API server dials a Service's endpoint IPs
 * itself, for all three (kubernetes cmd/kube-apiserver/app/config.go passes one service resolver to
 * admission, apiextensions and the aggregator). Endpoints may not be loopback
 * (pkg/apis/core/validation ValidateNonSpecialIP), so the fake node's pod CIDR is routed into a
 * network namespace this script creates (veth pair, the namespace side holding the whole CIDR as
 * local addresses): a test runs a backend there and every pod IP kwok hands out reaches it.
 *
 * State (pids, ports, certificates, logs, etcd's data) lives in one directory; `stop` ends every
 * process it started, by pid, deletes the namespace and removes the directory.
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { type ClusterPki, makeCa, makePki } from "./pki";

/**
 * The addresses one cluster owns; all inside the namespace and veth pair it creates. `REAL_SLOT`
 * (0-9, default 0) picks a disjoint set, so several real clusters can run on one machine (one per
 * worktree while developing); CI runs one, in slot 0.
 */
export function networkFor(slot: number) {
    if (!Number.isInteger(slot) || slot < 0 || slot > 9) {
        throw new Error(`real:cluster: REAL_SLOT must be an integer from 0 to 9, got ${JSON.stringify(slot)}`);
    }
    const name = slot === 0 ? "cp-real" : `cp-real${slot}`;
    return {
        namespace: name,
        hostVeth: `${name}-h`,
        namespaceVeth: `${name}-n`,
        hostIp: `10.200.${slot}.1`,
        namespaceIp: `10.200.${slot}.2`,
        prefix: 30,
        podCidr: `10.244.${7 + slot}.0/24`,
        serviceCidr: "10.96.0.0/16",
        firstServiceIp: "10.96.0.1",
    } as const;
}

export const NETWORK = networkFor(process.env.REAL_SLOT === undefined || process.env.REAL_SLOT === "" ? 0 : Number(process.env.REAL_SLOT));

export const NODE_NAME = "kwok-node-0";

export interface ClusterState {
    readonly dir: string;
    /** The tools it runs (REAL_BIN), for what starts on demand (startCertManager). */
    readonly bin?: string;
    readonly kubeconfig: string;
    readonly server: string;
    readonly pids: Record<string, number>;
    /** Each started process's arguments, by name: what restartApiServer starts kube-apiserver with again. */
    readonly commands?: Record<string, string[]>;
    readonly network: boolean;
}

export function defaultClusterDir(env: NodeJS.ProcessEnv = process.env): string {
    return env.REAL_CLUSTER_DIR
        ? path.resolve(env.REAL_CLUSTER_DIR)
        : path.join(os.tmpdir(), `cluster-platform-real-cluster${NETWORK.namespace.slice("cp-real".length)}`);
}

function stateFile(dir: string): string {
    return path.join(dir, "state.json");
}

export function readState(dir: string): ClusterState | undefined {
    try {
        return JSON.parse(fs.readFileSync(stateFile(dir), "utf8")) as ClusterState;
    } catch {
        return undefined;
    }
}

async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const server = net.createServer();
        server.unref();
        server.on("error", reject);
        server.listen(0, "127.0.0.1", () => {
            const port = (server.address() as net.AddressInfo).port;
            server.close(() => resolve(port));
        });
    });
}

function sh(command: string, args: string[], what: string): string {
    const result = spawnSync(command, args, { encoding: "utf8" });
    if (result.error || result.status !== 0) {
        throw new Error(`real:cluster: ${what}: ${command} ${args.join(" ")}: ${result.error?.message ?? result.stderr.trim()}`);
    }
    return result.stdout;
}

function namespaceExists(): boolean {
    const result = spawnSync("ip", ["netns", "list"], { encoding: "utf8" });
    return result.status === 0 && result.stdout.split("\n").some((line) => line.split(" ")[0] === NETWORK.namespace);
}

/** The network namespace and the route of the pod CIDR into it. Needs root (CAP_NET_ADMIN). */
function createNetwork(): void {
    if (spawnSync("ip", ["-V"]).error) {
        throw new Error("real:cluster: ip is not installed: apt-get install -y iproute2");
    }
    if (namespaceExists()) {
        // Another cluster's, or a dead run's: deleting it would cut a running cluster off its backends.
        throw new Error(
            `real:cluster: the network namespace ${NETWORK.namespace} exists: another real cluster runs on this machine (npm run real:cluster -- stop), or a run died; then: ip route del ${NETWORK.podCidr}; ip netns del ${NETWORK.namespace}`,
        );
    }
    const n = NETWORK;
    sh("ip", ["netns", "add", n.namespace], "create the backends' network namespace (needs root)");
    sh("ip", ["link", "add", n.hostVeth, "type", "veth", "peer", "name", n.namespaceVeth], "create the veth pair");
    sh("ip", ["link", "set", n.namespaceVeth, "netns", n.namespace], "move the veth into the namespace");
    sh("ip", ["addr", "add", `${n.hostIp}/${n.prefix}`, "dev", n.hostVeth], "address the host side");
    sh("ip", ["link", "set", n.hostVeth, "up"], "bring the host side up");
    const inNs = (args: string[], what: string) => sh("ip", ["netns", "exec", n.namespace, "ip", ...args], what);
    inNs(["addr", "add", `${n.namespaceIp}/${n.prefix}`, "dev", n.namespaceVeth], "address the namespace side");
    inNs(["link", "set", n.namespaceVeth, "up"], "bring the namespace side up");
    inNs(["link", "set", "lo", "up"], "bring the namespace's loopback up");
    // Every pod IP is a local address inside the namespace, so a backend listening on 0.0.0.0 there
    // answers for whichever pod the API server picks.
    inNs(["route", "add", "local", n.podCidr, "dev", "lo"], "make the pod CIDR local to the namespace");
    sh("ip", ["route", "add", n.podCidr, "via", n.namespaceIp], "route the pod CIDR into the namespace");
}

function deleteNetwork(): void {
    spawnSync("ip", ["route", "del", NETWORK.podCidr]);
    spawnSync("ip", ["link", "del", NETWORK.hostVeth]);
    spawnSync("ip", ["netns", "del", NETWORK.namespace]);
}

function kubeconfigText(server: string, pki: ReturnType<typeof makePki>): string {
    const b64 = (file: string) => fs.readFileSync(file).toString("base64");
    return JSON.stringify(
        {
            apiVersion: "v1",
            kind: "Config",
            clusters: [{ name: "real", cluster: { server, "certificate-authority-data": b64(pki.caCert) } }],
            users: [{ name: "admin", user: { "client-certificate-data": b64(pki.adminCert), "client-key-data": b64(pki.adminKey) } }],
            contexts: [{ name: "real", context: { cluster: "real", user: "admin" } }],
            "current-context": "real",
        },
        null,
        2,
    );
}

function startProcess(dir: string, name: string, bin: string, args: string[], options: { netns?: boolean } = {}): ChildProcess {
    const log = fs.openSync(path.join(dir, "logs", `${name}.log`), "a");
    const [command, commandArgs] = options.netns ? ["ip", ["netns", "exec", NETWORK.namespace, bin, ...args]] : [bin, args];
    const child = spawn(command, commandArgs, { detached: true, stdio: ["ignore", log, log] });
    fs.closeSync(log);
    child.unref();
    if (child.pid === undefined) {
        throw new Error(`real:cluster: could not start ${name} (${bin})`);
    }
    return child;
}

/** GET on the API server with the admin certificate; resolves to the status code (0 if unreachable). */
function probe(server: string, pki: Pick<ClusterPki, "caCert" | "adminCert" | "adminKey">, urlPath: string): Promise<number> {
    return new Promise((resolve) => {
        const request = https.get(
            `${server}${urlPath}`,
            { ca: fs.readFileSync(pki.caCert), cert: fs.readFileSync(pki.adminCert), key: fs.readFileSync(pki.adminKey), timeout: 2000 },
            (response) => {
                response.resume();
                resolve(response.statusCode ?? 0);
            },
        );
        request.on("error", () => resolve(0));
        request.on("timeout", () => request.destroy());
    });
}

async function until(what: string, deadlineMs: number, check: () => Promise<boolean> | boolean, logs: string): Promise<void> {
    const deadline = Date.now() + deadlineMs;
    while (Date.now() < deadline) {
        if (await check()) {
            return;
        }
        await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`real:cluster: ${what} did not happen within ${deadlineMs / 1000} s (logs: ${logs})`);
}

/** What is read of a CRD to know whether it is served: its conditions (null until the apiextensions controller writes them). */
export interface CrdStatus {
    metadata?: { name?: string };
    status?: { conditions?: { type: string; status: string; message?: string }[] | null };
}

/**
 * Whether a CRD is served yet, from its conditions: `established`, `pending`, or its names refused
 * (`NamesAccepted` False), an answer rather than a pending state, with the API server's message.
 * Polled instead of `kubectl wait --for=condition=Established`, which fails at once while the
 * conditions are still null (`.status.conditions accessor error: <nil> is of the type <nil>,
 * expected []interface{}`, which failed a clean-clone `.ci/run` of structural-schema.real.ts).
 */
export function crdEstablishment(crd: CrdStatus): "established" | "pending" | { refused: string } {
    const condition = (type: string) => (crd.status?.conditions ?? []).find((c) => c.type === type);
    const names = condition("NamesAccepted");
    if (names?.status === "False") {
        return { refused: `${crd.metadata?.name} (${names.message})` };
    }
    return condition("Established")?.status === "True" ? "established" : "pending";
}

/** True once every CRD is established; throws naming the CRDs whose names were refused. */
export function allCrdsEstablished(crds: readonly CrdStatus[]): boolean {
    const states = crds.map(crdEstablishment);
    const refused = states.flatMap((state) => (typeof state === "object" ? [state.refused] : []));
    if (refused.length > 0) {
        throw new Error(`CRD names refused: ${refused.join(", ")}`);
    }
    return states.every((state) => state === "established");
}

function kubectl(bin: string, kubeconfig: string, args: string[], input?: string): string {
    // The CRDs the cluster starts with, read whole, pass spawnSync's 1 MB default.
    const result = spawnSync(path.join(bin, "kubectl"), ["--kubeconfig", kubeconfig, ...args], {
        encoding: "utf8",
        input,
        maxBuffer: 64 << 20,
    });
    if (result.status !== 0) {
        throw new Error(`real:cluster: kubectl ${args.join(" ")}: ${result.stderr.trim()}`);
    }
    return result.stdout;
}

/** Whether `pid` runs: a zombie (ended, not yet reaped by the process that started it, e.g. this one) does not. */
function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
    } catch {
        return false;
    }
    try {
        // "pid (comm) state ...": comm may hold spaces and parentheses, so read after the last ")".
        const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
    } catch {
        return false;
    }
}

export interface StartOptions {
    readonly bin: string;
    readonly dir?: string;
    readonly log?: (line: string) => void;
}

/** Starts the cluster; on any failure stops what it started and rethrows. */

/** audit.k8s.io/v1 Policy: metadata of PersistentVolumeClaim lists and watches, nothing else. */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: Metadata
    verbs: ["list", "watch"]
    resources: [{ group: "", resources: ["persistentvolumeclaims"] }]
  - level: None
`;

export async function startCluster(options: StartOptions): Promise<ClusterState> {
    const log = options.log ?? ((line: string) => console.log(line));
    const dir = options.dir ?? defaultClusterDir();
    const bin = options.bin;
    if (readState(dir)) {
        throw new Error(`real:cluster: a cluster is already running from ${dir}: stop it first (npm run real:cluster -- stop)`);
    }
    const started = Date.now();
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(path.join(dir, "logs"), { recursive: true });
    const pids: Record<string, number> = {};
    const commands: Record<string, string[]> = {};
    const saveState = (state: Omit<ClusterState, "pids" | "commands">) =>
        fs.writeFileSync(stateFile(dir), JSON.stringify({ ...state, pids, commands }, null, 2));
    let state: Omit<ClusterState, "pids" | "commands"> = { dir, bin, kubeconfig: path.join(dir, "kubeconfig"), server: "", network: false };
    saveState(state);
    try {
        createNetwork();
        state = { ...state, network: true };
        saveState(state);
        const pki = makePki(path.join(dir, "pki"), NETWORK.firstServiceIp, NETWORK.hostIp);
        const [etcdClient, etcdPeer, apiPort, kwokPort] = [await freePort(), await freePort(), await freePort(), await freePort()];
        const server = `https://127.0.0.1:${apiPort}`;
        state = { ...state, server };
        fs.writeFileSync(state.kubeconfig, kubeconfigText(server, pki), { mode: 0o600 });
        saveState(state);
        const logs = path.join(dir, "logs");
        const run = (name: string, args: string[]) => {
            commands[name] = args;
            pids[name] = startProcess(dir, name, path.join(bin, name), args).pid as number;
            saveState(state);
        };

        run("etcd", [
            "--name=default",
            `--data-dir=${path.join(dir, "etcd")}`,
            `--listen-client-urls=http://127.0.0.1:${etcdClient}`,
            `--advertise-client-urls=http://127.0.0.1:${etcdClient}`,
            `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
            `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
            `--initial-cluster=default=http://127.0.0.1:${etcdPeer}`,
            "--unsafe-no-fsync",
            "--log-level=warn",
        ]);
        // An audit log of the requests tests ask the API server about afterwards (who was refused
        // what), so a test reads the server's own record instead of a client's log: only lists and
        // watches of PersistentVolumeClaims (the reconcile await's informer, tests/real/reconcile.real.ts).
        const auditPolicy = path.join(dir, "audit-policy.yaml");
        fs.writeFileSync(auditPolicy, AUDIT_POLICY);
        run("kube-apiserver", [
            `--etcd-servers=http://127.0.0.1:${etcdClient}`,
            `--audit-policy-file=${auditPolicy}`,
            `--audit-log-path=${path.join(logs, "audit.log")}`,
            "--bind-address=127.0.0.1",
            `--secure-port=${apiPort}`,
            `--advertise-address=${NETWORK.hostIp}`,
            // The advertise address is a test veth, not a reachable host: no kubernetes Endpoints for it.
            "--endpoint-reconciler-type=none",
            `--tls-cert-file=${pki.serverCert}`,
            `--tls-private-key-file=${pki.serverKey}`,
            `--client-ca-file=${pki.caCert}`,
            `--service-account-issuer=https://kubernetes.default.svc.cluster.local`,
            `--service-account-key-file=${pki.serviceAccountPub}`,
            `--service-account-signing-key-file=${pki.serviceAccountKey}`,
            `--service-cluster-ip-range=${NETWORK.serviceCidr}`,
            "--authorization-mode=Node,RBAC",
            // The default admission plugins include MutatingAdmissionWebhook and ValidatingAdmissionWebhook.
            "--enable-aggregator-routing=true",
            "--allow-privileged=true",
            `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
            "--requestheader-allowed-names=front-proxy-client",
            "--requestheader-username-headers=X-Remote-User",
            "--requestheader-group-headers=X-Remote-Group",
            "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
            `--proxy-client-key-file=${pki.frontProxyClientKey}`,
        ]);
        await until("the API server's /readyz", 120_000, async () => (await probe(server, pki, "/readyz")) === 200, logs);
        const common = [
            `--kubeconfig=${state.kubeconfig}`,
            `--authentication-kubeconfig=${state.kubeconfig}`,
            `--authorization-kubeconfig=${state.kubeconfig}`,
            "--bind-address=127.0.0.1",
            "--leader-elect=false",
        ];
        run("kube-controller-manager", [
            ...common,
            "--secure-port=0",
            `--service-account-private-key-file=${pki.serviceAccountKey}`,
            `--root-ca-file=${pki.caCert}`,
            `--cluster-signing-cert-file=${pki.caCert}`,
            `--cluster-signing-key-file=${pki.caKey}`,
            "--use-service-account-credentials=true",
        ]);
        run("kube-scheduler", [...common, "--secure-port=0"]);

        kubectl(
            bin,
            state.kubeconfig,
            ["apply", "-f", "-"],
            JSON.stringify({
                apiVersion: "v1",
                kind: "Node",
                metadata: {
                    name: NODE_NAME,
                    annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
                    labels: {
                        "kubernetes.io/hostname": NODE_NAME,
                        "kubernetes.io/os": "linux",
                        "kubernetes.io/arch": "amd64",
                        type: "kwok",
                    },
                },
                spec: { podCIDR: NETWORK.podCidr, podCIDRs: [NETWORK.podCidr] },
            }),
        );
        const stages = fs.readdirSync(path.join(bin, "kwok-stages")).map((f) => `--config=${path.join(bin, "kwok-stages", f)}`);
        run("kwok", [
            `--kubeconfig=${state.kubeconfig}`,
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            `--server-address=127.0.0.1:${kwokPort}`,
            `--cidr=${NETWORK.podCidr}`,
            `--node-ip=${NETWORK.namespaceIp}`,
            // Keep the node's Lease: the heartbeat-with-lease stage refreshes the node's status only
            // every 10-20 minutes, so without a Lease the node lifecycle controller marks the node, and
            // with it every pod, not ready after its grace period (kwok pkg/kwok/controllers; 40 s is
            // what kwokctl passes, pkg/apis/config/v1alpha1 defaults).
            "--node-lease-duration-seconds=40",
            ...stages,
        ]);
        kubectl(bin, state.kubeconfig, ["wait", "--for=condition=Ready", `node/${NODE_NAME}`, "--timeout=60s"]);
        // cert-manager's API is always installed; its controllers run only for the tests that start them (startCertManager).
        for (const crds of ["crds/openshift", "crds/olm", "cert-manager-crds"]) {
            // Resolved: kubectl reads a symlink to a directory (REAL_BIN's entries are symlinks) as a file.
            kubectl(bin, state.kubeconfig, [
                "apply",
                "--server-side",
                "--field-manager=real-cluster",
                "-f",
                fs.realpathSync(path.join(bin, crds)),
            ]);
        }
        await until(
            "every CRD Established",
            60_000,
            () => allCrdsEstablished(JSON.parse(kubectl(bin, state.kubeconfig, ["get", "crd", "-o", "json"])).items as CrdStatus[]),
            logs,
        );
        // The default ServiceAccount comes from the controller-manager: tests create pods as soon as we return.
        await until(
            "the default ServiceAccount",
            60_000,
            () =>
                spawnSync(path.join(bin, "kubectl"), [
                    "--kubeconfig",
                    state.kubeconfig,
                    "get",
                    "serviceaccount",
                    "default",
                    "-n",
                    "default",
                ]).status === 0,
            logs,
        );
        log(`real:cluster ready in ${((Date.now() - started) / 1000).toFixed(1)} s (${dir})`);
        return { ...state, pids, commands };
    } catch (error) {
        await stopCluster(dir);
        throw error;
    }
}

/**
 * Ends `pids`: SIGTERM, SIGKILL to whichever is still running after `graceMs`, and resolves only
 * once none is running. A SIGKILLed process is not gone at once: a kube-apiserver of 500 MB whose
 * graceful shutdown outlasted the grace (a loaded CI machine, 2026-11-28) was still alive when the
 * next call started its replacement, which then refused to start, and every later file of that
 * shard found no API server.
 */
export async function endProcesses(pids: readonly number[], graceMs = 15_000): Promise<void> {
    for (const pid of pids) {
        try {
            process.kill(pid, "SIGTERM");
        } catch {
            // already gone
        }
    }
    const waitGone = async (ms: number) => {
        const deadline = Date.now() + ms;
        while (pids.some(alive) && Date.now() < deadline) {
            await new Promise((r) => setTimeout(r, 100));
        }
    };
    await waitGone(graceMs);
    for (const pid of pids.filter(alive)) {
        process.kill(pid, "SIGKILL");
    }
    await waitGone(30_000);
    const left = pids.filter(alive);
    if (left.length > 0) {
        throw new Error(`real:cluster: pids ${left.join(", ")} still run 30 s after SIGKILL`);
    }
}

/** Where cert-manager runs on the hermetic cluster, and its CA ClusterIssuer. */
export const CERT_MANAGER = {
    namespace: "cert-manager",
    issuer: "real-cluster-ca",
    processes: ["cert-manager-controller", "cert-manager-cainjector"],
} as const;

export interface CertManager {
    /** The CA ClusterIssuer's name. */
    readonly issuer: string;
    /** The CA's certificate (PEM): what cert-manager puts in each Secret's ca.crt and cainjector injects. */
    readonly caPem: string;
}

/**
 * Starts cert-manager's controller and cainjector (tools/cert-manager) on the running cluster, with
 * a CA ClusterIssuer whose CA is made now (its Secret in the cluster-resource namespace, as
 * cert-manager's CA issuer reads it), and waits until the issuer is Ready. On demand: only the
 * tests of cert-manager mode pay for it. Both run with the admin kubeconfig (the chart's RBAC is not
 * modelled) and are recorded in the cluster's state, so stopCluster ends them too.
 */
export async function startCertManager(dir: string = defaultClusterDir()): Promise<CertManager> {
    const state = readState(dir);
    if (!state?.bin) {
        throw new Error(`real:cluster: no cluster (with its tools) runs from ${dir}`);
    }
    const { bin, kubeconfig } = state;
    if (CERT_MANAGER.processes.some((name) => state.pids[name] !== undefined && alive(state.pids[name]))) {
        throw new Error("real:cluster: cert-manager already runs on this cluster (stopCertManager first)");
    }
    const pki = path.join(dir, "pki");
    const ca = makeCa(pki, "cert-manager-ca", `/CN=${CERT_MANAGER.issuer}`);
    const caPem = fs.readFileSync(ca.cert, "utf8");
    const b64 = (file: string) => fs.readFileSync(file).toString("base64");
    kubectl(
        bin,
        kubeconfig,
        ["apply", "--server-side", "--field-manager=real-cluster", "-f", "-"],
        JSON.stringify({
            apiVersion: "v1",
            kind: "List",
            items: [
                { apiVersion: "v1", kind: "Namespace", metadata: { name: CERT_MANAGER.namespace } },
                {
                    apiVersion: "v1",
                    kind: "Secret",
                    metadata: { name: CERT_MANAGER.issuer, namespace: CERT_MANAGER.namespace },
                    type: "kubernetes.io/tls",
                    data: { "tls.crt": b64(ca.cert), "tls.key": b64(ca.key) },
                },
                {
                    apiVersion: "cert-manager.io/v1",
                    kind: "ClusterIssuer",
                    metadata: { name: CERT_MANAGER.issuer },
                    spec: { ca: { secretName: CERT_MANAGER.issuer } },
                },
            ],
        }),
    );
    const binary = path.join(bin, "cert-manager");
    const pids = { ...state.pids };
    pids[CERT_MANAGER.processes[0]] = startProcess(dir, CERT_MANAGER.processes[0], binary, [
        "controller",
        `--kubeconfig=${kubeconfig}`,
        `--cluster-resource-namespace=${CERT_MANAGER.namespace}`,
    ]).pid as number;
    pids[CERT_MANAGER.processes[1]] = startProcess(dir, CERT_MANAGER.processes[1], binary, ["cainjector", `--kubeconfig=${kubeconfig}`])
        .pid as number;
    fs.writeFileSync(stateFile(dir), JSON.stringify({ ...state, pids }, null, 2));
    try {
        kubectl(bin, kubeconfig, ["wait", "--for=condition=Ready", `clusterissuer/${CERT_MANAGER.issuer}`, "--timeout=120s"]);
    } catch (error) {
        await stopCertManager(dir);
        throw new Error(`${(error as Error).message} (logs: ${path.join(dir, "logs")})`);
    }
    return { issuer: CERT_MANAGER.issuer, caPem };
}

/** Ends cert-manager's processes (by the pids startCertManager recorded) and deletes its issuer and namespace. */
export async function stopCertManager(dir: string = defaultClusterDir()): Promise<void> {
    const state = readState(dir);
    if (!state?.bin) {
        return;
    }
    await endProcesses(CERT_MANAGER.processes.map((name) => state.pids[name]).filter((pid) => pid !== undefined));
    const pids = Object.fromEntries(
        Object.entries(state.pids).filter(([name]) => !(CERT_MANAGER.processes as readonly string[]).includes(name)),
    );
    fs.writeFileSync(stateFile(dir), JSON.stringify({ ...state, pids }, null, 2));
    kubectl(state.bin, state.kubeconfig, ["delete", "clusterissuer", CERT_MANAGER.issuer, "--ignore-not-found"]);
    kubectl(state.bin, state.kubeconfig, ["delete", "namespace", CERT_MANAGER.namespace, "--ignore-not-found", "--wait=false"]);
}

/**
 * Stops only the cluster's kube-apiserver (SIGTERM, SIGKILL after 15 s), as an API server restart
 * does to a running update: etcd, the controllers and kwok keep running. Hermetic clusters only.
 */
export async function stopApiServer(dir: string = defaultClusterDir()): Promise<void> {
    const state = readState(dir);
    const pid = state?.pids["kube-apiserver"];
    if (pid === undefined || !state?.commands?.["kube-apiserver"]) {
        throw new Error(`real:cluster: no kube-apiserver started by this script runs from ${dir}`);
    }
    await endProcesses([pid]);
}

/**
 * Starts kube-apiserver again with the arguments it first ran with (same port, certificates and
 * etcd, so clients and their kubeconfig work unchanged), records its pid and waits for /readyz.
 */
export async function startApiServer(dir: string = defaultClusterDir()): Promise<void> {
    const state = readState(dir);
    const args = state?.commands?.["kube-apiserver"];
    if (!state?.bin || !args) {
        throw new Error(`real:cluster: no kube-apiserver started by this script runs from ${dir}`);
    }
    if (alive(state.pids["kube-apiserver"])) {
        throw new Error("real:cluster: kube-apiserver is still running (stopApiServer first)");
    }
    const pid = startProcess(dir, "kube-apiserver", path.join(state.bin, "kube-apiserver"), args).pid as number;
    fs.writeFileSync(stateFile(dir), JSON.stringify({ ...state, pids: { ...state.pids, "kube-apiserver": pid } }, null, 2));
    // makePki's file names: the admin client probes, as at start.
    const pkiDir = path.join(dir, "pki");
    const pki = {
        caCert: path.join(pkiDir, "ca.crt"),
        adminCert: path.join(pkiDir, "admin.crt"),
        adminKey: path.join(pkiDir, "admin.key"),
    };
    await until(
        "the restarted API server's /readyz",
        120_000,
        async () => (await probe(state.server, pki, "/readyz")) === 200,
        path.join(dir, "logs"),
    );
}

/**
 * The cluster's processes (by the state's pids) that are no longer running, each with the end of
 * its log: a control-plane process that died mid-run fails every later test with "connection
 * refused", and its log is gone once stopCluster deletes the directory.
 */
export function endedProcesses(dir: string = defaultClusterDir(), lines = 40): { name: string; logTail: string }[] {
    const state = readState(dir);
    return Object.entries(state?.pids ?? {})
        .filter(([, pid]) => !alive(pid))
        .map(([name]) => {
            const log = path.join(dir, "logs", `${name}.log`);
            const text = fs.existsSync(log) ? fs.readFileSync(log, "utf8") : "(no log)";
            return { name, logTail: text.trimEnd().split("\n").slice(-lines).join("\n") };
        });
}

/** Ends every process the cluster started (TERM, then KILL after 15 s), deletes its namespace and its directory. */
export async function stopCluster(dir: string = defaultClusterDir()): Promise<boolean> {
    const state = readState(dir);
    if (!state) {
        return false;
    }
    await endProcesses(Object.values(state.pids ?? {}).reverse());
    if (state.network) {
        deleteNetwork();
    }
    fs.rmSync(dir, { recursive: true, force: true });
    return true;
}

async function main(argv: string[]): Promise<void> {
    const [command] = argv;
    const dir = defaultClusterDir();
    if (command === "start") {
        const bin = process.env.REAL_BIN || (await (await import("./tools")).ensureTools());
        const state = await startCluster({ bin, dir });
        console.log(`KUBECONFIG=${state.kubeconfig}`);
    } else if (command === "stop") {
        console.log((await stopCluster(dir)) ? `real:cluster stopped (${dir})` : `real:cluster: nothing running from ${dir}`);
    } else {
        throw new Error("usage: npm run real:cluster -- start|stop   (REAL_CLUSTER_DIR sets the state directory, REAL_BIN the tools)");
    }
}

if (require.main === module) {
    main(process.argv.slice(2)).catch((error: Error) => {
        console.error(error.message);
        process.exit(1);
    });
}
