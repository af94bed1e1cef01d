import fc from "fast-check";
import { clusterBundleShareName } from "../../webhook/api";
import { readServerConfig } from "../../webhook/config";
import { fingerprint, isDns1123Label, isDns1123Subdomain } from "../../components/shared/k8s-names";
import { shareVolumeName } from "../../webhook/mounts";

describe("share and volume names", () => {
    test("GIVEN a ClusterBundle reference WHEN its share is named THEN the name reads bundle, role and Secret, with a fingerprint", () => {
        expect(clusterBundleShareName("cluster", "entitlement", { namespace: "openshift-config", name: "etc-pki-entitlement" })).toBe(
            `cluster-entitlement-etc-pki-entitlement-${fingerprint("cluster\nentitlement\nopenshift-config\netc-pki-entitlement")}`,
        );
        expect(fingerprint("cluster\nentitlement\nopenshift-config\netc-pki-entitlement")).toMatch(/^[0-9a-f]{8}$/);
        expect(fingerprint("")).toBe("811c9dc5");
    });

    const subdomain = fc
        .stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?){0,3}$/)
        .filter((name) => name.length <= 253);
    const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/);

    test("GIVEN any valid bundle, namespace and object names WHEN shares and volumes are named THEN they are valid DNS-1123 names within limits", () => {
        fc.assert(
            fc.property(
                subdomain,
                fc.constantFrom("entitlement" as const, "yum-repo" as const),
                label,
                subdomain,
                (bundle, role, namespace, name) => {
                    const share = clusterBundleShareName(bundle, role, { namespace, name });
                    expect(isDns1123Subdomain(share)).toBe(true);
                    expect(isDns1123Label(shareVolumeName(share))).toBe(true);
                },
            ),
            { numRuns: 300 },
        );
    });

    test("GIVEN two references that differ only where dashes could blur them WHEN named THEN the names differ", () => {
        const a = clusterBundleShareName("x", "entitlement", { namespace: "a-b", name: "c" });
        const b = clusterBundleShareName("x", "entitlement", { namespace: "a", name: "b-c" });
        expect(a).not.toBe(b);
        const long = "n".repeat(250);
        expect(clusterBundleShareName(long, "entitlement", { namespace: "a", name: "s" })).not.toBe(
            clusterBundleShareName(long, "yum-repo", { namespace: "a", name: "s" }),
        );
    });
});

describe("server configuration from the environment", () => {
    test("GIVEN no variables WHEN read THEN the documented defaults apply (OLM's certificate path, in-cluster config)", () => {
        expect(readServerConfig({})).toEqual({
            ok: true,
            config: {
                host: "0.0.0.0",
                port: 9443,
                certFile: "/tmp/k8s-webhook-server/serving-certs/tls.crt",
                keyFile: "/tmp/k8s-webhook-server/serving-certs/tls.key",
                kubeconfig: undefined,
                logLevel: "info",
                maxBodyBytes: 3145728,
                keepAliveTimeoutMs: 120000,
                shutdownDelayMs: 5000,
                shutdownTimeoutMs: 15000,
                certPollMs: 10000,
                accessAllowedTtlMs: 60000,
                accessDeniedTtlMs: 10000,
                lookupTimeoutMs: 5000,
                readNamespaces: "all",
            },
        });
    });

    test("GIVEN WEBHOOK_READ_NAMESPACES WHEN read THEN a list is sorted and deduplicated, empty means none, and a non-namespace is reported", () => {
        const read = (value: string) => readServerConfig({ WEBHOOK_READ_NAMESPACES: value });
        expect(read("team-a, openshift-config,team-a")).toMatchObject({
            ok: true,
            config: { readNamespaces: ["openshift-config", "team-a"] },
        });
        expect(read("")).toMatchObject({ ok: true, config: { readNamespaces: [] } });
        expect(read(" * ")).toMatchObject({ ok: true, config: { readNamespaces: "all" } });
        expect(read("team-a,Team_B")).toEqual({
            ok: false,
            problems: [
                'WEBHOOK_READ_NAMESPACES="team-a,Team_B": "Team_B" not a namespace name; give `*` or comma-separated namespace names',
            ],
        });
    });

    test("GIVEN several invalid variables WHEN read THEN each is reported with its value and rule", () => {
        expect(
            readServerConfig({
                WEBHOOK_PORT: "70000",
                LOG_LEVEL: "loud",
                WEBHOOK_SHUTDOWN_DELAY_SECONDS: "soon",
                WEBHOOK_MAX_REQUEST_BYTES: "1.5",
                WEBHOOK_TLS_CERT_FILE: "",
            }),
        ).toEqual({
            ok: false,
            problems: [
                'LOG_LEVEL="loud": must be one of fatal, error, warn, info, debug, trace, silent',
                'WEBHOOK_PORT="70000": must be a number from 1 to 65535',
                "WEBHOOK_TLS_CERT_FILE: must not be empty",
                'WEBHOOK_MAX_REQUEST_BYTES="1.5": must be a number from 1024 to 67108864',
                'WEBHOOK_SHUTDOWN_DELAY_SECONDS="soon": must be a number from 0 to 300',
            ],
        });
    });
});
