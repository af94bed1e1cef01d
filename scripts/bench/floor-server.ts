/**
 * The benchmark's floor: the same Node HTTPS/TLS setup as the webhook (TLS >= 1.2, same
 * keep-alive timeout, same certificate), which reads and parses the body and answers a constant
 * allowed AdmissionReview. Env: PORT, CERT_FILE, KEY_FILE.
 */
import * as fs from "node:fs";
import * as https from "node:https";

const server = https.createServer(
    { cert: fs.readFileSync(String(process.env.CERT_FILE)), key: fs.readFileSync(String(process.env.KEY_FILE)), minVersion: "TLSv1.2" },
    (req, res) => {
        if (req.url === "/cpu") {
            const { user, system } = process.cpuUsage();
            res.end(String((user + system) / 1e6));
            return;
        }
        const chunks: Buffer[] = [];
        req.on("data", (chunk: Buffer) => chunks.push(chunk));
        req.on("end", () => {
            let review: { request?: { uid?: string } };
            try {
                review = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {
                res.writeHead(400).end();
                return;
            }
            const body = JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", response: { uid: review.request?.uid, allowed: true } });
            res.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) });
            res.end(body);
        });
    },
);
server.keepAliveTimeout = 120_000;
server.listen(Number(process.env.PORT), "127.0.0.1", () => process.stdout.write("floor ready\n"));
process.once("SIGTERM", () => server.close(() => process.exit(0)));
