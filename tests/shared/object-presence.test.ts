/**
 * The metadata-only existence check against a real HTTPS server standing in for the API server:
 * what the request asks for (path, Accept, credentials, context), and that only the status is used.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { stringify } from "yaml";
import { apiPath, liveMetadataLookup, PARTIAL_OBJECT_METADATA_ACCEPT } from "../../components/shared/object-presence";
import type { ObjectRef } from "../../components/shared/object-refs";
import { selfSignedCertificate } from "../helpers/tls-signer";

/** kubeContext connections read the default kubeconfig; the project directory is not used. */
const ROOT_DIRECTORY = "/";

interface Seen {
    path: string;
    accept?: string;
    authorization?: string;
}

const SECRET: ObjectRef = {
    apiVersion: "v1",
    kind: "Secret",
    plural: "secrets",
    namespace: "openshift-config",
    name: "etc-pki-entitlement",
};
const OLM_CONFIG: ObjectRef = { apiVersion: "operators.coreos.com/v1", kind: "OLMConfig", plural: "olmconfigs", name: "cluster" };
const MISSING: ObjectRef = { apiVersion: "v1", kind: "Namespace", plural: "namespaces", name: "team-b" };
const FORBIDDEN: ObjectRef = { apiVersion: "v1", kind: "ConfigMap", plural: "configmaps", namespace: "locked", name: "x" };

describe("asking the API server whether objects exist, by metadata only", () => {
    const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "presence-"));
    const seen: Seen[] = [];
    let servers: https.Server[] = [];
    let previousKubeconfig: string | undefined;

    beforeAll(async () => {
        const { keyPath: key, certPath: cert } = await selfSignedCertificate(tmp, "server", "127.0.0.1", ["127.0.0.1"]);
        const listen = (name: string) =>
            new Promise<https.Server>((resolve) => {
                const server = https.createServer({ key: fs.readFileSync(key), cert: fs.readFileSync(cert) }, (request, response) => {
                    seen.push({
                        path: `${name}:${request.url}`,
                        accept: request.headers.accept,
                        authorization: request.headers.authorization,
                    });
                    const present = [apiPath(SECRET), apiPath(OLM_CONFIG)].includes(request.url ?? "");
                    const status = request.url === apiPath(FORBIDDEN) ? 403 : present ? 200 : 404;
                    response.writeHead(status, { "content-type": "application/json" });
                    // What a real API server would send back for a Secret's metadata: a copy of its data may sit in an annotation.
                    response.end(
                        JSON.stringify({
                            kind: "PartialObjectMetadata",
                            metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": "ENTITLEMENT-DATA" } },
                        }),
                    );
                });
                server.listen(0, "127.0.0.1", () => resolve(server));
            });
        servers = [await listen("first"), await listen("second")];
        const ca = fs.readFileSync(cert).toString("base64");
        const cluster = (name: string, server: https.Server) => ({
            name,
            cluster: { server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, "certificate-authority-data": ca },
        });
        const kubeconfig = {
            apiVersion: "v1",
            kind: "Config",
            clusters: [cluster("first", servers[0]), cluster("second", servers[1])],
            users: [
                { name: "first", user: { token: "first-token" } },
                { name: "second", user: { token: "second-token" } },
            ],
            contexts: [
                { name: "first", context: { cluster: "first", user: "first" } },
                { name: "second", context: { cluster: "second", user: "second" } },
            ],
            "current-context": "first",
        };
        fs.writeFileSync(path.join(tmp, "kubeconfig"), stringify(kubeconfig));
        previousKubeconfig = process.env.KUBECONFIG;
        process.env.KUBECONFIG = path.join(tmp, "kubeconfig");
    });

    afterAll(async () => {
        if (previousKubeconfig === undefined) {
            delete process.env.KUBECONFIG;
        } else {
            process.env.KUBECONFIG = previousKubeconfig;
        }
        await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
        fs.rmSync(tmp, { recursive: true, force: true });
    });

    beforeEach(() => {
        seen.length = 0;
    });

    test("GIVEN a Secret, a cluster-scoped custom resource and a missing namespace WHEN looked up THEN each answer comes from the status of a metadata-only GET, with the kubeconfig's credentials", async () => {
        const answers = await liveMetadataLookup({ kind: "kubeContext", context: "first" }, ROOT_DIRECTORY)([SECRET, OLM_CONFIG, MISSING]);
        expect(answers).toEqual(["present", "present", "absent"]);
        expect(seen.sort((a, b) => a.path.localeCompare(b.path))).toEqual([
            {
                path: "first:/api/v1/namespaces/openshift-config/secrets/etc-pki-entitlement",
                accept: PARTIAL_OBJECT_METADATA_ACCEPT,
                authorization: "Bearer first-token",
            },
            { path: "first:/api/v1/namespaces/team-b", accept: PARTIAL_OBJECT_METADATA_ACCEPT, authorization: "Bearer first-token" },
            {
                path: "first:/apis/operators.coreos.com/v1/olmconfigs/cluster",
                accept: PARTIAL_OBJECT_METADATA_ACCEPT,
                authorization: "Bearer first-token",
            },
        ]);
        expect(JSON.stringify(answers)).not.toContain("ENTITLEMENT-DATA");
    });

    test("GIVEN cluster.kubeContext WHEN looked up THEN the request goes to that context's server, as the provider's would", async () => {
        await liveMetadataLookup({ kind: "kubeContext", context: "second" }, ROOT_DIRECTORY)([SECRET]);
        expect(seen.map((s) => [s.path.split(":")[0], s.authorization])).toEqual([["second", "Bearer second-token"]]);
    });

    test("GIVEN cluster.kubeconfig (a path relative to the project) WHEN looked up THEN that file's current context is asked, whatever KUBECONFIG says", async () => {
        const elsewhere = path.join(tmp, "elsewhere");
        fs.mkdirSync(elsewhere, { recursive: true });
        const ownFile = fs.readFileSync(path.join(tmp, "kubeconfig"), "utf8").replace("current-context: first", "current-context: second");
        fs.writeFileSync(path.join(elsewhere, "cluster.kubeconfig"), ownFile);
        await liveMetadataLookup({ kind: "kubeconfig", path: "elsewhere/cluster.kubeconfig" }, tmp)([SECRET]);
        expect(seen.map((s) => [s.path.split(":")[0], s.authorization])).toEqual([["second", "Bearer second-token"]]);
    });

    test("GIVEN an answer that is neither 200 nor 404 WHEN looked up THEN it fails naming the object, the status and the request, never guessing", async () => {
        await expect(liveMetadataLookup({ kind: "kubeContext", context: "first" }, ROOT_DIRECTORY)([FORBIDDEN])).rejects.toThrow(
            'cannot check that ConfigMap "locked/x" exists: the API server answered HTTP 403 to GET /api/v1/namespaces/locked/configmaps/x (metadata only)',
        );
    });
});
