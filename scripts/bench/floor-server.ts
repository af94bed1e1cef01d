/**
 * The benchmark's floors: the same Node HTTPS/TLS setup as the webhook (TLS >= 1.2, HTTP/1.1,
 * same keep-alive timeout, same certificate), which reads and parses the body and answers.
 * - constant floor (no RESPONSE_FILE): a ~100-byte allowed AdmissionReview;
 * - true floor (RESPONSE_FILE): the exact bytes the webhook returns for the benchmark's request,
 *   precomputed as the text before and after the uid, so each answer costs only the parse, the
 *   splice of the uid and the writing of those bytes: what any correct webhook must pay.
 * - realistic true floor (RESPONSE_MAP): for a varying stream, the webhook's answer for one pod of
 *   each class (namespace and what it asks for, `streamClass`), around the uid: each request is
 *   answered with the bytes of its class, so it costs the parse, a look-up and those bytes.
 * Env: PORT, CERT_FILE, KEY_FILE, RESPONSE_FILE (JSON [before, after]), RESPONSE_MAP (JSON {class: [before, after]}).
 */
import * as fs from "node:fs";
import * as https from "node:https";
import { type StreamRequest, streamClass } from "./stream-class";
import { answerAround } from "./true-floor";

const template = process.env.RESPONSE_FILE
    ? (JSON.parse(fs.readFileSync(process.env.RESPONSE_FILE, "utf8")) as [string, string])
    : undefined;

const templates = process.env.RESPONSE_MAP
    ? (JSON.parse(fs.readFileSync(process.env.RESPONSE_MAP, "utf8")) as Record<string, [string, string]>)
    : undefined;

function answer(uid: unknown, request?: StreamRequest): string {
    const chosen = templates?.[streamClass(request)] ?? template;
    if (chosen) return answerAround(chosen, uid);
    return JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid, allowed: true } });
}

const server = https.createServer(
    {
        cert: fs.readFileSync(String(process.env.CERT_FILE)),
        key: fs.readFileSync(String(process.env.KEY_FILE)),
        minVersion: "TLSv1.2",
        ALPNProtocols: ["http/1.1"],
    },
    (req, res) => {
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            let review: { request?: { uid?: string } & StreamRequest };
            try {
                review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
                res.writeHead(400).end();
                return;
            }
            const body = answer(review.request?.uid, review.request);
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
            res.end(body);
        });
    },
);
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("floor ready\n"));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
