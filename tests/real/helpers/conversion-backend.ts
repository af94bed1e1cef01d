/**
 * A CRD conversion backend standing in for an operator's webhook pod. The real tier runs no
 * operator images (the operator bundles name images that are not in its registry, and kwok runs
 * no containers), but the API server must really call a conversion webhook at the operator's
 * Service, verify its certificate with the caBundle the stack wrote, and use what it answers. So
 * this small Node server, serving the stack's own certificate for that Service, runs inside the
 * cluster's network namespace, where every pod IP kwok hands out is local (scripts/real/cluster.ts):
 * the API server resolves the Service's endpoints to the pod IPs (aggregator routing) and reaches it.
 *
 * It converts the sample widget CRD: v1alpha1 `spec.size` is v1 `spec.replicas` (any other CRD only
 * changes apiVersion), and answers an aggregated API's discovery, so an APIService it backs is Available.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { NETWORK } from "../../../scripts/real/cluster";
import { startUntilReady, terminate } from "./pod-runtime";

const SERVER = `
const https = require("node:https");
const fs = require("node:fs");
function convert(object, desired) {
    const spec = { ...(object.spec || {}) };
    if (desired.endsWith("/v1") && "size" in spec) { spec.replicas = spec.size; delete spec.size; }
    if (desired.endsWith("/v1alpha1") && "replicas" in spec) { spec.size = spec.replicas; delete spec.replicas; }
    return { ...object, apiVersion: desired, spec };
}
const server = https.createServer({ cert: fs.readFileSync(process.env.TLS_CRT), key: fs.readFileSync(process.env.TLS_KEY) }, (req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
        if (req.url === "/readyz") { res.end("ok"); return; }
        if (req.method === "GET" && req.url.startsWith("/apis/")) {
            // An aggregated API's discovery, which the aggregator's availability check reads (kube-aggregator
            // pkg/controllers/status/remote: GET /apis/<group>/<version>, 2xx means Available).
            fs.appendFileSync(process.env.LOG, "discovery " + req.url + "\\n");
            res.setHeader("Content-Type", "application/json");
            res.end(JSON.stringify({ kind: "APIResourceList", apiVersion: "v1", groupVersion: req.url.slice("/apis/".length), resources: [] }));
            return;
        }
        // Anything else the aggregator asks an API server for (its OpenAPI documents) is not served here.
        if (req.method !== "POST") { res.statusCode = 404; res.end(); return; }
        const review = JSON.parse(body);
        const request = review.request;
        fs.appendFileSync(process.env.LOG, "convert " + request.objects.length + " to " + request.desiredAPIVersion + "\\n");
        res.setHeader("Content-Type", "application/json");
        res.end(JSON.stringify({
            apiVersion: review.apiVersion, kind: "ConversionReview",
            response: { uid: request.uid, result: { status: "Success" }, convertedObjects: request.objects.map((o) => convert(o, request.desiredAPIVersion)) },
        }));
    });
});
server.listen(Number(process.env.PORT), "0.0.0.0", () => console.log("listening"));
process.on("SIGTERM", () => server.close(() => process.exit(0)));
`;

export interface ConversionBackend {
    /** How many ConversionReviews it answered (from a file: the test blocks its own event loop in kubectl while the API server calls). */
    conversions(): number;
    /** How many discovery GETs (the aggregator's availability checks) it answered. */
    discoveries(): number;
    output(): string;
    stop(): Promise<void>;
}

/** Starts the backend with `tls.crt`/`tls.key` (the Service's serving Secret's data, base64) on `port` in the cluster's network namespace. */
export async function startConversionBackend(secretData: Record<string, string>, port: number, dir: string): Promise<ConversionBackend> {
    fs.mkdirSync(dir, { recursive: true });
    const crt = path.join(dir, "tls.crt");
    const key = path.join(dir, "tls.key");
    const log = path.join(dir, "conversions.log");
    fs.writeFileSync(log, "");
    fs.writeFileSync(crt, Buffer.from(secretData["tls.crt"], "base64"));
    fs.writeFileSync(key, Buffer.from(secretData["tls.key"], "base64"), { mode: 0o600 });
    const { child, output } = await startUntilReady(
        "the conversion backend",
        "ip",
        ["netns", "exec", NETWORK.namespace, process.execPath, "-e", SERVER],
        { env: { TLS_CRT: crt, TLS_KEY: key, PORT: String(port), LOG: log, PATH: process.env.PATH } },
        "listening",
    );
    const logged = (prefix: string) =>
        fs.existsSync(log)
            ? fs
                  .readFileSync(log, "utf8")
                  .split("\n")
                  .filter((line) => line.startsWith(prefix)).length
            : 0;
    return {
        conversions: () => logged("convert "),
        discoveries: () => logged("discovery "),
        output,
        stop: async () => {
            await terminate(child);
            fs.rmSync(dir, { recursive: true, force: true });
        },
    };
}
