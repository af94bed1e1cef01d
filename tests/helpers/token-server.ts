/**
 * A token service for the distribution server's `auth.token` mode, as the distribution spec
 * describes it: GET <realm>?service=&scope=... with Basic credentials answers a JWT (RS256,
 * signed by a key whose self-signed certificate the registry trusts) granting the requested
 * actions. Records what clients asked for.
 */
import { execFileSync } from "node:child_process";
import { createPrivateKey, sign, X509Certificate } from "node:crypto";
import { readFileSync } from "node:fs";
import { createServer, Server } from "node:http";
import { AddressInfo } from "node:net";
import * as path from "node:path";

export interface TokenServer {
    realm: string;
    service: string;
    issuer: string;
    /** PEM certificate the registry verifies tokens with. */
    rootCertBundle: string;
    /** Each token request: its scopes and whether it carried valid credentials. */
    requests: Array<{ scopes: string[]; authenticated: boolean }>;
    close(): Promise<void>;
}

const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url");

export async function startTokenServer(directory: string, user: { username: string; password: string }): Promise<TokenServer> {
    const keyFile = path.join(directory, "token-key.pem");
    const certFile = path.join(directory, "token-cert.pem");
    execFileSync(
        "openssl",
        [
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            keyFile,
            "-out",
            certFile,
            "-subj",
            "/CN=test-token-signer",
            "-days",
            "2",
        ],
        { stdio: "ignore" },
    );
    const key = createPrivateKey(readFileSync(keyFile));
    const certificate = new X509Certificate(readFileSync(certFile));
    const service = "test-registry";
    const issuer = "test-token-issuer";
    const requests: TokenServer["requests"] = [];

    const server: Server = createServer((req, res) => {
        const url = new URL(req.url ?? "/", "http://token");
        const scopes = url.searchParams.getAll("scope");
        const expected = `Basic ${Buffer.from(`${user.username}:${user.password}`).toString("base64")}`;
        const authenticated = req.headers.authorization === expected;
        requests.push({ scopes, authenticated });
        if (!authenticated) {
            res.writeHead(401, { "Content-Type": "application/json" });
            res.end(JSON.stringify({ details: "incorrect username or password" }));
            return;
        }
        const now = Math.floor(Date.now() / 1000);
        const access = scopes.map((scope) => {
            const [type, ...rest] = scope.split(":");
            const actions = rest.pop() as string;
            return { type, name: rest.join(":"), actions: actions.split(",") };
        });
        const header = { typ: "JWT", alg: "RS256", x5c: [certificate.raw.toString("base64")] };
        const claims = {
            iss: issuer,
            sub: user.username,
            aud: service,
            exp: now + 300,
            nbf: now - 10,
            iat: now,
            jti: `${now}-${requests.length}`,
            access,
        };
        const signingInput = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`;
        const token = `${signingInput}.${base64url(sign("sha256", Buffer.from(signingInput), key))}`;
        res.writeHead(200, { "Content-Type": "application/json" });
        res.end(JSON.stringify({ token, access_token: token, expires_in: 300 }));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;
    return {
        realm: `http://127.0.0.1:${port}/token`,
        service,
        issuer,
        rootCertBundle: certFile,
        requests,
        close: () => new Promise((resolve) => server.close(() => resolve())),
    };
}
