/**
 * The community catalog on the real tier (issue 35, point 7): a sample of real bundles from
 * ../shared/testdata/community-bundles installed by the real program, engine, provider and API
 * server, in one stack, as an admin would install them; kwok runs their pods.
 *
 * The sample is chosen by rule (tests/helpers/catalog-sample.ts): at least 20 bundles with
 * conversion and admission webhooks, OLM-supported kinds (ServiceMonitor, PrometheusRule,
 * PodDisruptionBudget), bundle Secrets, ConfigMaps and RBAC, and pods that need an object the admin
 * makes first. Prometheus's API is there as on OpenShift (stand-in CRDs).
 *
 * After the update, the API server answers every check, none the program's plan: every Deployment
 * Available, every object OLM creates from the bundle present with OLM's label, every Service OLM
 * generates for a webhook backed by ready endpoints, every rule of the CSV's permissions allowed
 * to its ServiceAccount (SubjectAccessReview), and a preview with no change. Destroy leaves exactly
 * the bundles' CRDs and OLM's two aggregate roles (helpers/destroy.ts compares the state's objects
 * with the cluster).
 *
 * Before the install, every bundle object the program declares for the catalog's bundles that
 * install AllNamespaces is sent to the API server as a server-side dry-run create, and each
 * declared field must be what the server would store: a field it drops or defaults would show
 * changing back in every preview (components/operator/bundle-objects.ts `asStored`).
 */
import { withoutReadinessAwait } from "../../components/operator/bundle-install";
import {
    catalogInstalls,
    olmCreatedObjects,
    type OracleRule,
    planCatalogInstall,
    readCatalogOracle,
    servingObjects,
} from "../helpers/catalog";
import { catalogSample, SAMPLE_QUOTAS, type SampleInstall } from "../helpers/catalog-sample";
import { type AccessReviewSpec, ApiClient, askAccessReviews } from "./helpers/api-client";
import { destroyStack, objectRef } from "./helpers/destroy";
import { applyObjects, getObject, kubectl, kubectlRun, type KubeObject, waitForCrdsEstablished } from "./helpers/kubectl";
import { OLM_AGGREGATE_VIEW, operatorsOnlyStack } from "./helpers/fixtures";
import { describe as explain, realEnv, TestStack } from "./helpers/stack";

type Json = Record<string, unknown>;

/**
 * Prometheus's kinds as a current OpenShift serves them (its cluster monitoring owns these CRDs),
 * stand-ins with open schemas: what the test checks is that the bundles' objects are created, not
 * Prometheus's validation of them. The pre-flight reads discovery, so these must exist first.
 */
function prometheusCrds(): KubeObject[] {
    return [
        ["ServiceMonitor", "servicemonitors"],
        ["PrometheusRule", "prometheusrules"],
        ["PodMonitor", "podmonitors"],
    ].map(([kind, plural]) => ({
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `${plural}.monitoring.coreos.com` },
        spec: {
            group: "monitoring.coreos.com",
            scope: "Namespaced",
            names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
            versions: [
                {
                    name: "v1",
                    served: true,
                    storage: true,
                    schema: { openAPIV3Schema: { type: "object", "x-kubernetes-preserve-unknown-fields": true } },
                },
            ],
        },
    }));
}

let sample: SampleInstall[];
let stack: TestStack;

function config(installs: readonly SampleInstall[]): Record<string, unknown> {
    return operatorsOnlyStack(installs.map((s) => s.entry));
}

function upAndSettle(): void {
    const applied = stack.up();
    expect({ status: applied.status, output: applied.status === 0 ? "" : explain(applied) }).toEqual({ status: 0, output: "" });
    const again = stack.preview(["--expect-no-changes"]);
    expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
}

/** Every object of each kubectl resource (`plural.group`), in all namespaces, keyed by `objectRef`. */
function liveObjects(resources: readonly string[]): Map<string, KubeObject> {
    const live = new Map<string, KubeObject>();
    for (const resource of resources) {
        const items = JSON.parse(kubectl(["get", resource, "--all-namespaces", "-o", "json"])).items as KubeObject[];
        for (const item of items)
            live.set(objectRef({ kind: item.kind, namespace: item.metadata.namespace, name: item.metadata.name }), item);
    }
    return live;
}

/** The kubectl resource name of each kind OLM creates from the sample's bundles. */
const KUBECTL_RESOURCE: Record<string, string> = {
    Deployment: "deployments.apps",
    ServiceAccount: "serviceaccounts",
    Service: "services",
    Secret: "secrets",
    ConfigMap: "configmaps",
    Role: "roles.rbac.authorization.k8s.io",
    RoleBinding: "rolebindings.rbac.authorization.k8s.io",
    ClusterRole: "clusterroles.rbac.authorization.k8s.io",
    ClusterRoleBinding: "clusterrolebindings.rbac.authorization.k8s.io",
    CustomResourceDefinition: "customresourcedefinitions.apiextensions.k8s.io",
    PodDisruptionBudget: "poddisruptionbudgets.policy",
    ServiceMonitor: "servicemonitors.monitoring.coreos.com",
    PrometheusRule: "prometheusrules.monitoring.coreos.com",
    PodMonitor: "podmonitors.monitoring.coreos.com",
    APIService: "apiservices.apiregistration.k8s.io",
};

/** What the cluster lacks of what OLM would have created for `installs`, each line naming bundle and object. */
function missingOlmObjects(installs: readonly SampleInstall[]): string[] {
    const expected = installs.flatMap((s) =>
        olmCreatedObjects(s.facts, s.entry.namespace, { ok: true, value: s.csv }).map((o) => ({ s, o })),
    );
    const unknownKinds = [...new Set(expected.map(({ o }) => o.kind).filter((k) => !KUBECTL_RESOURCE[k]))];
    expect(unknownKinds).toEqual([]);
    const live = liveObjects([...new Set(expected.map(({ o }) => KUBECTL_RESOURCE[o.kind]))]);
    return expected.flatMap(({ s, o }) => {
        const object = live.get(objectRef(o));
        if (!object) return [`${s.bundle}: ${objectRef(o)} is missing`];
        if (o.olmLabels && object.metadata.labels?.["olm.managed"] !== "true") return [`${s.bundle}: ${objectRef(o)} lacks olm.managed`];
        return [];
    });
}

/** Each Deployment of the CSVs that is not Available, with the conditions the controller wrote. */
function unavailableDeployments(installs: readonly SampleInstall[]): string[] {
    const live = liveObjects([KUBECTL_RESOURCE.Deployment]);
    return installs.flatMap((s) =>
        s.facts.csv!.deployments.flatMap((name) => {
            const deployment = live.get(objectRef({ kind: "Deployment", namespace: s.entry.namespace, name }));
            const conditions = (deployment?.status?.conditions ?? []) as { type: string; status: string; message?: string }[];
            return conditions.some((c) => c.type === "Available" && c.status === "True")
                ? []
                : [`${s.bundle}: Deployment ${name}: ${JSON.stringify(conditions.map((c) => `${c.type}=${c.status} ${c.message ?? ""}`))}`];
        }),
    );
}

/** Each Service OLM generates for a webhook that no ready endpoint backs (EndpointSlices, written by the controller manager). */
function servicesWithoutEndpoints(installs: readonly SampleInstall[]): string[] {
    const slices = JSON.parse(kubectl(["get", "endpointslices.discovery.k8s.io", "--all-namespaces", "-o", "json"])).items as KubeObject[];
    return installs.flatMap((s) =>
        servingObjects({ ok: true, value: s.csv }, s.entry.namespace)
            .filter((o) => o.kind === "Service")
            .filter(
                (service) =>
                    !slices.some(
                        (slice) =>
                            slice.metadata.namespace === service.namespace &&
                            slice.metadata.labels?.["kubernetes.io/service-name"] === service.name &&
                            ((slice.endpoints ?? []) as KubeObject[]).some((e) => e.conditions?.ready === true),
                    ),
            )
            .map((service) => `${s.bundle}: Service ${service.namespace}/${service.name} has no ready endpoint`),
    );
}

/**
 * The SubjectAccessReviews of every rule of the CSV's permissions: one per verb, group and resource
 * (a resource name's first, a non-resource URL's each), cluster-wide for clusterPermissions and
 * for an AllNamespaces install, else in each target namespace (OLM's scoping, operatorgroup.go).
 */
function accessReviews(s: SampleInstall): { review: Json; what: string }[] {
    const reviews: { review: Json; what: string }[] = [];
    const scopes = s.entry.targetNamespaces.length === 0 ? [undefined] : s.entry.targetNamespaces;
    for (const permission of s.facts.csv!.permissions) {
        const user = `system:serviceaccount:${s.entry.namespace}:${permission.serviceAccount}`;
        for (const rule of (permission.rules ?? []) as OracleRule[]) {
            for (const scope of permission.cluster ? [undefined] : scopes) {
                for (const verb of rule.verbs) {
                    const attributes: Json[] = (rule.nonResourceURLs ?? []).length
                        ? rule.nonResourceURLs!.map((p) => ({ nonResourceAttributes: { path: p, verb } }))
                        : (rule.apiGroups ?? []).flatMap((group) =>
                              (rule.resources ?? []).map((resource) => {
                                  const [plural, subresource] = resource.split("/");
                                  return {
                                      resourceAttributes: {
                                          verb,
                                          group,
                                          resource: plural,
                                          ...(subresource ? { subresource } : {}),
                                          ...(scope ? { namespace: scope } : {}),
                                          ...(rule.resourceNames?.length ? { name: rule.resourceNames[0] } : {}),
                                      },
                                  };
                              }),
                          );
                    for (const attribute of attributes) {
                        reviews.push({
                            review: { apiVersion: "authorization.k8s.io/v1", kind: "SubjectAccessReview", spec: { user, ...attribute } },
                            what: `${s.bundle}: ${permission.serviceAccount} ${JSON.stringify(attribute)}`,
                        });
                    }
                }
            }
        }
    }
    return reviews;
}

/**
 * Reviews asked at a time, each on a connection of its own. `kubectl create -f` walks a List one
 * object at a time: 3,000 reviews took 6.7 s that way on the real tier's cluster, and 2.8 s sixteen
 * at a time; the sample's 32,938 distinct reviews took 21.9 s thirty-two at a time (2026-11-30).
 */
const REVIEWS_IN_FLIGHT = 32;

/** The rules of the CSVs' permissions the API server does not allow to their ServiceAccounts. */
async function deniedRules(
    installs: readonly SampleInstall[],
): Promise<{ reviews: number; distinct: number; seconds: number; denied: string[] }> {
    const reviews = installs.flatMap(accessReviews);
    const started = Date.now();
    const client = await ApiClient.fromKubeconfig(realEnv("REAL_KUBECONFIG"), REVIEWS_IN_FLIGHT);
    try {
        const answers = await askAccessReviews(
            client,
            reviews.map((r) => r.review.spec as AccessReviewSpec),
            REVIEWS_IN_FLIGHT,
        );
        expect(answers.allowed).toHaveLength(reviews.length);
        return {
            reviews: reviews.length,
            distinct: answers.distinct,
            seconds: (Date.now() - started) / 1000,
            denied: reviews.filter((_, i) => !answers.allowed[i]).map((r) => r.what),
        };
    } finally {
        client.destroy();
    }
}

async function expectInstalled(installs: readonly SampleInstall[]): Promise<void> {
    const access = await deniedRules(installs);
    expect({
        unavailable: unavailableDeployments(installs),
        missing: missingOlmObjects(installs),
        unbacked: servicesWithoutEndpoints(installs),
        denied: access.denied,
    }).toEqual({ unavailable: [], missing: [], unbacked: [], denied: [] });
    console.log(
        `catalog sample: ${installs.length} bundles installed, ${access.reviews} SubjectAccessReviews allowed (${access.distinct} distinct, asked in ${access.seconds.toFixed(1)} s)`,
    );
}

/** Each leaf of `declared` (by path) whose value `stored` does not hold, as `path: declared → stored`. */
function notStoredAsDeclared(declared: unknown, stored: unknown, at = ""): string[] {
    if (declared !== null && typeof declared === "object") {
        if (Object.keys(declared).length === 0) {
            const same = stored !== null && typeof stored === "object" && Object.keys(stored).length === 0;
            return same ? [] : [`${at}: ${JSON.stringify(declared)} → ${JSON.stringify(stored)}`];
        }
        return Object.entries(declared as Json).flatMap(([key, value]) =>
            notStoredAsDeclared(value, stored !== null && typeof stored === "object" ? (stored as Json)[key] : undefined, `${at}.${key}`),
        );
    }
    return declared === stored ? [] : [`${at}: ${JSON.stringify(declared)} → ${JSON.stringify(stored)}`];
}

/** kubectl create's `-o json` answer for several objects: one indented JSON document each, back to back, each starting with "{" in column 0. */
function createdObjects(stdout: string): KubeObject[] {
    return stdout
        .split(/\n(?=\{)/)
        .filter((text) => text.trim())
        .map((text) => JSON.parse(text) as KubeObject);
}

/** The index annotation that pairs each dry-run answer with the object sent. */
const DRY_RUN_INDEX = "cluster-platform.io/dry-run-index";

/** OLM's two aggregate roles, which a stack with operators keeps on destroy by design (components/operator/rbac.ts olmAggregateRoles). */
const OLM_AGGREGATE_ROLES = ["aggregate-olm-edit", OLM_AGGREGATE_VIEW];
/** Those of them the cluster had before this file: left as found. */
let aggregateRolesBefore: string[];

beforeAll(async () => {
    aggregateRolesBefore = OLM_AGGREGATE_ROLES.filter((name) => getObject("clusterrole", name) !== undefined);
    sample = await catalogSample();
    // The engine saves the whole checkpoint after every step of an update on a file backend, so a
    // stack of this size pays for it quadratically: 393 s of the CLI's CPU over the file's up,
    // preview and destroy, 51 s with PULUMI_SKIP_CHECKPOINTS (pulumi/pulumi sdk/go/common/env/env.go,
    // "only save the final deployment"), and the file's wall time 530 s then 303 s (alone, 2026-11-28).
    // What this file proves is read from the cluster and the final state, which are the same either
    // way; what intermediate checkpoints are for (an update cut off part-way) is interrupted.real.ts's,
    // which keeps them.
    stack = new TestStack("catalog-sample", config(sample), { env: { PULUMI_SKIP_CHECKPOINTS: "true" } });
});

let destroyed = false;

afterAll(() => {
    // A test that failed before the destroy leaves the stack: it goes now, so nothing leaks into the next file.
    if (stack && !destroyed) destroyStack(stack, "retained by its state");
});

describe("the community catalog's sample on the real tier (issue 35, point 7)", () => {
    test("GIVEN the catalog WHEN the sample is chosen by its rule THEN it has at least 20 bundles and every kind of content", () => {
        const contents = SAMPLE_QUOTAS.map(([content]) => content);
        expect(contents.filter((content) => !sample.some((s) => s.contents.includes(content)))).toEqual([]);
        expect(sample.length).toBeGreaterThanOrEqual(20);
        console.log(`catalog sample: ${sample.map((s) => `${s.bundle} (${s.contents.join(", ")})`).join("; ")}`);
    });

    test("GIVEN every bundle object the program declares for the catalog's installable bundles WHEN the API server stores it (server-side dry-run) THEN every field the program declares is stored as declared, so no preview shows it changing back", async () => {
        const oracle = readCatalogOracle();
        const namespace = "catalog-dry-run";
        applyObjects([{ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } }, ...prometheusCrds()]);
        await waitForCrdsEstablished(prometheusCrds().map((c) => c.metadata.name));
        const sent: { bundle: string; file: string; manifest: Json }[] = [];
        for (const install of catalogInstalls(oracle)) {
            if (install.mode !== "AllNamespaces" || oracle.bundles[install.bundle].refusals.length > 0) continue;
            const plan = planCatalogInstall({ ...install, config: { ...install.config, namespace, targetNamespaces: [] } }).plans[0];
            for (const object of plan?.bundleObjects ?? []) {
                const manifest = (object.kind === "Service" ? withoutReadinessAwait(object.manifest) : object.manifest) as Json;
                sent.push({ bundle: install.bundle, file: object.file, manifest });
            }
            for (const [name, manifest] of Object.entries(plan?.serviceAccountObjects ?? {}))
                sent.push({ bundle: install.bundle, file: `ServiceAccount ${name}`, manifest: manifest as Json });
        }
        const indexed = sent.map(({ manifest }, index) => {
            const metadata = manifest.metadata as Json;
            return {
                ...manifest,
                metadata: { ...metadata, annotations: { ...((metadata.annotations as Json) ?? {}), [DRY_RUN_INDEX]: String(index) } },
            };
        });
        const answer = kubectlRun(["create", "--dry-run=server", "--validate=false", "-o", "json", "-f", "-"], {
            input: JSON.stringify({ apiVersion: "v1", kind: "List", items: indexed }),
        });
        const stored = createdObjects(answer.stdout);
        const byIndex = new Map(stored.map((o) => [Number(o?.metadata?.annotations?.[DRY_RUN_INDEX]), o]));
        const differences = sent.flatMap(({ bundle, file }, index) => {
            const live = byIndex.get(index);
            return live ? notStoredAsDeclared(indexed[index], live).map((d) => `${bundle} ${file}${d}`) : [];
        });
        // Refused by the API server: only what the pre-flight or OLM refuses too would be expected; none is, for installable bundles.
        expect({
            refused: answer.stderr.trim().split("\n").filter(Boolean),
            differences,
        }).toEqual({ refused: [], differences: [] });
        expect(byIndex.size).toBe(sent.length);
        console.log(
            `catalog bundle objects: ${sent.length} objects of ${new Set(sent.map((s) => s.bundle)).size} bundles stored as declared (server-side dry-run)`,
        );
    });

    test("GIVEN the sample WHEN the stack installs it THEN every Deployment is Available, OLM's objects exist, webhook Services have ready endpoints, the CSVs' rules are allowed, and the next preview is empty", async () => {
        // As the admin has them before installing: Prometheus's API, and what the pre-flight said the pods reference.
        applyObjects([
            ...prometheusCrds(),
            ...sample.flatMap((s) =>
                s.supplied.length > 0
                    ? [{ apiVersion: "v1", kind: "Namespace", metadata: { name: s.entry.namespace } }, ...s.supplied]
                    : [],
            ),
        ]);
        await waitForCrdsEstablished(prometheusCrds().map((c) => c.metadata.name));
        upAndSettle();
        await expectInstalled(sample);
    });

    test("GIVEN the installed sample WHEN the stack is destroyed THEN exactly the bundles' CRDs and OLM's two aggregate roles remain", () => {
        const crds = [...new Set(sample.flatMap((s) => s.facts.objects.filter((o) => o.handling === "crd").map((o) => o.name)))];
        destroyStack(stack, [
            ...crds.map((name) => objectRef({ kind: "CustomResourceDefinition", name })),
            ...OLM_AGGREGATE_ROLES.map((name) => objectRef({ kind: "ClusterRole", name })),
        ]);
        destroyed = true;
        // What this file made goes now, not at the run's end, so later files on this cluster find it as before:
        // the bundles' CRDs, the Prometheus stand-ins, and the aggregate roles the cluster did not have.
        kubectl(["delete", "crd", ...crds, ...prometheusCrds().map((c) => c.metadata.name), "--ignore-not-found", "--wait=false"]);
        const made = OLM_AGGREGATE_ROLES.filter((name) => !aggregateRolesBefore.includes(name));
        if (made.length > 0) kubectl(["delete", "clusterrole", ...made, "--ignore-not-found"]);
    });
});
