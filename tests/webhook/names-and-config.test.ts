import fc from "fast-check";
import { clusterBundleShareName } from "../../webhook/api";
import { readServerConfig, readSourceSyncConfig } from "../../webhook/config";
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
                readScopes: "all",
                byNameTtlMs: 30000,
                byNameMaxObjects: 10000,
            },
        });
    });

    test("GIVEN WEBHOOK_READ_NAMESPACES WHEN read THEN a namespace means both kinds, /secrets or /configmaps one, empty means nowhere, and anything else is reported", () => {
        const read = (value: string) => readServerConfig({ WEBHOOK_READ_NAMESPACES: value });
        expect(read("team-a, subscription-sources/secrets,team-a,repos/configmaps")).toMatchObject({
            ok: true,
            config: {
                readScopes: { Secret: new Set(["team-a", "subscription-sources"]), ConfigMap: new Set(["team-a", "repos"]) },
            },
        });
        expect(read("")).toMatchObject({ ok: true, config: { readScopes: { Secret: new Set(), ConfigMap: new Set() } } });
        expect(read(" * ")).toMatchObject({ ok: true, config: { readScopes: "all" } });
        expect(read("team-a,Team_B,team-c/pods,team-d/secrets/x")).toEqual({
            ok: false,
            problems: [
                'WEBHOOK_READ_NAMESPACES="team-a,Team_B,team-c/pods,team-d/secrets/x": "Team_B", "team-c/pods", "team-d/secrets/x" not a namespace name, optionally followed by /secrets or /configmaps; give `*` or a comma-separated list',
            ],
        });
    });

    test("GIVEN WEBHOOK_SOURCE_NAMESPACE and the by-name settings WHEN read THEN they are taken, and bad ones reported", () => {
        expect(
            readServerConfig({
                WEBHOOK_SOURCE_NAMESPACE: "subscription-sources",
                WEBHOOK_BY_NAME_TTL_SECONDS: "12",
                WEBHOOK_BY_NAME_MAX_OBJECTS: "500",
            }),
        ).toMatchObject({ ok: true, config: { sourceNamespace: "subscription-sources", byNameTtlMs: 12000, byNameMaxObjects: 500 } });
        expect(readServerConfig({ WEBHOOK_SOURCE_NAMESPACE: "Sources", WEBHOOK_BY_NAME_MAX_OBJECTS: "5" })).toEqual({
            ok: false,
            problems: [
                'WEBHOOK_BY_NAME_MAX_OBJECTS="5": must be a number from 100 to 1000000',
                'WEBHOOK_SOURCE_NAMESPACE="Sources": not a namespace name',
            ],
        });
    });

    test("GIVEN the source sync's environment WHEN read THEN objects, namespace and intervals are taken, and every problem is reported at once", () => {
        const objects = [
            { kind: "Secret", namespace: "openshift-config-managed", name: "etc-pki-entitlement", shares: ["cluster-entitlement-x"] },
        ];
        expect(
            readSourceSyncConfig({ SOURCE_SYNC_NAMESPACE: "subscription-sources", SOURCE_SYNC_OBJECTS: JSON.stringify(objects) }),
        ).toEqual({
            ok: true,
            config: {
                sourceNamespace: "subscription-sources",
                objects,
                resyncMs: 300000,
                port: 8080,
                kubeconfig: undefined,
                logLevel: "info",
            },
        });
        expect(
            readSourceSyncConfig({
                SOURCE_SYNC_NAMESPACE: "openshift-config",
                SOURCE_SYNC_OBJECTS: JSON.stringify([
                    { kind: "Pod", namespace: "a", name: "b", shares: ["s"] },
                    { ...objects[0], shares: [] },
                ]),
                SOURCE_SYNC_RESYNC_SECONDS: "0",
                SOURCE_SYNC_PORT: "http",
            }),
        ).toEqual({
            ok: false,
            problems: [
                'SOURCE_SYNC_NAMESPACE="openshift-config": must be a namespace name, not a platform one (kube*, openshift*)',
                "SOURCE_SYNC_OBJECTS[0]: needs kind Secret or ConfigMap, a namespace name, an object name and a non-empty list of share names",
                "SOURCE_SYNC_OBJECTS[1]: needs kind Secret or ConfigMap, a namespace name, an object name and a non-empty list of share names",
                'SOURCE_SYNC_RESYNC_SECONDS="0": must be a number from 1 to 86400',
                'SOURCE_SYNC_PORT="http": must be a whole number from 1 to 65535',
            ],
        });
        expect(readSourceSyncConfig({ SOURCE_SYNC_NAMESPACE: "s", SOURCE_SYNC_OBJECTS: "{" })).toMatchObject({
            ok: false,
            problems: [expect.stringMatching(/^SOURCE_SYNC_OBJECTS="\{": not JSON/)],
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
