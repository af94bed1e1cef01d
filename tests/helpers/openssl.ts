/**
 * A self-signed ECDSA P-256 certificate made with openssl(1) (a Debian tool the suites require
 * through system-tools.ts), for tests whose peers need real TLS: a stand-in server's certificate,
 * or a CA bundle to publish.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";

export interface SelfSigned {
    readonly keyPath: string;
    readonly certPath: string;
}

/** Writes `<name>.key` and `<name>.crt` under `dir`, for `commonName` (and `subjectAltName`, e.g. `IP:127.0.0.1`). */
export function selfSignedCertificate(dir: string, name: string, commonName: string, subjectAltName?: string): SelfSigned {
    const keyPath = path.join(dir, `${name}.key`);
    const certPath = path.join(dir, `${name}.crt`);
    const made = spawnSync(
        "openssl",
        [
            ...["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"],
            ...["-keyout", keyPath, "-out", certPath, "-days", "1", "-subj", `/CN=${commonName}`],
            ...(subjectAltName ? ["-addext", `subjectAltName=${subjectAltName}`] : []),
        ],
        { encoding: "utf8" },
    );
    if (made.status !== 0) {
        throw new Error(`openssl req -x509 failed (exit ${made.status}): ${made.stderr}`);
    }
    return { keyPath, certPath };
}
