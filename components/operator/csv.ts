/**
 * The typed subset of an OLM ClusterServiceVersion (operators.coreos.com/v1alpha1) that an
 * install needs, parsed from the YAML a bundle ships. Unknown fields are kept where they are
 * passed through to Kubernetes (deployment specs) and ignored elsewhere (descriptions, icons,
 * alm-examples...). Shape errors name the file and the field.
 */
import { parse as parseYaml } from "yaml";
import { z } from "zod";
import { issuesToProblems } from "../config/messages";
import { describeValue, formatPath } from "../shared/problems";
import type { LabelSelector } from "../shared/label-selector";

const stringList = () => z.array(z.string());

/** rbac.authorization.k8s.io/v1 PolicyRule. */
const policyRuleSchema = z.object({
    apiGroups: stringList().optional(),
    resources: stringList().optional(),
    resourceNames: stringList().optional(),
    nonResourceURLs: stringList().optional(),
    verbs: stringList(),
});

const permissionSchema = z.object({
    serviceAccountName: z.string(),
    rules: z.array(policyRuleSchema).default([]),
});

const labelSelectorSchema = z.object({
    matchLabels: z.record(z.string(), z.string()).optional(),
    matchExpressions: z.array(z.object({ key: z.string(), operator: z.string(), values: stringList().optional() })).optional(),
}) satisfies z.ZodType<LabelSelector>;

const containerSchema = z.looseObject({
    name: z.string(),
    ports: z.array(z.looseObject({ containerPort: z.number().int(), name: z.string().optional() })).optional(),
    env: z.array(z.looseObject({ name: z.string() })).optional(),
    volumeMounts: z.array(z.looseObject({ name: z.string(), mountPath: z.string() })).optional(),
});

const podTemplateSchema = z.looseObject({
    metadata: z
        .looseObject({
            labels: z.record(z.string(), z.string()).optional(),
            annotations: z.record(z.string(), z.string()).optional(),
        })
        .optional(),
    spec: z.looseObject({
        serviceAccountName: z.string().optional(),
        containers: z.array(containerSchema).min(1),
        initContainers: z.array(containerSchema).optional(),
        volumes: z.array(z.looseObject({ name: z.string() })).optional(),
    }),
});

const deploymentSpecSchema = z.looseObject({
    replicas: z.number().int().min(0).optional(),
    selector: labelSelectorSchema,
    template: podTemplateSchema,
});

const strategyDeploymentSchema = z.object({
    name: z.string(),
    spec: deploymentSpecSchema,
    label: z.record(z.string(), z.string()).optional(),
});

const ruleWithOperationsSchema = z.object({
    operations: stringList().default([]),
    apiGroups: stringList().default([]),
    apiVersions: stringList().default([]),
    resources: stringList().default([]),
    scope: z.enum(["Cluster", "Namespaced", "*"]).optional(),
});

export const WEBHOOK_TYPES = ["ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"] as const;

/** OLM's WebhookDescription: the seed's Webhook struct plus where and how it is served. */
const webhookDescriptionSchema = z.object({
    generateName: z.string(),
    type: z.enum(WEBHOOK_TYPES),
    deploymentName: z.string().optional(),
    containerPort: z.number().int().optional(),
    targetPort: z.union([z.number().int(), z.string()]).optional(),
    rules: z.array(ruleWithOperationsSchema).optional(),
    failurePolicy: z.enum(["Fail", "Ignore"]).optional(),
    matchPolicy: z.enum(["Exact", "Equivalent"]).optional(),
    objectSelector: labelSelectorSchema.optional(),
    sideEffects: z.string().optional(),
    timeoutSeconds: z.number().int().optional(),
    admissionReviewVersions: stringList().optional(),
    reinvocationPolicy: z.enum(["Never", "IfNeeded"]).optional(),
    webhookPath: z.string().optional(),
    conversionCRDs: stringList().optional(),
});

const crdDescriptionSchema = z.object({
    name: z.string(),
    version: z.string(),
    kind: z.string(),
});

const apiServiceDescriptionSchema = z.object({
    name: z.string(),
    group: z.string(),
    version: z.string(),
    kind: z.string(),
    deploymentName: z.string().optional(),
    containerPort: z.number().int().optional(),
});

export const INSTALL_MODE_TYPES = ["OwnNamespace", "SingleNamespace", "MultiNamespace", "AllNamespaces"] as const;

const csvSchema = z.object({
    // OLM requires an apiVersion and then decodes the CSV as operators.coreos.com/v1alpha1 whatever
    // it says (pkg/controller/registry/resolver/steps.go, NewStepResourceFromBundle: "bundle CSV %s
    // missing APIVersion"); real bundles ship `v1alpha1` or `operators.coreos.com/v1`.
    apiVersion: z.string().min(1, { message: "is missing: OLM refuses a bundle CSV without an apiVersion (resolver/steps.go)" }),
    kind: z.literal("ClusterServiceVersion"),
    metadata: z.object({
        name: z.string(),
        annotations: z.record(z.string(), z.string()).optional(),
    }),
    spec: z.object({
        /** The CSV this one upgrades from, and those it may jump over (OLM's upgrade edges: upgrade-path.ts). */
        replaces: z.string().optional(),
        skips: z.array(z.string()).optional(),
        /** The operator's semantic version, which a later CSV's `olm.skipRange` is matched against. */
        version: z.string().optional(),
        /** The oldest Kubernetes OLM installs the CSV on (min-kube-version.ts). */
        minKubeVersion: z.string().optional(),
        /** GroupVersionKinds the operator needs the cluster to serve (native-apis.ts); a missing field decodes as "", as in Go. */
        nativeAPIs: z
            .array(z.object({ group: z.string().default(""), version: z.string().default(""), kind: z.string().default("") }))
            .optional(),
        installModes: z.array(z.object({ type: z.enum(INSTALL_MODE_TYPES), supported: z.boolean() })).default([]),
        install: z.object({
            strategy: z.literal("deployment"),
            spec: z.object({
                deployments: z.array(strategyDeploymentSchema).min(1),
                permissions: z.array(permissionSchema).optional(),
                clusterPermissions: z.array(permissionSchema).optional(),
            }),
        }),
        customresourcedefinitions: z
            .object({
                owned: z.array(crdDescriptionSchema).optional(),
                required: z.array(crdDescriptionSchema).optional(),
            })
            .optional(),
        apiservicedefinitions: z
            .object({
                owned: z.array(apiServiceDescriptionSchema).optional(),
                required: z.array(apiServiceDescriptionSchema).optional(),
            })
            .optional(),
        webhookdefinitions: z.array(webhookDescriptionSchema).optional(),
    }),
});

export type Permission = z.output<typeof permissionSchema>;
export type StrategyDeployment = z.output<typeof strategyDeploymentSchema>;
export type DeploymentSpec = z.output<typeof deploymentSpecSchema>;
export type Container = z.output<typeof containerSchema>;
export type RuleWithOperations = z.output<typeof ruleWithOperationsSchema>;
export type WebhookDescription = z.output<typeof webhookDescriptionSchema>;
export type CrdDescription = z.output<typeof crdDescriptionSchema>;
export type ApiServiceDescription = z.output<typeof apiServiceDescriptionSchema>;
export type InstallModeType = (typeof INSTALL_MODE_TYPES)[number];
export type ClusterServiceVersion = z.output<typeof csvSchema>;

/** A problem in a CSV file: the field path inside the file and what is wrong. */
export interface CsvProblem {
    field: string;
    message: string;
}

export type CsvParseResult = { ok: true; csv: ClusterServiceVersion } | { ok: false; problems: CsvProblem[] };

/** Parses CSV text (YAML or JSON). Every shape problem is reported with its field path. */
export function parseCsv(text: string): CsvParseResult {
    let document: unknown;
    try {
        document = parseYaml(text, { prettyErrors: false });
    } catch (error) {
        return { ok: false, problems: [{ field: "", message: `is not valid YAML: ${(error as Error).message.split("\n")[0]}` }] };
    }
    return csvFromDocument(document);
}

/** Validates an already parsed document as a CSV. */
export function csvFromDocument(document: unknown): CsvParseResult {
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
        return { ok: false, problems: [{ field: "", message: `must be a ClusterServiceVersion object, got ${describeValue(document)}` }] };
    }
    const result = csvSchema.safeParse(document, { reportInput: true });
    if (result.success) {
        return { ok: true, csv: result.data };
    }
    return {
        ok: false,
        problems: issuesToProblems(result.error.issues).map((p) => ({ field: p.path, message: p.message })),
    };
}

/** `spec.webhookdefinitions[3].rules[0]`-style paths for messages. */
export function csvField(...path: PropertyKey[]): string {
    return formatPath(path);
}

/** The install strategy's permissions, with OLM's defaults (absent lists are empty). */
export function permissionsOf(csv: ClusterServiceVersion): { permissions: Permission[]; clusterPermissions: Permission[] } {
    return {
        permissions: csv.spec.install.spec.permissions ?? [],
        clusterPermissions: csv.spec.install.spec.clusterPermissions ?? [],
    };
}
