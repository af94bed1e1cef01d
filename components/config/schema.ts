import { z } from "zod";
import {
    DNS1123_LABEL_RULE,
    DNS1123_SUBDOMAIN_RULE,
    ENV_VAR_NAME_RULE,
    isDns1123Label,
    isDns1123Subdomain,
    isEnvVarName,
    isLabelKey,
    isLabelValue,
    isQuantity,
    LABEL_KEY_RULE,
    LABEL_VALUE_RULE,
    QUANTITY_RULE,
} from "../shared/k8s-names";
import { registryTrustProblems } from "../aws-assets/rules";
import { normalizeAwsSection, tagValueText, userTagIssues } from "../aws-tags/rules";
import { describeValue } from "../shared/problems";
import { STACK_ENV_NAMES } from "../operator/rules";
import {
    baseImageProblem,
    DEFAULT_BASE_IMAGE,
    DEFAULT_PLATFORMS,
    DEFAULT_WEBHOOK_REPOSITORY,
    parsePlatform,
    PLATFORM_RULE,
    repositoryProblem,
} from "../webhook-image/rules";
import {
    aggregationRoleIssues,
    bundleIssues,
    clusterBundleIssues,
    DEFAULT_AGGREGATION_ROLES,
    DEFAULT_SOURCE_NAMESPACE,
    DRIVER_SERVICE_ACCOUNTS,
    REMOVED_SHARES_POLICIES,
    RuleIssue,
    sourceNamespaceIssues,
} from "../subscriptions/rules";
import {
    CERTIFICATE_MODES,
    INJECTABLE_KINDS,
    INJECTION_TARGETS,
    InjectableKind,
    NAMESPACED_NAME,
    NAMESPACED_NAME_RULE,
} from "../certificates/rules";
import { DEFAULT_WEBHOOK_TIMEOUT_SECONDS, MAX_WEBHOOK_TIMEOUT_SECONDS, MIN_FAIL_CLOSED_REPLICAS } from "../admission-webhook/rules";

/**
 * The stack-config contract of cluster-platform: the single source of truth for every key,
 * its type, default and description. `Pulumi.yaml`'s `config:` block and
 * docs/config-reference.md are generated from (and checked against) this module.
 *
 * Each top-level key is its own section schema, parsed separately, so a mistake in one
 * section never hides the mistakes in another. Rules that span sections live in `rules.ts`.
 */

/**
 * An object schema whose own default is what parsing `{}` through it gives, so each default is
 * written once, on its field. (zod 4's `.default(value)` returns `value` as is, without parsing:
 * a literal copy of the field defaults would silently win over a changed field default.)
 */
function withFieldDefaults<S extends z.ZodType>(schema: S): z.ZodDefault<S> {
    return schema.default(schema.parse({}) as never);
}

/** A string that passes `problemOf` (which returns the rule it breaks, or undefined); the message names the value and the rule. */
function checked(problemOf: (value: string) => string | undefined) {
    return z.string().superRefine((value, ctx) => {
        const problem = problemOf(value);
        if (problem !== undefined) {
            ctx.addIssue({ code: "custom", message: `${describeValue(value)} ${problem}`, input: value });
        }
    });
}

/** A string that must satisfy `test`; the message names the value and the rule. */
function ruled(test: (value: string) => boolean, rule: string) {
    return checked((value) => (test(value) ? undefined : rule));
}

export const dnsLabel = () => ruled(isDns1123Label, DNS1123_LABEL_RULE);
export const dnsSubdomain = () => ruled(isDns1123Subdomain, DNS1123_SUBDOMAIN_RULE);
const nonEmpty = () => ruled((v) => v.trim().length > 0, "must not be empty");

/** Reports repeated values of `key(item)` in a list, naming the duplicate and its first position. */
function unique<T>(key: (item: T) => string, what: string) {
    return (items: T[], ctx: z.RefinementCtx) => {
        const seen = new Map<string, number>();
        items.forEach((item, index) => {
            const k = key(item);
            const first = seen.get(k);
            if (first !== undefined) {
                ctx.addIssue({
                    code: "custom",
                    path: [index],
                    message: `duplicate ${what} ${describeValue(k)} (already at index ${first})`,
                    input: item,
                });
            } else {
                seen.set(k, index);
            }
        });
    };
}

// ---------------------------------------------------------------- cluster

export const clusterSchema = z
    .strictObject({
        name: dnsLabel().meta({ description: "Cluster name: used in resource names, tags and labels." }),
        platform: z
            .enum(["openshift", "kubernetes"])
            .meta({ description: "Cluster flavour: `openshift` enables service-ca, console samples and OpenShift reads." }),
        renderYamlToDirectory: nonEmpty().optional().meta({
            description:
                "When set, the Kubernetes provider writes manifests to this directory instead of applying them; the program then makes no cluster reads and declares no server-side-apply patches.",
        }),
        kubeContext: nonEmpty().optional().meta({
            description:
                "Live stacks name their cluster with exactly one of kubeContext, kubeconfig or inCluster. kubeContext: the context, in the kubeconfig the admin's environment selects (`KUBECONFIG`, else `~/.kube/config`), of this stack's cluster.",
        }),
        kubeconfig: nonEmpty().optional().meta({
            description:
                "Path of a kubeconfig file (relative to the project) whose current context is this stack's cluster; the provider gets the file's contents as a secret (encrypted in state), never the path, so every runner of the checkout configures it alike.",
        }),
        inCluster: z.boolean().optional().meta({
            description:
                "`true`: the program runs in a pod of this cluster (e.g. a Pulumi Kubernetes Operator workspace) and uses the pod's service account (client-go's in-cluster config); no kubeconfig is read.",
        }),
        runByOperator: z.boolean().default(false).meta({
            description:
                "Set by the reconcile Stack for PKO's runs (never by hand): such a run may not turn reconcile off, which needs a run by hand.",
        }),
    })
    .meta({
        description: "The cluster this stack governs: `{name, platform, renderYamlToDirectory?, kubeContext? | kubeconfig? | inCluster?}`.",
    });

// ---------------------------------------------------------------- certificates

const issuerSchema = z
    .strictObject({
        kind: z.enum(["Issuer", "ClusterIssuer"]).meta({ description: "cert-manager issuer kind." }),
        name: dnsSubdomain().meta({ description: "Name of an existing cert-manager issuer." }),
    })
    .meta({ description: "The cert-manager issuer that signs serving certificates (mode cert-manager)." });

const DAYS = z.number().int().min(1).max(36500);
const validityDays = (fallback: number, description: string) => DAYS.default(fallback).meta({ description });
/** Cross-field rules compare only values that passed their own checks, so one mistake is one problem. */
const validDays = (...values: unknown[]) => values.every((v) => DAYS.safeParse(v).success);

export const certificatesSchema = z
    .strictObject({
        mode: z.enum(CERTIFICATE_MODES).default("self-signed").meta({
            description:
                "Who issues serving certificates and CA bundles: the stack's own CA, OpenShift's service-ca operator, or cert-manager.",
        }),
        caValidityDays: validityDays(790, "Validity of the stack's CA certificate, in days (self-signed mode)."),
        certValidityDays: validityDays(730, "Validity of each serving certificate, in days."),
        renewBeforeDays: validityDays(30, "Renew a certificate this many days before it expires."),
        issuer: issuerSchema.optional(),
    })
    .superRefine((c, ctx) => {
        if (c.mode === "cert-manager" && !c.issuer) {
            ctx.addIssue({ code: "custom", path: ["issuer"], message: 'is required when mode is "cert-manager"' });
        }
        if (c.mode !== "cert-manager" && c.issuer) {
            ctx.addIssue({
                code: "custom",
                path: ["issuer"],
                message: `is only used when mode is "cert-manager" (mode is ${describeValue(c.mode)})`,
            });
        }
        if (validDays(c.renewBeforeDays, c.certValidityDays) && c.renewBeforeDays >= c.certValidityDays) {
            ctx.addIssue({
                code: "custom",
                path: ["renewBeforeDays"],
                message: `${c.renewBeforeDays} must be less than certValidityDays (${c.certValidityDays})`,
            });
        }
        if (validDays(c.certValidityDays, c.caValidityDays) && c.certValidityDays > c.caValidityDays) {
            ctx.addIssue({
                code: "custom",
                path: ["certValidityDays"],
                message: `${c.certValidityDays} must not exceed caValidityDays (${c.caValidityDays}): a serving certificate must not outlive its CA`,
            });
        }
    })
    .meta({
        description: "Certificates for webhooks and services: `{mode, caValidityDays, certValidityDays, renewBeforeDays, issuer?}`.",
    });

// ---------------------------------------------------------------- caInjection

/** The kinds that receive a CA bundle (seed 001), and whether each is namespaced. */
export const CA_INJECTION_KINDS = Object.fromEntries(INJECTABLE_KINDS.map((kind) => [kind, INJECTION_TARGETS[kind].namespaced])) as {
    readonly [K in InjectableKind]: (typeof INJECTION_TARGETS)[K]["namespaced"];
};

const namespacedName = (description: string) => ruled((v) => NAMESPACED_NAME.test(v), NAMESPACED_NAME_RULE).meta({ description });

/** Where the right CA of an existing object comes from (self-signed mode; see `CaSource` in certificates/rules.ts). */
const caSourceSchema = z
    .strictObject({
        issue: z
            .strictObject({
                service: namespacedName(
                    "`<namespace>/<name>` of the object's backend Service, whose serving certificate the stack issues.",
                ),
                secretName: dnsSubdomain().meta({
                    description:
                        "The `kubernetes.io/tls` Secret, in the Service's namespace, the stack writes that certificate to (mount it in the backend).",
                }),
            })
            .optional()
            .meta({ description: "The stack issues the backend Service's serving certificate, so its own CA is the right one." }),
        configMap: z
            .strictObject({
                name: namespacedName("`<namespace>/<name>` of the ConfigMap holding the CA that signs the backend's certificate."),
                key: nonEmpty().meta({ description: "The key of that ConfigMap holding the PEM CA bundle." }),
            })
            .optional()
            .meta({ description: "The CA is read from a ConfigMap (e.g. another team's published CA)." }),
    })
    .superRefine((source, ctx) => {
        if ((source.issue === undefined) === (source.configMap === undefined)) {
            ctx.addIssue({ code: "custom", message: "must set exactly one of issue and configMap" });
        }
    })
    .meta({
        description:
            "Self-signed mode, for an object that calls a backend (APIService, webhook-converted CRD, webhook configuration): where its right CA comes from, `{issue: {service, secretName}}` or `{configMap: {name, key}}`; such an object without it is refused, naming its backend.",
    });

export const caInjectionSchema = z
    .array(
        z
            .strictObject({
                kind: z
                    .enum(INJECTABLE_KINDS as [InjectableKind, ...InjectableKind[]])
                    .meta({ description: "Kind of the existing object that receives the CA bundle." }),
                name: dnsSubdomain().meta({ description: "Name of the existing object." }),
                namespace: dnsLabel().optional().meta({ description: "Namespace of the object (ConfigMap only)." }),
                certificate: ruled((v) => NAMESPACED_NAME.test(v), NAMESPACED_NAME_RULE)
                    .optional()
                    .meta({
                        description:
                            "cert-manager mode only: `<namespace>/<name>` of the cert-manager Certificate whose CA cainjector injects into the object.",
                    }),
                caSource: caSourceSchema.optional(),
            })
            .superRefine((entry, ctx) => {
                const namespaced = CA_INJECTION_KINDS[entry.kind];
                if (namespaced && !entry.namespace) {
                    ctx.addIssue({
                        code: "custom",
                        path: ["namespace"],
                        message: `is required: ${entry.kind} ${describeValue(entry.name)} is namespaced`,
                    });
                }
                if (!namespaced && entry.namespace) {
                    ctx.addIssue({
                        code: "custom",
                        path: ["namespace"],
                        message: `must not be set: ${entry.kind} ${describeValue(entry.name)} is cluster-scoped`,
                    });
                }
            }),
    )
    .default([])
    .superRefine(unique((e) => `${e.kind}/${e.namespace ?? ""}/${e.name}`, "caInjection entry"))
    .meta({
        description:
            "Existing cluster objects that receive the CA bundle, each `{kind, name, namespace?, certificate?, caSource?}` (APIService, ConfigMap, CustomResourceDefinition, Mutating/ValidatingWebhookConfiguration).",
    });

// ---------------------------------------------------------------- subscriptions

/** Webhook timeouts above this are refused: the platform's one limit, which the pre-flight and the k8s-rbac policy apply too. */
export { MAX_WEBHOOK_TIMEOUT_SECONDS };
export { DEFAULT_AGGREGATION_ROLES };

/** `subscriptions.sharedResourceDriver` when it is not given. */
export const SHARED_RESOURCE_DRIVER_DEFAULTS = { serviceAccount: DRIVER_SERVICE_ACCOUNTS.buildsForOpenShift };

/** Adds the issues a pure rule found, at their paths. */
function report(ctx: z.RefinementCtx, issues: RuleIssue[]): void {
    for (const issue of issues) {
        ctx.addIssue({ code: "custom", path: issue.path, message: issue.message });
    }
}

// Names and lists of bundles are plain shapes here: their rules (DNS-1123, non-empty,
// namespace-local Bundles, generated names) are in components/subscriptions/rules.ts, which
// judges each bundle as a whole so every message names the bundle.
const clusterRef = (what: string) =>
    z.strictObject({
        name: z.string().meta({ description: `Name of the ${what}.` }),
        namespace: z.string().meta({ description: `Namespace of the ${what}.` }),
    });

const localRef = (what: string) =>
    z.strictObject({
        name: z.string().meta({ description: `Name of the ${what}.` }),
        namespace: z
            .string()
            .optional()
            .meta({ description: `Namespace of the ${what}: omit it, or give the bundle's own namespace (a Bundle is namespace-local).` }),
    });

const bundleCommon = {
    name: z.string().meta({ description: "Bundle name (DNS-1123 subdomain)." }),
    alwaysInject: z.boolean().default(false).meta({ description: 'Label the bundle `subscription.openshift.io/always-inject: "true"`.' }),
};

const clusterBundleSchema = z
    .strictObject({
        ...bundleCommon,
        entitlements: z
            .array(clusterRef("entitlement Secret"))
            .meta({ description: "Secrets holding entitlement keys, each `{name, namespace}` (at least one)." }),
        yumRepositories: z
            .array(clusterRef("yum repository ConfigMap"))
            .default([])
            .meta({ description: "ConfigMaps holding `.repo` files, each `{name, namespace}`." }),
        aggregateToClusterRoles: z.array(z.string()).default([]).meta({
            description:
                "Cluster roles the bundle's generated ClusterRole aggregates to (admin, edit, view, or roles in allowedAggregationRoles).",
        }),
    })
    .superRefine((bundle, ctx) => report(ctx, clusterBundleIssues(bundle)));

const bundleSchema = z
    .strictObject({
        ...bundleCommon,
        namespace: z.string().meta({ description: "Namespace of the Bundle." }),
        entitlements: z
            .array(localRef("entitlement Secret"))
            .meta({ description: "Secrets in the bundle's namespace holding entitlement keys (at least one)." }),
        yumRepositories: z
            .array(localRef("yum repository ConfigMap"))
            .default([])
            .meta({ description: "ConfigMaps in the bundle's namespace holding `.repo` files." }),
    })
    .superRefine((bundle, ctx) => report(ctx, bundleIssues(bundle)));

export const subscriptionsSchema = z
    .strictObject({
        enabled: z.boolean().default(false).meta({ description: "Install subscription injection (seed 000)." }),
        namespace: dnsLabel().default("subscription-injection").meta({ description: "Namespace of the subscription injection webhook." }),
        sourceNamespace: dnsLabel().default(DEFAULT_SOURCE_NAMESPACE).meta({
            description:
                "Namespace the stack creates for the copies of the Secrets and ConfigMaps ClusterBundles share, which the Shared Resource CSI driver reads (never the originals' namespaces); not a platform namespace.",
        }),
        removedShares: z.enum(REMOVED_SHARES_POLICIES).default("keepWhileInUse").meta({
            description:
                "Shares an update no longer declares (a ClusterBundle or reference removed or renamed): `keepWhileInUse` keeps them until no running pod mounts them; `deleteAtOnce` deletes them (running pods lose those files).",
        }),
        webhook: withFieldDefaults(
            z.strictObject({
                replicas: z.number().int().min(1).max(50).default(3).meta({ description: "Webhook replicas." }),
                failurePolicy: z
                    .enum(["Fail", "Ignore"])
                    .default("Fail")
                    .meta({ description: "What the API server does when the webhook cannot answer." }),
                timeoutSeconds: z
                    .number()
                    .int()
                    .min(1)
                    .max(MAX_WEBHOOK_TIMEOUT_SECONDS)
                    .default(DEFAULT_WEBHOOK_TIMEOUT_SECONDS)
                    .meta({
                        description: `Admission timeout, 1-${MAX_WEBHOOK_TIMEOUT_SECONDS} seconds (the platform's one webhook-timeout limit).`,
                    }),
                image: nonEmpty().optional().meta({
                    description:
                        "Webhook image reference; default: `<webhookImage.repository>@sha256:<digest>` of the image this stack builds.",
                }),
                excludedNamespaces: z.array(dnsLabel()).default([]).meta({
                    description:
                        "Namespaces whose pods the webhook never sees, beyond its own, the control plane's, the certificate issuer's, the Shared Resource CSI driver's and (OpenShift) the platform's.",
                }),
                readNamespaces: z.array(dnsLabel()).default([]).meta({
                    description:
                        "Namespaces whose Secrets and ConfigMaps the webhook may list namespace-wide (for teams' Bundles there with other names than etc-pki-entitlement); never a platform namespace. Elsewhere it reads each referenced object by name.",
                }),
                readAllNamespaces: z.boolean().default(false).meta({
                    description:
                        "Refused when true (it would let the webhook list every Secret of every namespace, the platform's included); teams' Bundles are read by name.",
                }),
            }),
        )
            .superRefine((w, ctx) => {
                const replicasValid = Number.isInteger(w.replicas) && w.replicas >= 1;
                if (w.failurePolicy === "Fail" && replicasValid && w.replicas < MIN_FAIL_CLOSED_REPLICAS) {
                    ctx.addIssue({
                        code: "custom",
                        path: ["replicas"],
                        message: `${w.replicas} is too few: failurePolicy "Fail" needs at least ${MIN_FAIL_CLOSED_REPLICAS} replicas so one pod's restart cannot block every pod creation`,
                    });
                }
            })
            .meta({
                description:
                    "The webhook's deployment and access: `{replicas, failurePolicy, timeoutSeconds, image?, excludedNamespaces, readNamespaces, readAllNamespaces}`.",
            }),
        clusterBundles: z
            .array(clusterBundleSchema)
            .default([])
            .superRefine(unique((b) => b.name, "ClusterBundle name"))
            .meta({
                description:
                    "ClusterBundles to declare, each `{name, alwaysInject, entitlements, yumRepositories, aggregateToClusterRoles}`.",
            }),
        bundles: z
            .array(bundleSchema)
            .default([])
            .superRefine(unique((b) => `${b.namespace}/${b.name}`, "Bundle"))
            .meta({ description: "Namespaced Bundles to declare, each `{name, namespace, alwaysInject, entitlements, yumRepositories}`." }),
        allowedAggregationRoles: z
            .array(dnsSubdomain())
            .default([])
            .meta({ description: "Cluster roles, beyond admin, edit and view, that ClusterBundles may aggregate to." }),
        sharedResourceDriver: withFieldDefaults(
            z.strictObject({
                serviceAccount: z
                    .strictObject({
                        name: dnsSubdomain().meta({ description: "Name of the driver's service account." }),
                        namespace: dnsLabel().meta({ description: "Namespace of the driver's service account." }),
                    })
                    .default({ ...SHARED_RESOURCE_DRIVER_DEFAULTS.serviceAccount })
                    .meta({
                        description:
                            "The Shared Resource CSI driver's service account, which gets read access to each shared Secret/ConfigMap. Default: Builds for OpenShift's `openshift-builds/csi-driver-shared-resource`; OpenShift 4.10-4.17 Tech Preview: `openshift-cluster-csi-drivers/csi-driver-shared-resource-plugin`.",
                    }),
            }),
        ).meta({ description: "The Shared Resource CSI driver that mounts ClusterBundles: `{serviceAccount:{name, namespace}}`." }),
    })
    .superRefine((s, ctx) => {
        report(ctx, aggregationRoleIssues(s.clusterBundles, s.allowedAggregationRoles));
        report(
            ctx,
            sourceNamespaceIssues({
                ...s,
                driverNamespace: s.sharedResourceDriver.serviceAccount.namespace,
                readNamespaces: s.webhook.readNamespaces,
                readAllNamespaces: s.webhook.readAllNamespaces,
            }),
        );
    })
    .meta({
        description:
            "Subscription injection: `{enabled, namespace, sourceNamespace, removedShares, webhook:{replicas, failurePolicy, timeoutSeconds, image?, excludedNamespaces, readNamespaces, readAllNamespaces}, clusterBundles, bundles, allowedAggregationRoles, sharedResourceDriver}`.",
    });

// ---------------------------------------------------------------- olm

export const olmSchema = z
    .strictObject({
        disableOLMAggregateCRDRoles: z.boolean().default(false).meta({
            description: "Do not declare OLM's aggregate-olm-edit and aggregate-olm-view ClusterRoles (OLM itself may still keep them).",
        }),
        disableAggregateCRDRoles: z.boolean().default(false).meta({
            description: "Do not declare the per-CRD admin/edit/view/crdview aggregate ClusterRoles for the operators this stack installs.",
        }),
        disableAllNamespacePermissionPromotion: z.boolean().default(false).meta({
            description: "Do not promote the namespaced permissions of the AllNamespaces operators this stack installs to cluster scope.",
        }),
        manageOLMConfig: z
            .boolean()
            .default(false)
            .meta({ description: "On clusters that run OLM, server-side-apply OLMConfig/cluster as the toggles require." }),
    })
    .meta({
        description:
            "OLM RBAC toggles (seed 003) for the operators this stack installs, not for operators OLM manages (see `npm run olm:toggle-report`): `{disableOLMAggregateCRDRoles, disableAggregateCRDRoles, disableAllNamespacePermissionPromotion, manageOLMConfig}`.",
    });

// ---------------------------------------------------------------- operators

const operatorCertificatesSchema = z
    .strictObject({
        mode: z.enum(CERTIFICATE_MODES).optional().meta({ description: "Certificate mode for this operator's webhooks." }),
        issuer: issuerSchema.optional(),
    })
    .superRefine((c, ctx) => {
        if (c.mode === "cert-manager" && !c.issuer) {
            ctx.addIssue({ code: "custom", path: ["issuer"], message: 'is required when mode is "cert-manager"' });
        }
    });

/**
 * Operators sharing a namespace share what OLM keeps per namespace (one OperatorGroup: the
 * target namespaces) and the Namespace object itself (created once, or not at all).
 */
function sharedNamespaceRules(
    operators: { name: string; namespace: string; targetNamespaces: string[]; createNamespace: boolean }[],
    ctx: z.RefinementCtx,
) {
    const first = new Map<string, number>();
    operators.forEach((op, i) => {
        const j = first.get(op.namespace);
        if (j === undefined) {
            first.set(op.namespace, i);
            return;
        }
        const other = operators[j];
        const same = (a: string[], b: string[]) => [...a].sort().join(",") === [...b].sort().join(",");
        if (!same(op.targetNamespaces, other.targetNamespaces)) {
            ctx.addIssue({
                code: "custom",
                path: [i, "targetNamespaces"],
                message: `operator ${describeValue(op.name)}: ${describeValue(op.targetNamespaces)} differs from operator ${describeValue(other.name)} (operators[${j}]) in the same namespace ${describeValue(op.namespace)}: OLM allows one OperatorGroup, so one set of target namespaces, per namespace`,
            });
        }
        if (op.createNamespace !== other.createNamespace) {
            ctx.addIssue({
                code: "custom",
                path: [i, "createNamespace"],
                message: `operator ${describeValue(op.name)}: ${op.createNamespace} differs from operator ${describeValue(other.name)} (operators[${j}]) in the same namespace ${describeValue(op.namespace)}: the namespace is either created by the stack or not`,
            });
        }
    });
}

const keyRef = (what: string) =>
    z.strictObject({
        name: dnsSubdomain().meta({ description: `Name of the ${what} in the operator's namespace.` }),
        key: nonEmpty().meta({ description: `Key within the ${what}.` }),
        optional: z
            .boolean()
            .optional()
            .meta({ description: `Whether the ${what} or its key may be missing.` }),
    });

const podEnvSchema = z
    .strictObject({
        name: ruled(isEnvVarName, ENV_VAR_NAME_RULE)
            .superRefine((name, ctx) => {
                if ((STACK_ENV_NAMES as readonly string[]).includes(name)) {
                    ctx.addIssue({
                        code: "custom",
                        message: `${describeValue(name)} is set by the stack on every container (OLM's environment); it cannot be overridden`,
                        input: name,
                    });
                }
            })
            .meta({ description: "Variable name." }),
        value: z.string().optional().meta({ description: "Literal value (stored in stack state as it is: use valueFrom for secrets)." }),
        valueFrom: z
            .union([z.strictObject({ secretKeyRef: keyRef("Secret") }), z.strictObject({ configMapKeyRef: keyRef("ConfigMap") })])
            .optional()
            .meta({ description: "A key of a Secret or ConfigMap in the operator's namespace: `{secretKeyRef}` or `{configMapKeyRef}`." }),
    })
    .superRefine((env, ctx) => {
        if ((env.value === undefined) === (env.valueFrom === undefined)) {
            ctx.addIssue({ code: "custom", message: `${describeValue(env.name)}: exactly one of value and valueFrom must be set` });
        }
    });

const tolerationSchema = z
    .strictObject({
        key: z
            .string()
            .optional()
            .superRefine((key, ctx) => {
                if (key !== undefined && key !== "" && !isLabelKey(key)) {
                    ctx.addIssue({ code: "custom", message: `${describeValue(key)} ${LABEL_KEY_RULE}`, input: key });
                }
            })
            .meta({ description: "Taint key; empty with operator Exists matches every taint." }),
        operator: z
            .enum(["Exists", "Equal"])
            .optional()
            .meta({ description: "Exists or Equal (the API server treats an absent operator as Equal)." }),
        value: z.string().optional().meta({ description: "Taint value (operator Equal)." }),
        effect: z
            .enum(["NoSchedule", "PreferNoSchedule", "NoExecute"])
            .optional()
            .meta({ description: "Taint effect; empty matches all." }),
        tolerationSeconds: z
            .number()
            .int()
            .optional()
            .meta({ description: "For effect NoExecute: how long the pod stays bound after the taint." }),
    })
    // The API server's rules (kubernetes `pkg/apis/core/validation/validation.go`, `ValidateTolerations`).
    .superRefine((t, ctx) => {
        if ((t.key ?? "") === "" && t.operator !== "Exists") {
            ctx.addIssue({
                code: "custom",
                path: ["operator"],
                message: `${describeValue(t.operator ?? "Equal")}: operator must be Exists when key is empty`,
            });
        }
        if (t.operator === "Exists" && (t.value ?? "") !== "") {
            ctx.addIssue({
                code: "custom",
                path: ["value"],
                message: `${describeValue(t.value)}: value must be empty when operator is Exists`,
            });
        }
        if (t.tolerationSeconds !== undefined && t.effect !== "NoExecute") {
            ctx.addIssue({
                code: "custom",
                path: ["effect"],
                message: `${describeValue(t.effect ?? "")}: effect must be NoExecute when tolerationSeconds is set`,
            });
        }
    });

/** A map keyed by label keys (resource names are label keys too): each bad key reported with the rule. */
const labelKeyed = <V extends z.ZodType>(value: V) =>
    z.record(z.string(), value).superRefine((record, ctx) => {
        for (const key of Object.keys(record).filter((k) => !isLabelKey(k))) {
            ctx.addIssue({ code: "custom", path: [key], message: `key ${describeValue(key)} ${LABEL_KEY_RULE}`, input: key });
        }
    });

const quantities = (what: string) =>
    labelKeyed(ruled(isQuantity, QUANTITY_RULE)).meta({ description: `${what} by resource name (cpu, memory, ...).` });

/** OLM's Subscription `spec.config`, the fields this stack applies (components/operator/pod-overrides.ts). */
export const podOverridesSchema = z
    .strictObject({
        nodeSelector: labelKeyed(ruled(isLabelValue, LABEL_VALUE_RULE))
            .optional()
            .meta({ description: "Replaces each pod's nodeSelector." }),
        tolerations: z
            .array(tolerationSchema)
            .optional()
            .meta({ description: "Appended to each pod's tolerations (an identical one is not repeated)." }),
        resources: z
            .strictObject({ limits: quantities("Limits").optional(), requests: quantities("Requests").optional() })
            .optional()
            .meta({ description: "Replaces every container's resources: `{limits?, requests?}`." }),
        replicas: z.number().int().min(1).max(50).optional().meta({
            description:
                "Replaces every Deployment's spec.replicas. Not in OLM's Subscription config: the stack's own, for a bundle that runs one pod behind webhooks that fail closed.",
        }),
        env: z
            .array(podEnvSchema)
            .optional()
            .superRefine((env, ctx) => (env ? unique((e: { name: string }) => e.name, "environment variable")(env, ctx) : undefined))
            .meta({
                description: "Set on every container, replacing a variable of the same name: `{name, value}` or `{name, valueFrom}`.",
            }),
    })
    .meta({
        description:
            "Pod overrides as OLM's Subscription spec.config, on every container of every Deployment of the operator, and the stack's own replicas: `{nodeSelector?, tolerations?, resources?, env?, replicas?}`.",
    });
export type PodOverridesConfig = z.infer<typeof podOverridesSchema>;

/** A previous name is nobody's name now, nor another install's previous name: its URNs would belong to two installs. */
function previousNameRules(operators: { name: string; previousNames?: string[] }[], ctx: z.RefinementCtx) {
    const claimed = new Map<string, string>();
    operators.forEach((op) => claimed.set(op.name, `the name of operator ${describeValue(op.name)}`));
    operators.forEach((op, i) => {
        (op.previousNames ?? []).forEach((old, j) => {
            const other = claimed.get(old);
            if (other !== undefined) {
                ctx.addIssue({
                    code: "custom",
                    path: [i, "previousNames", j],
                    message: `operator ${describeValue(op.name)}: previous name ${describeValue(old)} is already ${other}; a previous name must belong to one install only`,
                });
            } else {
                claimed.set(old, `a previous name of operator ${describeValue(op.name)}`);
            }
        });
    });
}

export const operatorsSchema = z
    .array(
        z.strictObject({
            name: dnsLabel().meta({ description: "Operator install name." }),
            csv: nonEmpty().meta({
                description:
                    "Path of the ClusterServiceVersion YAML (relative to the project), as shipped in the bundle; CRD manifests in the same folder are installed with it.",
            }),
            previousNames: z
                .array(dnsLabel())
                .optional()
                .superRefine((names, ctx) => (names ? unique((n: string) => n, "previous name")(names, ctx) : undefined))
                .meta({
                    description:
                        "Names this install had before, oldest first: its resources are aliased from them, so a rename updates them in place. Keep the oldest: the webhook generation ConfigMap is named after it.",
                }),
            namespace: dnsLabel().meta({ description: "Namespace the operator runs in." }),
            createNamespace: z
                .boolean()
                .default(true)
                .meta({ description: "Create the namespace (false when it exists already, e.g. openshift-operators)." }),
            targetNamespaces: z
                .array(dnsLabel())
                .default([])
                .superRefine(unique((n) => n, "target namespace"))
                .meta({ description: "Namespaces the operator watches; [] means AllNamespaces." }),
            rbacNamespaces: z
                .array(dnsLabel())
                .optional()
                .superRefine((names, ctx) => (names ? unique((n: string) => n, "RBAC namespace")(names, ctx) : undefined))
                .meta({
                    description:
                        "With disableAllNamespacePermissionPromotion and AllNamespaces: the namespaces that get the operator's Roles and WATCH_NAMESPACE.",
                }),
            certificates: operatorCertificatesSchema
                .optional()
                .meta({ description: "Overrides of the stack's certificates settings for this operator: `{mode?, issuer?}`." }),
            config: podOverridesSchema.optional(),
            deleteCrdsOnRemoval: z.boolean().default(false).meta({
                description:
                    "Delete the operator's CRDs, and every custom resource in them, when it is removed from config or the stack is destroyed (default: kept, retainOnDelete). Takes effect after one `pulumi up` with it set.",
            }),
        }),
    )
    .default([])
    .superRefine(unique((o) => o.name, "operator name"))
    .superRefine(previousNameRules)
    .superRefine(sharedNamespaceRules)
    .meta({
        description:
            "Operators to install from ClusterServiceVersions, each `{name, previousNames?, csv, namespace, createNamespace, targetNamespaces, rbacNamespaces?, certificates?, config?, deleteCrdsOnRemoval}`.",
    });

// ---------------------------------------------------------------- aws

const AWS_REGION = /^[a-z]{2}(-[a-z]+)+-\d+$/;
const IAM_OIDC_PROVIDER_ARN = /^arn:aws(-[a-z]+)*:iam::\d{12}:oidc-provider\/[^\s]+$/;
/** An IAM role or user (never `:root`, never a wildcard): the one principal a trust policy may name. */
const IAM_ROLE_OR_USER_ARN = /^arn:aws(-[a-z]+)*:iam::\d{12}:(role|user)\/[\w+=,.@/-]+$/;
const IAM_PRINCIPAL_RULE =
    'is not an IAM role or user ARN such as "arn:aws:iam::123456789012:role/registry-admin" (an account root, "*" or another principal would let a whole account assume the role)';

/** A tag value: a string, or a YAML integer or boolean read as its text (see `tagValueText`). */
const userTagValue = z.union([z.string(), z.number(), z.boolean()]).transform((value, ctx) => {
    const text = tagValueText(value);
    if (!text.ok) {
        ctx.addIssue({ code: "custom", message: text.problem, input: value });
        return z.NEVER;
    }
    return text.text;
});

const awsFields = {
    enabled: z.boolean().default(false).meta({ description: "Create and tag the stack's AWS assets." }),
    region: ruled((r) => AWS_REGION.test(r), 'is not an AWS region name such as "us-east-1"')
        .optional()
        .meta({ description: "AWS region of the cluster's assets (required when enabled)." }),
    userTags: z
        .record(z.string(), userTagValue)
        // prefault, not default: the values are transformed, and only a prefault is documented for input.
        .prefault({})
        .superRefine(
            (tags, ctx) => {
                for (const issue of userTagIssues(tags)) {
                    ctx.addIssue({ code: "custom", path: issue.key === undefined ? [] : [issue.key], message: issue.message });
                }
            },
            // Key rules are checked even when some value could not be read, so every problem is reported at once.
            { when: (payload) => typeof payload.value === "object" && payload.value !== null },
        )
        .meta({
            description:
                "User-defined tags applied to every taggable AWS resource (at most 25; keys and values of letters, digits, spaces and `_ . : / = + - @`; no `Name`, `aws:`, kubernetes.io or openshift.io keys). Unquoted YAML integers and booleans are read as their text, with a warning.",
        }),
    propagateUserTags: z.boolean().optional().meta({
        description:
            "Propagate aws.userTags to what the cluster creates in AWS: on OpenShift, server-side-applied to Infrastructure/cluster spec.platformSpec.aws.resourceTags for its own operators (when the cluster's API has that field); the gp3-csi-tagged StorageClass and LoadBalancer Services the stack declares. Omitted means true (seed 004).",
    }),
    experimentalPropagateUserTags: z
        .boolean()
        .optional()
        .meta({ description: "Deprecated spelling of propagateUserTags; wins over it when both are set (with a deprecation warning)." }),
    oidcProviderArn: ruled(
        (a) => IAM_OIDC_PROVIDER_ARN.test(a),
        'is not an IAM OIDC provider ARN such as "arn:aws:iam::123456789012:oidc-provider/oidc.example.com/cluster"',
    )
        .optional()
        .meta({
            description:
                "IAM OIDC provider of the cluster's service-account issuer (OpenShift STS, ROSA): the image registry role trusts the registry's service accounts through it (web identity).",
        }),
    imageRegistryStorage: z
        .strictObject({
            enabled: z
                .boolean()
                .default(false)
                .meta({ description: "Create the image registry's S3 bucket, KMS key, IAM role and policy." }),
            trustedPrincipalArn: ruled((a) => IAM_ROLE_OR_USER_ARN.test(a), IAM_PRINCIPAL_RULE)
                .optional()
                .meta({
                    description:
                        "Without aws.oidcProviderArn: the one IAM role or user that may assume the registry role (`arn:aws:iam::<account>:role/<name>` or `:user/<name>`; never an account root).",
                }),
        })
        .prefault({})
        .meta({
            description:
                "Image registry storage `{enabled, trustedPrincipalArn?}`, off by default. Its role trusts aws.oidcProviderArn's registry service accounts, or trustedPrincipalArn: exactly one of the two.",
        }),
    ignoreTags: z
        .strictObject({
            keys: z
                .array(nonEmpty())
                .default([])
                .superRefine(unique((k: string) => k, "key"))
                .meta({ description: "Tag keys other tools manage: the AWS provider neither removes them nor shows them as drift." }),
            keyPrefixes: z
                .array(nonEmpty())
                .default([])
                .superRefine(unique((k: string) => k, "key prefix"))
                .meta({ description: "Tag key prefixes other tools manage, as keys." }),
        })
        .prefault({})
        .meta({
            description:
                "The AWS provider's ignoreTags `{keys, keyPrefixes}`: tags other tools (cost allocation, scanners) add are neither removed by `pulumi up --refresh` nor shown as drift. Must not cover a tag the stack sets.",
        }),
};

/** The `aws` keys, in declaration order (the raw section's keys are matched to them case-insensitively). */
export const AWS_KEYS = Object.keys(awsFields);

export const awsSchema = z
    .strictObject(awsFields)
    .superRefine((a, ctx) => {
        if (a.enabled && !a.region) {
            ctx.addIssue({ code: "custom", path: ["region"], message: "is required when aws.enabled is true" });
        }
        for (const problem of registryTrustProblems(a)) {
            ctx.addIssue({ code: "custom", path: problem.path, message: problem.message });
        }
    })
    .meta({
        description:
            "AWS assets and tags (seed 004): `{enabled, region, userTags, propagateUserTags?, experimentalPropagateUserTags?, oidcProviderArn?, imageRegistryStorage, ignoreTags}`.",
    });

// ---------------------------------------------------------------- webhookImage

export const webhookImageSchema = z
    .strictObject({
        repository: checked(repositoryProblem).default(DEFAULT_WEBHOOK_REPOSITORY).meta({
            description:
                "Image repository `[host[:port]/]path`. Output registry: where the image is pushed (without a host and with aws.enabled, the stack's ECR repository instead). Output oci-layout: the name the image is pushed under later; the layout is written to `out/oci/<repository>`.",
        }),
        baseImage: checked(baseImageProblem).default(DEFAULT_BASE_IMAGE).meta({
            description:
                "Base image with Node.js, pinned by digest (`name[:tag]@sha256:...`); the default is distroless Node.js 22 (nonroot).",
        }),
        output: z.enum(["registry", "oci-layout"]).optional().meta({
            description:
                "Push to `repository` through the registry API, or write an OCI image layout directory (`out/oci/<repository>`). Default: `registry` for a live stack (the cluster must pull the image), `oci-layout` with cluster.renderYamlToDirectory.",
        }),
        platforms: z
            .array(checked((p) => (parsePlatform(p) === undefined ? PLATFORM_RULE : undefined)))
            .min(1)
            .default([...DEFAULT_PLATFORMS])
            .superRefine(unique((p) => p, "platform"))
            .meta({
                description: 'Platforms to build for, e.g. `["linux/amd64", "linux/arm64"]`; several give a multi-platform image index.',
            }),
        deleteOnDestroy: z.boolean().default(false).meta({
            description:
                "Delete the image from the registry when the stack deletes it; by default images stay (running pods and rollbacks pull them).",
        }),
    })
    .meta({
        description:
            "The subscription webhook image the stack builds: `{repository, baseImage, output?: registry|oci-layout, platforms, deleteOnDestroy}`.",
    });

// ---------------------------------------------------------------- reconcile

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const GIT_COMMIT = /^[0-9a-f]{40}$/;

const secretKeyRef = (what: string) =>
    z.strictObject({
        name: dnsSubdomain().meta({ description: `Name of the Secret (in reconcile.namespace) holding ${what}.` }),
        key: nonEmpty().meta({ description: "Key within the Secret." }),
    });

export const reconcileSchema = z
    .strictObject({
        enabled: z.boolean().default(false).meta({
            description: "Install a Pulumi Kubernetes Operator Stack that runs this stack on a schedule from inside the cluster.",
        }),
        namespace: dnsLabel()
            .default("cluster-platform-reconcile")
            .meta({ description: "Namespace of the PKO Stack, its ServiceAccount and the Secrets `environment` names." }),
        createNamespace: z.boolean().default(true).meta({
            description:
                "Create the namespace (false when it exists already). A created namespace is kept on delete: it holds the admin's Secrets.",
        }),
        operatorNamespace: dnsLabel().default("pulumi-kubernetes-operator").meta({
            description:
                "Namespace PKO itself runs in, as its install names it; the stack's webhooks never gate its pods, nor reconcile.namespace's.",
        }),
        stack: nonEmpty()
            .optional()
            .meta({ description: "Fully qualified stack PKO runs (`<org>/<project>/<stack>`); default: this stack." }),
        git: z
            .strictObject({
                repository: nonEmpty().meta({ description: "Git URL of the repository holding this project." }),
                branch: nonEmpty().optional().meta({ description: "Branch to follow (PKO polls it every resync); or `commit`." }),
                commit: ruled((c) => GIT_COMMIT.test(c), "is not a full 40-character commit hash")
                    .optional()
                    .meta({ description: "Commit to run; or `branch`." }),
                directory: nonEmpty().optional().meta({ description: "Directory of Pulumi.yaml in the repository (default: its root)." }),
                shallow: z.boolean().default(false).meta({ description: "Shallow checkout (PKO `shallow`)." }),
                accessTokenSecret: secretKeyRef("a git access token")
                    .optional()
                    .meta({ description: "Secret key holding a personal access token for the repository." }),
            })
            .optional()
            .meta({ description: "Program source from git: `{repository, branch | commit, directory?, shallow, accessTokenSecret?}`." }),
        flux: z
            .strictObject({
                apiVersion: nonEmpty().meta({ description: "apiVersion of the Flux source, e.g. `source.toolkit.fluxcd.io/v1`." }),
                kind: nonEmpty().meta({ description: "Kind of the Flux source, e.g. `GitRepository`." }),
                name: dnsSubdomain().meta({ description: "Name of the Flux source (in reconcile.namespace)." }),
                directory: nonEmpty().optional().meta({ description: "Directory of Pulumi.yaml in the fetched source." }),
            })
            .optional()
            .meta({ description: "Program source from a Flux source object: `{apiVersion, kind, name, directory?}`." }),
        backend: nonEmpty()
            .optional()
            .meta({ description: "Backend URL PKO logs in to (`s3://...`, `https://api.pulumi.com`); default: Pulumi Cloud." }),
        environment: z
            .record(z.string(), secretKeyRef("the value"))
            .default({})
            .superRefine((env, ctx) => {
                for (const name of Object.keys(env)) {
                    if (!ENV_NAME.test(name)) {
                        ctx.addIssue({
                            code: "custom",
                            path: [name],
                            message: `${describeValue(name)} is not an environment variable name (letters, digits, _; not starting with a digit)`,
                        });
                    }
                }
            })
            .meta({
                description:
                    "Environment of PKO's runs from Secrets the admin creates, `{VAR: {name, key}}`: PULUMI_ACCESS_TOKEN or PULUMI_CONFIG_PASSPHRASE, cloud credentials. Values never enter config or state.",
            }),
        resyncFrequencySeconds: z.number().int().min(60).optional().meta({
            description:
                "Seconds between runs; default derived from certificates.renewBeforeDays (at most daily, 12 runs per renewal window).",
        }),
        serviceAccountName: dnsSubdomain()
            .default("cluster-platform-reconcile")
            .meta({ description: "ServiceAccount PKO's workspace runs as (created with the RBAC the program needs)." }),
    })
    .superRefine((r, ctx) => {
        if (!r.enabled) {
            return;
        }
        if ((r.git === undefined) === (r.flux === undefined)) {
            ctx.addIssue({
                code: "custom",
                path: [r.git ? "flux" : "git"],
                message: "exactly one of reconcile.git and reconcile.flux must name the program source when reconcile.enabled is true",
            });
        }
        if (r.git && (r.git.branch === undefined) === (r.git.commit === undefined)) {
            ctx.addIssue({
                code: "custom",
                path: ["git", r.git.branch ? "commit" : "branch"],
                message: "exactly one of branch and commit must be set",
            });
        }
    })
    .meta({
        description:
            "Continuous reconcile through the Pulumi Kubernetes Operator: `{enabled, namespace, createNamespace, operatorNamespace, stack?, git? | flux?, backend?, environment, resyncFrequencySeconds?, serviceAccountName}`.",
    });

// ---------------------------------------------------------------- the whole contract

/** Every top-level key, in documentation order, with its section schema. */
export const SECTIONS = {
    cluster: clusterSchema,
    certificates: withFieldDefaults(certificatesSchema),
    caInjection: caInjectionSchema,
    subscriptions: withFieldDefaults(subscriptionsSchema),
    olm: withFieldDefaults(olmSchema),
    operators: operatorsSchema,
    aws: awsSchema.prefault({ enabled: false, userTags: {} }),
    webhookImage: withFieldDefaults(webhookImageSchema),
    reconcile: withFieldDefaults(reconcileSchema),
} as const;

export type SectionName = keyof typeof SECTIONS;

/**
 * Steps that run on a section's raw value before it is parsed: they may rename keys and
 * return warnings about how the value was read.
 */
export const SECTION_INPUTS: Partial<Record<SectionName, (raw: unknown) => { value: unknown; warnings: string[] }>> = {
    aws: (raw) => normalizeAwsSection(raw, AWS_KEYS),
};
export const SECTION_NAMES = Object.keys(SECTIONS) as SectionName[];

export type StackConfig = { [K in SectionName]: z.output<(typeof SECTIONS)[K]> };
export type ClusterConfig = StackConfig["cluster"];
export type CertificatesConfig = StackConfig["certificates"];
export type CaInjectionConfig = StackConfig["caInjection"];
export type SubscriptionsConfig = StackConfig["subscriptions"];
export type OlmConfig = StackConfig["olm"];
export type OperatorConfig = StackConfig["operators"][number];
export type AwsConfig = StackConfig["aws"];
export type WebhookImageConfig = StackConfig["webhookImage"];
export type ReconcileConfig = StackConfig["reconcile"];
