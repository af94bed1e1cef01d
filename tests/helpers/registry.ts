/**
 * A real OCI registry for tests and benchmarks: Debian's `docker-registry` (the CNCF
 * distribution server) on 127.0.0.1 with a port it picks itself and a temporary storage
 * directory, optionally behind htpasswd (Basic) or token (Bearer) authorization.
 * Its access log tells what clients really did (which blobs were uploaded or mounted).
 */
import { ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";

export type RegistryAuth =
    { kind: "htpasswd"; file: string } | { kind: "token"; realm: string; service: string; issuer: string; rootCertBundle: string };

export interface LoggedRequest {
    method: string;
    /** Path and query as requested. */
    uri: string;
    status: number;
}

export interface LocalRegistry {
    /** `127.0.0.1:<port>`. */
    host: string;
    storage: string;
    /** Every request the registry answered so far, from its access log. */
    requests(): LoggedRequest[];
    /** Digests of blobs uploaded (completed PUTs) into `repository` so far. */
    uploadedBlobs(repository: string): string[];
    /** Digests of blobs mounted into `repository` from another repository so far. */
    mountedBlobs(repository: string): string[];
    stop(): Promise<void>;
}

const ACCESS_LINE = /"([A-Z]+) (\S+) HTTP\/1\.1" (\d{3}) /;

export async function startRegistry(auth?: RegistryAuth): Promise<LocalRegistry> {
    const directory = mkdtempSync(path.join(os.tmpdir(), "registry-"));
    const storage = path.join(directory, "storage");
    const config: Record<string, unknown> = {
        version: 0.1,
        log: { level: "info", formatter: "text", accesslog: { disabled: false } },
        storage: { filesystem: { rootdirectory: storage }, delete: { enabled: true } },
        http: { addr: "127.0.0.1:0", secret: "tests-only-upload-state-secret" },
    };
    if (auth?.kind === "htpasswd") {
        config.auth = { htpasswd: { realm: "test-registry", path: auth.file } };
    } else if (auth?.kind === "token") {
        config.auth = { token: { realm: auth.realm, service: auth.service, issuer: auth.issuer, rootcertbundle: auth.rootCertBundle } };
    }
    const configFile = path.join(directory, "config.yml");
    writeFileSync(configFile, stringify(config));

    const child: ChildProcess = spawn("docker-registry", ["serve", configFile], { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const onData = (chunk: Buffer) => {
        output += chunk.toString("utf8");
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    const host = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`docker-registry did not start:\n${output}`)), 20_000);
        const check = () => {
            const match = /listening on (127\.0\.0\.1:\d+)/.exec(output);
            if (match) {
                clearTimeout(timer);
                resolve(match[1]);
            }
        };
        child.stdout?.on("data", check);
        child.stderr?.on("data", check);
        child.once("exit", (code) => {
            clearTimeout(timer);
            reject(new Error(`docker-registry exited with ${code}:\n${output}`));
        });
    });

    const requests = (): LoggedRequest[] =>
        output
            .split("\n")
            .map((line) => ACCESS_LINE.exec(line))
            .filter((m): m is RegExpExecArray => m !== null)
            .map((m) => ({ method: m[1], uri: m[2], status: Number(m[3]) }));
    const digestParam = (uri: string, name: string) => new URL(uri, "http://registry").searchParams.get(name) ?? "";
    return {
        host,
        storage,
        requests,
        uploadedBlobs: (repository) =>
            requests()
                .filter((r) => r.method === "PUT" && r.status === 201 && r.uri.startsWith(`/v2/${repository}/blobs/uploads/`))
                .map((r) => digestParam(r.uri, "digest")),
        mountedBlobs: (repository) =>
            requests()
                .filter((r) => r.method === "POST" && r.status === 201 && r.uri.startsWith(`/v2/${repository}/blobs/uploads/?`))
                .map((r) => digestParam(r.uri, "mount")),
        async stop() {
            if (child.exitCode === null) {
                const exited = once(child, "exit");
                child.kill("SIGTERM");
                await exited;
            }
            rmSync(directory, { recursive: true, force: true });
        },
    };
}
