import fc from "fast-check";
import { configProblemLines } from "../helpers/config-problems";
import { validateStackConfig } from "../../components/config";
import { isDns1123Subdomain } from "../../components/shared/k8s-names";
import { referencesOf } from "../../components/subscriptions/bundles";

// Render-to-directory: these tests are about bundles, not about where the webhook image goes.
const cluster = { name: "prod-east", platform: "openshift", renderYamlToDirectory: "out/prod-east" };
const entitlement = { name: "etc-pki-entitlement", namespace: "openshift-config" };

function problemLines(subscriptions: Record<string, unknown>): string[] {
    return configProblemLines({ cluster, subscriptions: { enabled: true, ...subscriptions } });
}

const DNS_SUBDOMAIN =
    "must be a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' or '.', each dot-separated part starting and ending with a letter or digit";
const DNS_LABEL = "must be a DNS-1123 label: at most 63 lowercase letters, digits or '-', starting and ending with a letter or digit";

describe("subscriptions config: declared bundles", () => {
    test("GIVEN valid ClusterBundles and Bundles WHEN validated THEN they pass with defaults, Bundle references keeping their spelling", () => {
        const result = validateStackConfig({
            cluster,
            subscriptions: {
                enabled: true,
                clusterBundles: [{ name: "cluster", entitlements: [entitlement], aggregateToClusterRoles: ["edit"] }],
                bundles: [{ name: "subscription", namespace: "team-a", entitlements: [{ name: "e" }, { name: "f", namespace: "team-a" }] }],
            },
        });
        expect(result.ok && result.config.subscriptions.clusterBundles).toEqual([
            { name: "cluster", alwaysInject: false, entitlements: [entitlement], yumRepositories: [], aggregateToClusterRoles: ["edit"] },
        ]);
        expect(result.ok && result.config.subscriptions.bundles).toEqual([
            {
                name: "subscription",
                namespace: "team-a",
                alwaysInject: false,
                entitlements: [{ name: "e" }, { name: "f", namespace: "team-a" }],
                yumRepositories: [],
            },
        ]);
    });

    test("GIVEN one mistake of each kind WHEN validated THEN every one is reported at once, each naming its bundle", () => {
        expect(
            problemLines({
                clusterBundles: [
                    { name: "cluster", entitlements: [entitlement] },
                    { name: "cluster", entitlements: [entitlement] },
                    { name: "Bad_Bundle", entitlements: [] },
                    { name: "roles", entitlements: [entitlement], aggregateToClusterRoles: ["cluster-admin", "Edit", "view", "view"] },
                    { name: "refs", entitlements: [{ name: "Etc", namespace: "open.shift" }, entitlement, entitlement] },
                ],
                bundles: [
                    { name: "b", namespace: "team-a", entitlements: [{ name: "e", namespace: "team-b" }] },
                    { name: "b", namespace: "team-a", entitlements: [{ name: "e" }] },
                    {
                        name: "empty",
                        namespace: "Team_C",
                        entitlements: [],
                        yumRepositories: [{ name: "r" }, { name: "r", namespace: "Team_C" }],
                    },
                ],
            }),
        ).toEqual([
            `cluster-platform:subscriptions.bundles[0].entitlements[0].namespace: Bundle "team-a/b": "team-b" differs from the bundle's namespace; a Bundle may only reference objects in its own namespace (use a ClusterBundle to share across namespaces)`,
            'cluster-platform:subscriptions.bundles[1]: duplicate Bundle "team-a/b" (already at index 0)',
            'cluster-platform:subscriptions.bundles[2].entitlements: Bundle "Team_C/empty": entitlements is empty; a bundle must reference at least one entitlement Secret',
            `cluster-platform:subscriptions.bundles[2].namespace: Bundle "Team_C/empty": the namespace ${DNS_LABEL}`,
            `cluster-platform:subscriptions.bundles[2].yumRepositories[1]: Bundle "Team_C/empty": yum repository ConfigMap "Team_C/r" is listed twice (already at index 0)`,
            'cluster-platform:subscriptions.clusterBundles[1]: duplicate ClusterBundle name "cluster" (already at index 0)',
            'cluster-platform:subscriptions.clusterBundles[2].entitlements: ClusterBundle "Bad_Bundle": entitlements is empty; a bundle must reference at least one entitlement Secret',
            `cluster-platform:subscriptions.clusterBundles[2].name: ClusterBundle "Bad_Bundle": the name ${DNS_SUBDOMAIN}`,
            'cluster-platform:subscriptions.clusterBundles[3].aggregateToClusterRoles[0]: ClusterBundle "roles": role "cluster-admin" is not admin, edit or view; list it in subscriptions.allowedAggregationRoles to allow it',
            `cluster-platform:subscriptions.clusterBundles[3].aggregateToClusterRoles[1]: ClusterBundle "roles": role "Edit" ${DNS_SUBDOMAIN}`,
            'cluster-platform:subscriptions.clusterBundles[3].aggregateToClusterRoles[3]: ClusterBundle "roles": role "view" is listed twice (already at index 2)',
            'cluster-platform:subscriptions.clusterBundles[4].entitlements[0].name: ClusterBundle "refs": entitlement Secret name "Etc" ' +
                DNS_SUBDOMAIN,
            'cluster-platform:subscriptions.clusterBundles[4].entitlements[0].namespace: ClusterBundle "refs": entitlement Secret namespace "open.shift" ' +
                DNS_LABEL,
            'cluster-platform:subscriptions.clusterBundles[4].entitlements[2]: ClusterBundle "refs": entitlement Secret "openshift-config/etc-pki-entitlement" is listed twice (already at index 1)',
        ]);
    });

    test("GIVEN a role listed in allowedAggregationRoles WHEN validated THEN a ClusterBundle may aggregate to it", () => {
        expect(
            problemLines({
                allowedAggregationRoles: ["subscription-users"],
                clusterBundles: [
                    { name: "cluster", entitlements: [entitlement], aggregateToClusterRoles: ["subscription-users", "admin"] },
                ],
            }),
        ).toEqual([]);
    });

    test("GIVEN a Bundle reference naming its own namespace WHEN validated THEN it is accepted (the namespace is optional, never foreign)", () => {
        expect(problemLines({ bundles: [{ name: "b", namespace: "team-a", entitlements: [{ name: "e", namespace: "team-a" }] }] })).toEqual(
            [],
        );
    });

    test("GIVEN names whose generated objects would be too long WHEN validated THEN the bundle and the limit are named", () => {
        const long = "b".repeat(234);
        const role = "r".repeat(51);
        expect(
            problemLines({
                allowedAggregationRoles: [role],
                clusterBundles: [
                    { name: long, entitlements: [{ name: "e", namespace: "ns" }] },
                    { name: "roles", entitlements: [entitlement], aggregateToClusterRoles: [role] },
                ],
            }),
        ).toEqual([
            `cluster-platform:subscriptions.clusterBundles[0].name: ClusterBundle "${long.slice(0, 76)}...: the name has 234 characters; must have at most 233 so that its ClusterRole "<name>-subscription-bundle" is a valid name`,
            `cluster-platform:subscriptions.clusterBundles[1].aggregateToClusterRoles[0]: ClusterBundle "roles": role "${role}" has 51 characters; must have at most 50 so that the label "rbac.authorization.k8s.io/aggregate-to-<role>" is a valid label name`,
        ]);
    });

    test("GIVEN ClusterBundle names starting with openshift WHEN validated THEN each is a config error naming the driver's reserved prefix, once per bundle", () => {
        expect(
            problemLines({
                clusterBundles: [
                    {
                        name: "openshift-entitlements",
                        entitlements: [entitlement],
                        yumRepositories: [{ name: "repos", namespace: "openshift-config" }],
                    },
                    { name: "openshiftcluster", entitlements: [entitlement] },
                    { name: "my-openshift", entitlements: [entitlement] },
                ],
            }),
        ).toEqual(
            ["0", "1"].map(
                (i) =>
                    `cluster-platform:subscriptions.clusterBundles[${i}].name: ClusterBundle "${i === "0" ? "openshift-entitlements" : "openshiftcluster"}": the name starts with "openshift"; the Shared Resource CSI driver refuses shares whose names start with "openshift" (reserved for the platform), and every share of a ClusterBundle is named "<name>-..."`,
            ),
        );
    });

    test("GIVEN any valid ClusterBundle name WHEN validated THEN it is refused exactly when one of its share names starts with openshift", () => {
        fc.assert(
            fc.property(fc.stringMatching(/^(openshift|open|o)?[a-z0-9]([a-z0-9-]{0,8}[a-z0-9])?$/), (name) => {
                const shares = referencesOf({
                    name,
                    alwaysInject: false,
                    entitlements: [entitlement],
                    yumRepositories: [],
                    aggregateToClusterRoles: [],
                }).map((r) => r.share);
                const lines = problemLines({ clusterBundles: [{ name, entitlements: [entitlement] }] });
                expect(lines.length > 0).toBe(shares.some((share) => share.startsWith("openshift")));
                expect(lines.length > 0).toBe(name.startsWith("openshift"));
            }),
            { numRuns: 300 },
        );
    });

    test("GIVEN any entitlement name WHEN validated THEN it is refused exactly when it is not a DNS-1123 subdomain, and the message names the bundle", () => {
        fc.assert(
            fc.property(fc.stringMatching(/^[a-zA-Z0-9._-]{0,12}$/), (name) => {
                const lines = problemLines({ clusterBundles: [{ name: "cb", entitlements: [{ name, namespace: "ns" }] }] });
                expect(lines).toEqual(
                    isDns1123Subdomain(name)
                        ? []
                        : [
                              `cluster-platform:subscriptions.clusterBundles[0].entitlements[0].name: ClusterBundle "cb": entitlement Secret name ${JSON.stringify(name)} ${DNS_SUBDOMAIN}`,
                          ],
                );
            }),
            { numRuns: 300 },
        );
    });
});

describe("subscriptions config: no component reads a Secret it does not share (issue 37 point 1)", () => {
    test("GIVEN a platform source namespace, references into the source and webhook namespaces, a platform readNamespaces entry and readAllNamespaces WHEN validated THEN every problem is reported at once, naming the field, the value (and ClusterBundle) and the rule", () => {
        expect(
            problemLines({
                sourceNamespace: "openshift-config-managed",
                webhook: { readAllNamespaces: true, readNamespaces: ["team-b", "kube-system"] },
                clusterBundles: [
                    {
                        name: "cluster",
                        entitlements: [
                            { name: "etc-pki-entitlement", namespace: "openshift-config-managed" },
                            { name: "subscription-injection-webhook-tls", namespace: "subscription-injection" },
                        ],
                    },
                ],
                bundles: [{ name: "b", namespace: "openshift-config-managed", entitlements: [{ name: "e" }] }],
            }),
        ).toEqual([
            'cluster-platform:subscriptions.bundles[0].namespace: Bundle "openshift-config-managed/b": "openshift-config-managed" is the source namespace; the Shared Resource CSI driver lists and watches every Secret and ConfigMap of the namespace its shares point at, so the source namespace must hold nothing but the copies of shared objects, and would read this Bundle\'s Secrets; declare the Bundle in a namespace of its own',
            'cluster-platform:subscriptions.clusterBundles[0].entitlements[0].namespace: ClusterBundle "cluster": entitlement Secret "openshift-config-managed/etc-pki-entitlement" is in the source namespace, where the stack writes the copies it shares; reference the original where it lives',
            'cluster-platform:subscriptions.clusterBundles[0].entitlements[1].namespace: ClusterBundle "cluster": entitlement Secret "subscription-injection/subscription-injection-webhook-tls" is in the webhook\'s namespace (subscriptions.namespace), which holds its serving key; no share may expose it',
            'cluster-platform:subscriptions.sourceNamespace: "openshift-config-managed" is a platform namespace (kube*, openshift*) and cannot be the source namespace: the Shared Resource CSI driver lists and watches every Secret and ConfigMap of the namespace its shares point at, so the source namespace must hold nothing but the copies of shared objects, and the platform keeps credentials in its namespaces (the control plane\'s client keys in openshift-config-managed); the shares of ClusterBundle "cluster" would point there; name a namespace of the stack\'s own',
            "cluster-platform:subscriptions.webhook.readAllNamespaces: true would let the webhook list every Secret of every namespace, the platform's included; it reads teams' Bundles by name instead (etc-pki-entitlement everywhere, other names where the team grants get: docs/subscriptions.md, \"Teams' own Bundles\"); remove it, or list namespaces in subscriptions.webhook.readNamespaces",
            'cluster-platform:subscriptions.webhook.readNamespaces[1]: "kube-system" is a platform namespace (kube*, openshift*); the webhook never lists every Secret of one (it reads the objects bundles reference there by name)',
        ]);
    });

    test("GIVEN the source namespace equal to the webhook's or the driver's WHEN validated THEN it is refused naming which", () => {
        expect(problemLines({ sourceNamespace: "subscription-injection" })).toEqual([
            'cluster-platform:subscriptions.sourceNamespace: "subscription-injection" is the webhook\'s namespace (subscriptions.namespace), which holds its serving key: the Shared Resource CSI driver lists and watches every Secret and ConfigMap of the namespace its shares point at, so the source namespace must hold nothing but the copies of shared objects; name a namespace of its own',
        ]);
        expect(
            problemLines({ sourceNamespace: "builds", sharedResourceDriver: { serviceAccount: { name: "csi", namespace: "builds" } } }),
        ).toEqual([
            'cluster-platform:subscriptions.sourceNamespace: "builds" is the Shared Resource CSI driver\'s namespace: the Shared Resource CSI driver lists and watches every Secret and ConfigMap of the namespace its shares point at, so the source namespace must hold nothing but the copies of shared objects; name a namespace of its own',
        ]);
    });

    test("GIVEN a ClusterBundle sharing OpenShift's entitlement WHEN validated THEN it is accepted: its share points at the copy, never at openshift-config-managed", () => {
        expect(
            problemLines({
                clusterBundles: [
                    { name: "cluster", entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config-managed" }] },
                ],
            }),
        ).toEqual([]);
    });
});
