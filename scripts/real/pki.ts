/**
 * The hermetic cluster's certificates, made with openssl at every start (nothing is reused, no
 * key outlives its cluster): a cluster CA, the API server's serving certificate, an admin client
 * (O=system:masters) the controllers and tests share, a service-account key pair, and the
 * front-proxy CA with its client certificate (aggregated APIs trust requests by it).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export interface ClusterPki {
    readonly dir: string;
    readonly caCert: string;
    readonly caKey: string;
    readonly serverCert: string;
    readonly serverKey: string;
    readonly adminCert: string;
    readonly adminKey: string;
    readonly serviceAccountKey: string;
    readonly serviceAccountPub: string;
    readonly frontProxyCaCert: string;
    readonly frontProxyClientCert: string;
    readonly frontProxyClientKey: string;
}

function openssl(dir: string, args: string[]): void {
    const result = spawnSync("openssl", args, { cwd: dir, encoding: "utf8" });
    if (result.error) {
        throw new Error("real:cluster: openssl is not installed: apt-get install -y openssl");
    }
    if (result.status !== 0) {
        throw new Error(`real:cluster: openssl ${args[0]} failed: ${result.stderr.trim()}`);
    }
}

function key(dir: string, name: string): string {
    openssl(dir, ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", name]);
    return path.join(dir, name);
}

/** A self-signed CA (EC P-256, two days) as `<name>.crt` and `<name>.key` under `dir`. */
export function makeCa(dir: string, name: string, subject: string): { cert: string; key: string } {
    const k = key(dir, `${name}.key`);
    openssl(dir, [
        "req",
        "-x509",
        "-new",
        "-key",
        k,
        "-subj",
        subject,
        "-days",
        "2",
        "-out",
        `${name}.crt`,
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    return { cert: path.join(dir, `${name}.crt`), key: k };
}

function leaf(
    dir: string,
    name: string,
    subject: string,
    signer: { cert: string; key: string },
    extensions: string,
): { cert: string; key: string } {
    const k = key(dir, `${name}.key`);
    openssl(dir, ["req", "-new", "-key", k, "-subj", subject, "-out", `${name}.csr`]);
    fs.writeFileSync(path.join(dir, `${name}.ext`), extensions);
    openssl(dir, [
        "x509",
        "-req",
        "-in",
        `${name}.csr`,
        "-CA",
        signer.cert,
        "-CAkey",
        signer.key,
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        `${name}.ext`,
        "-out",
        `${name}.crt`,
    ]);
    return { cert: path.join(dir, `${name}.crt`), key: k };
}

/** Makes every certificate the control plane needs; `serviceIp` is the first IP of the service range. */
export function makePki(dir: string, serviceIp: string, advertiseIp: string): ClusterPki {
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const clusterCa = makeCa(dir, "ca", "/CN=cluster-platform-real-ca");
    const names = ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"];
    const server = leaf(
        dir,
        "apiserver",
        "/CN=kube-apiserver",
        clusterCa,
        `basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\nsubjectAltName=${[
            ...names.map((n) => `DNS:${n}`),
            "IP:127.0.0.1",
            `IP:${serviceIp}`,
            `IP:${advertiseIp}`,
        ].join(",")}\n`,
    );
    const admin = leaf(
        dir,
        "admin",
        "/O=system:masters/CN=cluster-platform-real-admin",
        clusterCa,
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n",
    );
    const sa = key(dir, "sa.key");
    openssl(dir, ["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"]);
    const frontProxyCa = makeCa(dir, "front-proxy-ca", "/CN=cluster-platform-real-front-proxy-ca");
    const frontProxyClient = leaf(
        dir,
        "front-proxy-client",
        "/CN=front-proxy-client",
        frontProxyCa,
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=clientAuth\n",
    );
    for (const file of fs.readdirSync(dir)) {
        if (file.endsWith(".csr") || file.endsWith(".ext") || file.endsWith(".srl")) {
            fs.rmSync(path.join(dir, file));
        }
    }
    return {
        dir,
        caCert: clusterCa.cert,
        caKey: clusterCa.key,
        serverCert: server.cert,
        serverKey: server.key,
        adminCert: admin.cert,
        adminKey: admin.key,
        serviceAccountKey: sa,
        serviceAccountPub: path.join(dir, "sa.pub"),
        frontProxyCaCert: frontProxyCa.cert,
        frontProxyClientCert: frontProxyClient.cert,
        frontProxyClientKey: frontProxyClient.key,
    };
}
