/**
 * The Bundle and ClusterBundle APIs (seed 000, "Bundle API") as CustomResourceDefinitions with
 * structural OpenAPI v3 schemas. Pure data: the component declares them, the tests validate the
 * seed's example objects against exactly these schemas, and the offline render checks every
 * declared bundle against them.
 */
import {
    ALWAYS_INJECT_LABEL,
    BUNDLE_KIND,
    BUNDLE_PLURAL,
    CLUSTER_BUNDLE_KIND,
    CLUSTER_BUNDLE_PLURAL,
    SHARED_CONFIG_MAP_KIND,
    SHARED_SECRET_KIND,
    SUBSCRIPTION_GROUP,
    SUBSCRIPTION_VERSION,
} from "../../webhook/api";
import { DNS1123_LABEL_PATTERN, DNS1123_SUBDOMAIN_PATTERN } from "../shared/k8s-names";
import { MAX_AGGREGATION_ROLE_LENGTH, MAX_CLUSTER_BUNDLE_NAME_LENGTH } from "./rules";

/** An OpenAPI v3 schema as a CRD carries it (`x-kubernetes-*` extensions under their wire names). */
export type OpenApiSchema = { [key: string]: unknown };

export interface CrdManifest {
    apiVersion: "apiextensions.k8s.io/v1";
    kind: "CustomResourceDefinition";
    metadata: { name: string };
    spec: {
        group: string;
        names: { kind: string; listKind: string; plural: string; singular: string; categories: string[] };
        scope: "Namespaced" | "Cluster";
        versions: {
            name: string;
            served: boolean;
            storage: boolean;
            schema: { openAPIV3Schema: OpenApiSchema };
            subresources: { status: Record<string, never> };
            additionalPrinterColumns: { name: string; type: string; jsonPath: string; description: string; priority?: number }[];
        }[];
    };
}

const name = (description: string): OpenApiSchema => ({
    type: "string",
    description,
    minLength: 1,
    maxLength: 253,
    pattern: DNS1123_SUBDOMAIN_PATTERN,
});

const namespace = (description: string): OpenApiSchema => ({
    type: "string",
    description,
    minLength: 1,
    maxLength: 63,
    pattern: DNS1123_LABEL_PATTERN,
});

/** A list of references; `cluster` references must name their namespace, a Bundle's may omit it. */
function references(what: string, cluster: boolean, description: string, minItems: number): OpenApiSchema {
    return {
        type: "array",
        description,
        ...(minItems > 0 ? { minItems } : {}),
        "x-kubernetes-list-type": "map",
        "x-kubernetes-list-map-keys": cluster ? ["namespace", "name"] : ["name"],
        items: {
            type: "object",
            required: cluster ? ["name", "namespace"] : ["name"],
            properties: {
                name: name(`Name of the ${what}.`),
                namespace: namespace(
                    cluster
                        ? `Namespace of the ${what}.`
                        : `Namespace of the ${what}; if set, it must be the Bundle's own namespace (a Bundle is namespace-local).`,
                ),
            },
        },
    };
}

/** metav1.Condition, with only `type` and `status` required (the seed's examples omit the rest). */
const conditions: OpenApiSchema = {
    type: "array",
    description:
        'Standard conditions. They follow the abnormal-true convention: `Invalid` is "True" when the bundle cannot be injected (a referenced Secret or ConfigMap is missing, or keys overlap) and "False" otherwise.',
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
    items: {
        type: "object",
        required: ["type", "status"],
        properties: {
            type: {
                type: "string",
                description: "Condition type, e.g. `Invalid`.",
                maxLength: 316,
                pattern: "^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$",
            },
            status: { type: "string", description: "True, False or Unknown.", enum: ["True", "False", "Unknown"] },
            reason: {
                type: "string",
                description: "Machine-readable CamelCase reason for the last transition.",
                maxLength: 1024,
                pattern: "^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
            },
            message: { type: "string", description: "Human-readable details of the last transition.", maxLength: 32768 },
            lastTransitionTime: { type: "string", format: "date-time", description: "When the status last changed." },
            observedGeneration: { type: "integer", minimum: 0, description: "The bundle generation the condition describes." },
        },
    },
};

const yumRepositoriesDescription =
    "ConfigMaps holding `.repo` files (e.g. for Red Hat Satellite), mounted under /run/secrets. Keys must not overlap across the bundles a pod injects.";

function bundleSchema(cluster: boolean): OpenApiSchema {
    const kind = cluster ? CLUSTER_BUNDLE_KIND : BUNDLE_KIND;
    const spec: OpenApiSchema = {
        type: "object",
        description: `What the ${kind} injects.`,
        required: ["entitlements"],
        properties: {
            ...(cluster
                ? {
                      aggregateToClusterRoles: {
                          type: "array",
                          description:
                              'Cluster roles the generated ClusterRole `<name>-subscription-bundle` aggregates to, through the `rbac.authorization.k8s.io/aggregate-to-<role>: "true"` label.',
                          "x-kubernetes-list-type": "set",
                          items: {
                              type: "string",
                              minLength: 1,
                              maxLength: MAX_AGGREGATION_ROLE_LENGTH,
                              pattern: DNS1123_SUBDOMAIN_PATTERN,
                          },
                      },
                  }
                : {}),
            entitlements: references(
                "Secret holding entitlement keys",
                cluster,
                "Secrets holding entitlement keys, mounted at /run/secrets/etc-pki-entitlement. Keys must not overlap across the bundles a pod injects.",
                1,
            ),
            yumRepositories: references("ConfigMap holding `.repo` files", cluster, yumRepositoriesDescription, 0),
        },
    };
    const status: OpenApiSchema = {
        type: "object",
        description: `Observed state of the ${kind}.`,
        properties: cluster
            ? {
                  conditions,
                  clusterRole: {
                      type: "string",
                      description: "The generated cluster-scoped ClusterRole, `<name>-subscription-bundle`.",
                  },
                  shares: {
                      type: "array",
                      description: "The generated cluster-scoped shares of the Shared Resource CSI driver, one per reference.",
                      "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      items: {
                          type: "object",
                          required: ["name"],
                          properties: {
                              name: { type: "string", description: "Share name." },
                              kind: {
                                  type: "string",
                                  description: "SharedSecret (entitlements) or SharedConfigMap (yum repositories).",
                                  enum: [SHARED_SECRET_KIND, SHARED_CONFIG_MAP_KIND],
                              },
                          },
                      },
                  },
              }
            : { conditions },
    };
    return {
        type: "object",
        description: cluster
            ? `A cluster-wide subscription bundle: entitlement Secrets and yum repository ConfigMaps from any namespace, shared through the Shared Resource CSI driver with pods annotated \`subscription.openshift.io/inject-cluster-bundle: <name>\` whose service account may get the bundle. Label it \`${ALWAYS_INJECT_LABEL}: "true"\` to inject it into every eligible pod.`
            : `A namespace-local subscription bundle: entitlement Secrets and yum repository ConfigMaps of its own namespace, injected into pods of that namespace annotated \`subscription.openshift.io/inject-bundle: <name>\`. Label it \`${ALWAYS_INJECT_LABEL}: "true"\` to inject it into every eligible pod of the namespace.`,
        required: ["spec"],
        properties: {
            apiVersion: { type: "string", description: "APIVersion of this representation of the object." },
            kind: { type: "string", description: "Kind of the object." },
            metadata: { type: "object" },
            spec,
            status,
        },
        ...(cluster
            ? {
                  "x-kubernetes-validations": [
                      {
                          rule: `size(self.metadata.name) <= ${MAX_CLUSTER_BUNDLE_NAME_LENGTH}`,
                          message: `a ClusterBundle name has at most ${MAX_CLUSTER_BUNDLE_NAME_LENGTH} characters, so that its ClusterRole <name>-subscription-bundle is a valid name`,
                      },
                  ],
              }
            : {}),
    };
}

function printerColumns(cluster: boolean) {
    return [
        {
            name: "Always-Inject",
            type: "string",
            jsonPath: `.metadata.labels.${ALWAYS_INJECT_LABEL.replace(/\./g, "\\.")}`,
            description: "Whether the bundle is injected into every eligible pod.",
        },
        {
            name: "Invalid",
            type: "string",
            jsonPath: '.status.conditions[?(@.type=="Invalid")].status',
            description: "True when the bundle cannot be injected.",
        },
        ...(cluster
            ? [{ name: "Cluster-Role", type: "string", jsonPath: ".status.clusterRole", description: "The generated ClusterRole." }]
            : []),
        {
            name: "Entitlements",
            type: "string",
            jsonPath: ".spec.entitlements[*].name",
            description: "Names of the entitlement Secrets.",
            priority: 1,
        },
        { name: "Age", type: "date", jsonPath: ".metadata.creationTimestamp", description: "Time since creation." },
    ];
}

function crd(cluster: boolean): CrdManifest {
    const kind = cluster ? CLUSTER_BUNDLE_KIND : BUNDLE_KIND;
    const plural = cluster ? CLUSTER_BUNDLE_PLURAL : BUNDLE_PLURAL;
    return {
        apiVersion: "apiextensions.k8s.io/v1",
        kind: "CustomResourceDefinition",
        metadata: { name: `${plural}.${SUBSCRIPTION_GROUP}` },
        spec: {
            group: SUBSCRIPTION_GROUP,
            names: { kind, listKind: `${kind}List`, plural, singular: kind.toLowerCase(), categories: ["subscriptions"] },
            scope: cluster ? "Cluster" : "Namespaced",
            versions: [
                {
                    name: SUBSCRIPTION_VERSION,
                    served: true,
                    storage: true,
                    schema: { openAPIV3Schema: bundleSchema(cluster) },
                    subresources: { status: {} },
                    additionalPrinterColumns: printerColumns(cluster),
                },
            ],
        },
    };
}

/** `bundles.subscription.openshift.io`, namespaced. */
export function bundleCrd(): CrdManifest {
    return crd(false);
}

/** `clusterbundles.subscription.openshift.io`, cluster-scoped. */
export function clusterBundleCrd(): CrdManifest {
    return crd(true);
}
