/**
 * Certificates generated in the test (ECDSA P-256 via WebCrypto and @peculiar/x509): a CA and
 * serving pairs it signs, written the way kubelet projects a Secret (files that are symlinks into
 * a `..data` directory swapped atomically on update).
 */
import "reflect-metadata";
import { webcrypto } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as x509 from "@peculiar/x509";
import { DAY } from "../../helpers/clock";

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);
type CryptoKeyPair = webcrypto.CryptoKeyPair;
const ALGORITHM = { name: "ECDSA", namedCurve: "P-256", hash: "SHA-256" };

export interface Authority {
    cert: string;
    keys: CryptoKeyPair;
    name: string;
}

export interface ServingPair {
    cert: string;
    key: string;
    serialNumber: string;
}

export async function createAuthority(name = "test-ca"): Promise<Authority> {
    const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: "01",
        name: `CN=${name}`,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 30 * DAY),
        keys,
        signingAlgorithm: ALGORITHM,
        extensions: [
            new x509.BasicConstraintsExtension(true, undefined, true),
            new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign, true),
        ],
    });
    return { cert: cert.toString("pem"), keys, name };
}

export async function issueServingPair(
    authority: Authority,
    serialNumber: string,
    hosts = ["localhost", "127.0.0.1"],
): Promise<ServingPair> {
    const keys = (await webcrypto.subtle.generateKey(ALGORITHM, true, ["sign", "verify"])) as CryptoKeyPair;
    const cert = await x509.X509CertificateGenerator.create({
        serialNumber,
        subject: "CN=subscription-webhook",
        issuer: `CN=${authority.name}`,
        notBefore: new Date(Date.now() - DAY),
        notAfter: new Date(Date.now() + 7 * DAY),
        publicKey: keys.publicKey,
        signingKey: authority.keys.privateKey,
        signingAlgorithm: ALGORITHM,
        extensions: [
            new x509.SubjectAlternativeNameExtension(
                hosts.map((host) => (/^[0-9.]+$/.test(host) ? { type: "ip", value: host } : { type: "dns", value: host })),
            ),
            new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        ],
    });
    const pkcs8 = await webcrypto.subtle.exportKey("pkcs8", keys.privateKey);
    return { cert: cert.toString("pem"), key: x509.PemConverter.encode(pkcs8, "PRIVATE KEY"), serialNumber };
}

/** Writes the pair as kubelet does: tls.crt/tls.key → ..data/…, with ..data swapped by rename. */
export function projectPair(directory: string, pair: ServingPair, generation: number): void {
    fs.mkdirSync(directory, { recursive: true });
    const version = `..${generation}`;
    fs.mkdirSync(path.join(directory, version));
    fs.writeFileSync(path.join(directory, version, "tls.crt"), pair.cert);
    fs.writeFileSync(path.join(directory, version, "tls.key"), pair.key);
    fs.symlinkSync(version, path.join(directory, "..data_tmp"));
    fs.renameSync(path.join(directory, "..data_tmp"), path.join(directory, "..data"));
    for (const file of ["tls.crt", "tls.key"]) {
        if (!fs.existsSync(path.join(directory, file))) fs.symlinkSync(path.join("..data", file), path.join(directory, file));
    }
}
