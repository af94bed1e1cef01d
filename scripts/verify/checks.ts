/**
 * The checks of `npm run verify`, each over what the stack declares (declared.ts) and a cluster it
 * may only read, dry-run create in and ask SubjectAccessReviews of (`VerifyApi`; cluster.ts is the
 * live one, tests give a stand-in). Each yields rows: passed, failed, or not checked with the
 * reason (what this cluster cannot show, never counted as passed).
 */
import { X509Certificate } from "node:crypto";
import { podReferences, referenceKey, serviceAccountPullSecrets } from "../../components/operator/pod-references";
import type { ObjectRef } from "../../components/shared/object-refs";
import { verifyServedChain } from "./certificates";
import { type Declared, type Json, objectKey, type StateObject } from "./declared";

export type Result = "passed" | "failed" | "not checked";

export interface Row {
    readonly check: string;
    readonly object: string;
    readonly result: Result;
    readonly why: string;
}

export interface Review {
    readonly user: string;
    readonly groups: readonly string[];
    readonly verb: string;
    readonly group: string;
    readonly resource: string;
    readonly namespace?: string;
    readonly name?: string;
}

/** What verify asks of a cluster: reads, server-side dry-run creates and access reviews. Nothing it does lasts. */
export interface VerifyApi {
    /** The object at `path` (`/api/v1/namespaces/x/services/y`), undefined when absent. */
    get(path: string): Promise<Json | undefined>;
    /** Whether an object exists, asked for its metadata only (a Secret's data is never transferred). */
    exists(ref: ObjectRef): Promise<boolean>;
    /** The items of a list at `path`, with an optional label selector. */
    list(path: string, labelSelector?: string): Promise<Json[]>;
    /** A server-side dry-run create (`?dryRun=All`): the object as admission left it, or the refusal's message. */
    dryRunCreate(path: string, object: Json): Promise<{ object: Json } | { refused: string }>;
    /** A SubjectAccessReview's verdict. */
    review(review: Review): Promise<{ allowed: boolean; reason: string }>;
    /**
     * The chain a pod serves on `port`, read through the API server (pods/portforward), or, when
     * that fails, from `address` directly; `via` says how, or why neither could be read.
     */
    servedChain(
        pod: { namespace: string; name: string; address: string },
        port: number,
    ): Promise<{ chain: X509Certificate[]; via: string } | { error: string }>;
    readonly now: Date;
}

const row = (check: string, object: string, result: Result, why: string): Row => ({ check, object, result, why });

const SHARED_RESOURCE_DRIVER = "csi.sharedresource.openshift.io";
const GENERATIONS = "subscription.openshift.io/bundle-generations";

/** The canary pod: restricted Pod Security, never scheduled (dry-run), asking for exactly one bundle. */
export function canaryPod(namespace: string, serviceAccount: string, annotation: string, bundle: string): Json {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: `verify-canary-${bundle}`.slice(0, 63).replace(/[-.]+$/, ""), namespace, annotations: { [annotation]: bundle } },
        spec: {
            serviceAccountName: serviceAccount,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            containers: [
                {
                    name: "canary",
                    image: "registry.invalid/cluster-platform/verify-canary:0",
                    securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
                },
            ],
        },
    };
}

/** What the dry-run answer shows of the injection: the bundles it records and the volumes and mounts it added. */
export function injection(pod: Json): { generations: Json | undefined; volumes: string[]; mounts: string[] } {
    const text = pod?.metadata?.annotations?.[GENERATIONS];
    let generations: Json | undefined;
    try {
        generations = text ? JSON.parse(text) : undefined;
    } catch {
        generations = undefined;
    }
    const volumes = ((pod?.spec?.volumes ?? []) as Json[])
        .filter((v) => typeof v.name === "string" && v.name.startsWith("subscription-"))
        .map((v) =>
            v.csi
                ? `${v.name} (csi ${v.csi.volumeAttributes?.sharedSecret ?? v.csi.volumeAttributes?.sharedConfigMap})`
                : `${v.name} (projected ${((v.projected?.sources ?? []) as Json[]).map((s) => s.secret?.name ?? s.configMap?.name).join(",")})`,
        );
    const injected = new Set(((pod?.spec?.volumes ?? []) as Json[]).map((v) => v.name).filter((n) => n?.startsWith("subscription-")));
    const mounts = [
        ...new Set(
            ((pod?.spec?.containers ?? []) as Json[]).flatMap((c) =>
                ((c.volumeMounts ?? []) as Json[]).filter((m) => injected.has(m.name)).map((m) => m.mountPath as string),
            ),
        ),
    ].sort();
    return { generations, volumes, mounts };
}

/** The verdict on a canary's dry-run answer for `bundle` of `kind`, with the shares a ClusterBundle's pod must get. */
export function judgeCanary(
    answer: { object: Json } | { refused: string },
    kind: "ClusterBundle" | "Bundle",
    bundle: string,
    shares: readonly string[],
): { result: Result; why: string } {
    if ("refused" in answer) return { result: "failed", why: `the canary pod was refused: ${answer.refused}` };
    const { generations, volumes, mounts } = injection(answer.object);
    const section = kind === "ClusterBundle" ? "clusterBundles" : "bundles";
    if (generations?.[section]?.[bundle] === undefined) {
        return {
            result: "failed",
            why: `the API server admitted the canary without ${kind} ${bundle} (no ${GENERATIONS} entry): the webhook was not called (failurePolicy Ignore, or the namespace is excluded) or skipped it`,
        };
    }
    const mounted = volumes.join(" ");
    const missing = shares.filter((s) => !mounted.includes(`csi ${s})`));
    if (missing.length > 0) return { result: "failed", why: `injected without the share(s) ${missing.join(", ")}; volumes: ${mounted}` };
    if (mounts.length === 0) return { result: "failed", why: `injected volumes ${mounted} but no container mounts them` };
    return { result: "passed", why: `volumes ${volumes.join(", ")}; mounts ${mounts.join(", ")}` };
}

export interface Canary {
    readonly namespace: string;
    readonly serviceAccount: string;
}

const saUser = (c: Canary) => `system:serviceaccount:${c.namespace}:${c.serviceAccount}`;
/** The groups the driver's and the webhook's reviews send (docs/subscriptions.md, "Access (ClusterBundles)"). */
const SA_GROUPS = ["system:serviceaccounts"];

/**
 * The service accounts that may use a ClusterBundle: the subjects of RoleBindings and
 * ClusterRoleBindings to its ClusterRole or to a role it aggregates to.
 */
export function boundServiceAccounts(grant: Declared["grants"][number], bindings: readonly Json[]): Canary[] {
    const roles = new Set([grant.role, ...grant.aggregatesTo]);
    const found = new Map<string, Canary>();
    for (const b of bindings) {
        if (b.roleRef?.kind !== "ClusterRole" || !roles.has(b.roleRef?.name)) continue;
        for (const s of (b.subjects ?? []) as Json[]) {
            if (s.kind !== "ServiceAccount") continue;
            // A RoleBinding grants in its namespace; a ClusterRoleBinding everywhere, so in the account's own.
            const c = { namespace: b.kind === "RoleBinding" ? b.metadata.namespace : s.namespace, serviceAccount: s.name };
            found.set(saUser(c), c);
        }
    }
    return [...found.values()].sort((a, b) => saUser(a).localeCompare(saUser(b)));
}

/** Subscription checks: the CSI driver, each share's `use` and source, and a canary per bundle. */
export async function subscriptionChecks(d: Declared, api: VerifyApi, canaries: readonly Canary[]): Promise<Row[]> {
    const subs = d.config.subscriptions;
    if (!subs.enabled) return [];
    const rows: Row[] = [];
    const driver = await api.get(`/apis/storage.k8s.io/v1/csidrivers/${SHARED_RESOURCE_DRIVER}`);
    rows.push(
        driver
            ? row("csi-driver", `CSIDriver ${SHARED_RESOURCE_DRIVER}`, "passed", "registered")
            : row("csi-driver", `CSIDriver ${SHARED_RESOURCE_DRIVER}`, "failed", "absent: no ClusterBundle share can be mounted"),
    );
    const nodes = await api.list("/apis/storage.k8s.io/v1/csinodes");
    const withPlugin = nodes.filter((n) => ((n.spec?.drivers ?? []) as Json[]).some((x) => x.name === SHARED_RESOURCE_DRIVER));
    rows.push(
        withPlugin.length > 0
            ? row(
                  "csi-node-plugin",
                  `CSIDriver ${SHARED_RESOURCE_DRIVER}`,
                  "passed",
                  `registered on ${withPlugin.length} of ${nodes.length} node(s)`,
              )
            : row(
                  "csi-node-plugin",
                  `CSIDriver ${SHARED_RESOURCE_DRIVER}`,
                  "not checked",
                  `no CSINode of the ${nodes.length} node(s) lists the driver: its node plugin runs nowhere here, so no mount can be tried`,
              ),
    );
    const driverSa = subs.sharedResourceDriver.serviceAccount;
    const driverUser = `system:serviceaccount:${driverSa.namespace}:${driverSa.name}`;
    const shareObjects = new Map(
        d.objects.filter((o) => o.kind === "SharedSecret" || o.kind === "SharedConfigMap").map((o) => [o.name, o] as const),
    );
    const bindings = [
        ...(await api.list("/apis/rbac.authorization.k8s.io/v1/rolebindings")).map((b) => ({ kind: "RoleBinding", ...b })),
        ...(await api.list("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings")).map((b) => ({ kind: "ClusterRoleBinding", ...b })),
    ];
    for (const bundle of d.clusterBundles) {
        const grant = d.grants.find((g) => g.bundle === bundle);
        const object = `ClusterBundle ${bundle}`;
        if (!grant) {
            rows.push(
                row("share-use", object, "failed", "the stack's state holds no ClusterRole granting get on it and use on its shares"),
            );
            continue;
        }
        // The shares' sources: the driver reads each copy with its own identity (a forbidden read fails the mount).
        for (const share of grant.shares) {
            const live = shareObjects.get(share.name)?.object;
            const ref = live?.spec?.secretRef ?? live?.spec?.configMapRef;
            const resource = share.resource === "sharedsecrets" ? "secrets" : "configmaps";
            if (!ref) {
                rows.push(row("share-source", `${share.resource}/${share.name}`, "failed", "the stack's state holds no such share"));
                continue;
            }
            const verdict = await api.review({
                user: driverUser,
                groups: SA_GROUPS,
                verb: "get",
                group: "",
                resource,
                namespace: ref.namespace,
                name: ref.name,
            });
            rows.push(
                row(
                    "share-source",
                    `${share.resource}/${share.name}`,
                    verdict.allowed ? "passed" : "failed",
                    `${driverUser} ${verdict.allowed ? "may" : "may not"} get ${resource} ${ref.namespace}/${ref.name}${verdict.allowed ? "" : `: ${verdict.reason || "no RBAC rule allows it"}`}`,
                ),
            );
        }
        const users = canaries.length > 0 ? [...canaries] : boundServiceAccounts(grant, bindings);
        if (users.length === 0) {
            rows.push(
                row(
                    "share-use",
                    object,
                    "not checked",
                    `no ServiceAccount is bound to ${[grant.role, ...grant.aggregatesTo].join(", ")} in any namespace; pass --canary <namespace>/<serviceaccount>`,
                ),
            );
            rows.push(row("canary", object, "not checked", "no service account to run the canary as (see share-use)"));
            continue;
        }
        // The reviews the driver sends before it mounts (pkg/client/client.go ExecuteSAR) and the seed's get on the bundle.
        for (const c of users) {
            const denied: string[] = [];
            for (const share of grant.shares) {
                const v = await api.review({
                    user: saUser(c),
                    groups: SA_GROUPS,
                    verb: "use",
                    group: "sharedresource.openshift.io",
                    resource: share.resource,
                    namespace: c.namespace,
                    name: share.name,
                });
                if (!v.allowed) denied.push(`use ${share.resource}/${share.name}`);
            }
            const get = await api.review({
                user: saUser(c),
                groups: SA_GROUPS,
                verb: "get",
                group: "subscription.openshift.io",
                resource: "clusterbundles",
                namespace: c.namespace,
                name: bundle,
            });
            if (!get.allowed) denied.push(`get clusterbundles/${bundle}`);
            rows.push(
                row(
                    "share-use",
                    `${object} as ${c.namespace}/${c.serviceAccount}`,
                    denied.length === 0 ? "passed" : "failed",
                    denied.length === 0
                        ? `may use its ${grant.shares.length} share(s) and get the bundle (SubjectAccessReview)`
                        : `SubjectAccessReview denies ${denied.join(", ")}`,
                ),
            );
        }
        const c = users[0];
        const answer = await api.dryRunCreate(
            `/api/v1/namespaces/${c.namespace}/pods`,
            canaryPod(c.namespace, c.serviceAccount, "subscription.openshift.io/inject-cluster-bundle", bundle),
        );
        const verdict = judgeCanary(
            answer,
            "ClusterBundle",
            bundle,
            grant.shares.map((s) => s.name),
        );
        rows.push(row("canary", `${object} in ${c.namespace} as ${c.serviceAccount}`, verdict.result, verdict.why));
    }
    for (const b of d.bundles) {
        const sa = canaries.find((c) => c.namespace === b.namespace)?.serviceAccount ?? "default";
        const answer = await api.dryRunCreate(
            `/api/v1/namespaces/${b.namespace}/pods`,
            canaryPod(b.namespace, sa, "subscription.openshift.io/inject-bundle", b.name),
        );
        const verdict = judgeCanary(answer, "Bundle", b.name, []);
        rows.push(row("canary", `Bundle ${b.namespace}/${b.name} as ${sa}`, verdict.result, verdict.why));
    }
    return rows;
}

/** A Service the API server calls for an object, with the caBundle the object gives it. */
export interface ServedEndpoint {
    readonly object: string;
    readonly service: { readonly namespace: string; readonly name: string; readonly port: number };
    readonly caBundle: string;
}

const b64 = (text: unknown) => (typeof text === "string" ? Buffer.from(text, "base64").toString("utf8") : "");

/** The Services the API server calls for the stack's webhook configurations, APIServices and CRD conversions (live objects). */
export function servedEndpoints(kind: string, live: Json): ServedEndpoint[] {
    const name = live?.metadata?.name;
    if (kind === "MutatingWebhookConfiguration" || kind === "ValidatingWebhookConfiguration") {
        return ((live.webhooks ?? []) as Json[])
            .filter((w) => w.clientConfig?.service)
            .map((w) => ({
                object: `${kind} ${name} ${w.name}`,
                service: {
                    namespace: w.clientConfig.service.namespace,
                    name: w.clientConfig.service.name,
                    port: w.clientConfig.service.port ?? 443,
                },
                caBundle: b64(w.clientConfig.caBundle),
            }));
    }
    if (kind === "APIService" && live.spec?.service) {
        return [
            {
                object: `APIService ${name}`,
                service: { namespace: live.spec.service.namespace, name: live.spec.service.name, port: live.spec.service.port ?? 443 },
                caBundle: b64(live.spec.caBundle),
            },
        ];
    }
    const webhook = live?.spec?.conversion?.webhook;
    if (kind === "CustomResourceDefinition" && live.spec?.conversion?.strategy === "Webhook" && webhook?.clientConfig?.service) {
        const s = webhook.clientConfig.service;
        return [
            {
                object: `CustomResourceDefinition ${name} conversion`,
                service: { namespace: s.namespace, name: s.name, port: s.port ?? 443 },
                caBundle: b64(webhook.clientConfig.caBundle),
            },
        ];
    }
    return [];
}

/** A row from an object's `Available` condition (Deployments, APIServices). */
function availability(check: string, o: StateObject, live: Json, passed: string): Row {
    const available = ((live.status?.conditions ?? []) as Json[]).find((c) => c.type === "Available");
    return available?.status === "True"
        ? row(check, objectKey(o), "passed", passed)
        : row(
              check,
              objectKey(o),
              "failed",
              `not Available (${passed}): ${available?.reason ?? "no condition"} ${available?.message ?? ""}`.trim(),
          );
}

const CALLED_KINDS = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration", "APIService", "CustomResourceDefinition"];

function livePath(o: StateObject): string {
    const plural = {
        MutatingWebhookConfiguration: "mutatingwebhookconfigurations",
        ValidatingWebhookConfiguration: "validatingwebhookconfigurations",
        APIService: "apiservices",
        CustomResourceDefinition: "customresourcedefinitions",
    }[o.kind];
    return `/apis/${o.apiVersion}/${plural}/${o.name}`;
}

/** The pods behind a Service port that are ready, with the port number they serve it on (EndpointSlices). */
export function readyBackends(
    service: Json,
    slices: readonly Json[],
    port: number,
): { namespace: string; name: string; address: string; port: number }[] {
    const servicePort = ((service.spec?.ports ?? []) as Json[]).find((p) => p.port === port);
    if (!servicePort) return [];
    return slices.flatMap((slice) => {
        const p = ((slice.ports ?? []) as Json[]).find((x) => (x.name ?? "") === (servicePort.name ?? ""));
        if (!p?.port) return [];
        return ((slice.endpoints ?? []) as Json[])
            .filter((e) => e.conditions?.ready !== false && e.targetRef?.kind === "Pod")
            .map((e) => ({
                namespace: e.targetRef.namespace ?? slice.metadata.namespace,
                name: e.targetRef.name,
                address: e.addresses[0],
                port: p.port,
            }));
    });
}

/** Per webhook, APIService and conversion the stack owns or patches: its Service reachable, its served certificate chaining to the caBundle. */
export async function servingChecks(d: Declared, api: VerifyApi): Promise<Row[]> {
    const rows: Row[] = [];
    // Once per object: a state may hold an object and a patch of it (a CRD and its conversion patch).
    const targets = [...new Map(d.objects.filter((o) => CALLED_KINDS.includes(o.kind)).map((o) => [objectKey(o), o] as const)).values()];
    for (const o of targets) {
        const live = await api.get(livePath(o));
        if (!live) {
            rows.push(row("serving", objectKey(o), "failed", "absent from the cluster (the stack's state has it)"));
            continue;
        }
        if (o.kind === "APIService") {
            rows.push(availability("apiservice", o, live, "Available (the aggregator reached it with its caBundle)"));
        }
        for (const e of servedEndpoints(o.kind, live)) {
            const svc = `${e.service.namespace}/${e.service.name}:${e.service.port}`;
            const service = await api.get(`/api/v1/namespaces/${e.service.namespace}/services/${e.service.name}`);
            if (!service) {
                rows.push(row("service", e.object, "failed", `Service ${e.service.namespace}/${e.service.name} does not exist`));
                continue;
            }
            const slices = await api.list(
                `/apis/discovery.k8s.io/v1/namespaces/${e.service.namespace}/endpointslices`,
                `kubernetes.io/service-name=${e.service.name}`,
            );
            const backends = readyBackends(service, slices, e.service.port);
            if (backends.length === 0) {
                rows.push(
                    row(
                        "service",
                        e.object,
                        "failed",
                        `Service ${svc} has no ready endpoint (its selector ${JSON.stringify(service.spec?.selector ?? {})} matches no ready pod, or no port ${e.service.port})`,
                    ),
                );
                rows.push(row("certificate", e.object, "not checked", "no backend to read the certificate from (see service)"));
                continue;
            }
            rows.push(row("service", e.object, "passed", `Service ${svc} has ${backends.length} ready endpoint(s)`));
            const b = backends[0];
            const served = await api.servedChain(b, b.port);
            if ("error" in served) {
                rows.push(
                    row(
                        "certificate",
                        e.object,
                        "not checked",
                        `the certificate of pod ${b.namespace}/${b.name} could not be read: ${served.error}`,
                    ),
                );
                continue;
            }
            const verdict = verifyServedChain(served.chain, e.caBundle, `${e.service.name}.${e.service.namespace}.svc`, api.now);
            rows.push(row("certificate", e.object, verdict.ok ? "passed" : "failed", `${verdict.why} (read ${served.via})`));
        }
    }
    return rows;
}

/** Every Deployment of the stack Available, and every object its pods reference present (the pre-flight's rule). */
export async function deploymentChecks(d: Declared, api: VerifyApi): Promise<Row[]> {
    const rows: Row[] = [];
    for (const o of d.objects.filter((x) => x.owned && x.kind === "Deployment")) {
        const live = await api.get(`/apis/apps/v1/namespaces/${o.namespace}/deployments/${o.name}`);
        if (!live) {
            rows.push(row("deployment", objectKey(o), "failed", "absent from the cluster (the stack's state has it)"));
            continue;
        }
        rows.push(availability("deployment", o, live, `${live.status?.availableReplicas ?? 0}/${live.spec?.replicas ?? 1} available`));
        const refs = podReferences(live.spec, o.namespace ?? "");
        const sa = refs.find((r) => r.ref.kind === "ServiceAccount");
        const saObject = sa ? await api.get(`/api/v1/namespaces/${o.namespace}/serviceaccounts/${sa.ref.name}`) : undefined;
        const all = [...refs, ...(saObject ? serviceAccountPullSecrets(saObject, o.namespace ?? "") : [])];
        const missing: string[] = [];
        for (const r of all) {
            const present = r.ref.kind === "ServiceAccount" ? saObject !== undefined : await api.exists(r.ref);
            if (!present) missing.push(`${referenceKey(r.ref)} (${r.field})`);
        }
        rows.push(
            row(
                "pod-references",
                objectKey(o),
                missing.length === 0 ? "passed" : "failed",
                missing.length === 0 ? `all ${all.length} referenced object(s) present` : `missing: ${missing.join(", ")}`,
            ),
        );
    }
    return rows;
}

export async function runChecks(d: Declared, api: VerifyApi, canaries: readonly Canary[]): Promise<Row[]> {
    return [...(await subscriptionChecks(d, api, canaries)), ...(await servingChecks(d, api)), ...(await deploymentChecks(d, api))];
}
