/**
 * `kubeConfigClass` (components/shared/kube-config-class.ts): client-node's `KubeConfig` loaded
 * without the generated API. The oracle is client-node itself: the same kubeconfigs applied by
 * the whole client's `KubeConfig`, in the same child process, after it.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { ROOT } from "../helpers/root";
import { tsxCommand } from "../helpers/tsx";

const b64 = (text: string): string => Buffer.from(text).toString("base64");
const PEM = (label: string, body: string): string => `-----BEGIN ${label}-----\n${b64(body)}\n-----END ${label}-----\n`;

/** One cluster, one user, one context (named `ctx`, current), in kubeconfig YAML's JSON form. */
function kubeconfig(user: Record<string, unknown>, cluster: Record<string, unknown> = {}): string {
    return JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "c", cluster: { server: "https://api.example.test:6443", ...cluster } }],
        users: [{ name: "u", user }],
        contexts: [
            { name: "other", context: { cluster: "c", user: "nobody" } },
            { name: "ctx", context: { cluster: "c", user: "u" } },
        ],
        "current-context": "ctx",
    });
}

const EXEC_CREDENTIAL = JSON.stringify({
    apiVersion: "client.authentication.k8s.io/v1",
    kind: "ExecCredential",
    status: { token: "token-from-exec-plugin" },
});

const KUBECONFIGS = [
    kubeconfig({ token: "static-token" }, { "certificate-authority-data": b64(PEM("CERTIFICATE", "cluster ca")) }),
    kubeconfig(
        { "client-certificate-data": b64(PEM("CERTIFICATE", "client")), "client-key-data": b64(PEM("PRIVATE KEY", "client key")) },
        { "insecure-skip-tls-verify": true },
    ),
    kubeconfig({
        exec: {
            apiVersion: "client.authentication.k8s.io/v1",
            command: process.execPath,
            args: ["-e", `process.stdout.write(${JSON.stringify(EXEC_CREDENTIAL)})`],
            interactiveMode: "Never",
        },
    }),
    kubeconfig({ username: "admin", password: "secret" }),
];

interface ChildReport {
    light: Array<{ headers: Record<string, string> } & Record<string, unknown>>;
    oracle: unknown[];
    afterLight: { generatedApi: number; clientModules: number };
    afterFull: { generatedApi: number; clientModules: number };
    sameClassTwice: boolean;
    sameClassAsFullClient: boolean;
    fullClientCoreV1Api: string;
    apiModuleCoreV1Api: string;
}

function runChild(): ChildReport {
    const [command, args] = tsxCommand(path.join(__dirname, "fixtures", "kube-config-load.ts"));
    const run = spawnSync(command, args, { cwd: ROOT, encoding: "utf8", input: JSON.stringify(KUBECONFIGS), timeout: 60_000 });
    expect({ status: run.status, stderr: run.stderr }).toEqual({ status: 0, stderr: "" });
    return JSON.parse(run.stdout) as ChildReport;
}

describe("client-node's KubeConfig without the generated API", () => {
    let report: ChildReport;
    beforeAll(() => {
        report = runChild();
    });

    it("GIVEN token, client-certificate, exec-plugin and basic-auth kubeconfigs WHEN each is applied to HTTPS options THEN the options are exactly those the whole client's KubeConfig gives", () => {
        expect(report.light).toEqual(report.oracle);
        expect(report.light.map((options) => options.headers.Authorization ?? options.auth)).toEqual([
            "Bearer static-token",
            undefined,
            "Bearer token-from-exec-plugin",
            "admin:secret",
        ]);
        expect(report.light[1]).toMatchObject({
            rejectUnauthorized: false,
            cert: PEM("CERTIFICATE", "client"),
            key: PEM("PRIVATE KEY", "client key"),
        });
        expect(report.light[0]).toMatchObject({ ca: PEM("CERTIFICATE", "cluster ca") });
        expect(report.light.map((options) => options.context)).toEqual(["ctx", "ctx", "ctx", "ctx"]);
    });

    it("GIVEN a plain Node.js process WHEN KubeConfig is loaded and used THEN none of the generated API's modules is loaded, where the whole client loads them", () => {
        expect(report.afterLight.generatedApi).toBe(0);
        expect(report.afterLight.clientModules).toBeLessThan(50);
        expect(report.afterFull.generatedApi).toBeGreaterThan(500);
    });

    it("GIVEN KubeConfig loaded first WHEN the whole client is loaded after it THEN it is the same class, and the client's API module is the real one", () => {
        expect(report.sameClassTwice).toBe(true);
        expect(report.sameClassAsFullClient).toBe(true);
        expect({ client: report.fullClientCoreV1Api, apiModule: report.apiModuleCoreV1Api }).toEqual({
            client: "function",
            apiModule: "function",
        });
    });
});
