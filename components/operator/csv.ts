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

/**
 * OLM decodes the CSV with Go's encoding/json into operator-framework/api's v1alpha1 types, where
 * a JSON null leaves a field at its zero value ("unmarshaling a JSON null into any other Go type has
 * no effect on the value"; a slice, map or pointer becomes nil): the same as the field left out. So
 * a null reads as absent here too (`replaces:` with no value is YAML's null), where the program
 * would otherwise refuse a CSV OLM installs.
 */
const nullAsAbsent = (value: unknown) => (value === null ? undefined : value);
function goOptional<T extends z.ZodType>(schema: T) {
    return z.preprocess(nullAsAbsent, schema.optional());
}
/** A list Go leaves nil on null or absence, which the program reads as empty. */
function goList<T extends z.ZodType>(item: T) {
    return z.preprocess(nullAsAbsent, z.array(item).default([]));
}
/** A string Go leaves "" on null or absence. */
function goString() {
    return z.preprocess(nullAsAbsent, z.string().default(""));
}
/** A map[string]string: a null value decodes as "", the element's zero value. */
const goStringMap = () =>
    z.record(
        z.string(),
        z.preprocess((value) => (value === null ? "" : value), z.string()),
    );

/** rbac.authorization.k8s.io/v1 PolicyRule. */
const policyRuleSchema = z.object({
    apiGroups: goOptional(stringList()),
    resources: goOptional(stringList()),
    resourceNames: goOptional(stringList()),
    nonResourceURLs: goOptional(stringList()),
    verbs: stringList(),
});

const permissionSchema = z.object({
    serviceAccountName: z.string(),
    rules: goList(policyRuleSchema),
});

const labelSelectorSchema = z.object({
    matchLabels: goOptional(goStringMap()),
    matchExpressions: goOptional(z.array(z.object({ key: z.string(), operator: z.string(), values: goOptional(stringList()) }))),
}) satisfies z.ZodType<LabelSelector>;

const containerSchema = z.looseObject({
    name: z.string(),
    ports: goOptional(z.array(z.looseObject({ containerPort: z.number().int(), name: goOptional(z.string()) }))),
    env: goOptional(z.array(z.looseObject({ name: z.string() }))),
    volumeMounts: goOptional(z.array(z.looseObject({ name: z.string(), mountPath: z.string() }))),
});

const podTemplateSchema = z.looseObject({
    metadata: goOptional(
        z.looseObject({
            labels: goOptional(goStringMap()),
            annotations: goOptional(goStringMap()),
        }),
    ),
    spec: z.looseObject({
        serviceAccountName: goOptional(z.string()),
        containers: z.array(containerSchema).min(1),
        initContainers: goOptional(z.array(containerSchema)),
        volumes: goOptional(z.array(z.looseObject({ name: z.string() }))),
    }),
});

const deploymentSpecSchema = z.looseObject({
    replicas: goOptional(z.number().int().min(0)),
    selector: labelSelectorSchema,
    template: podTemplateSchema,
});

const strategyDeploymentSchema = z.object({
    name: z.string(),
    spec: deploymentSpecSchema,
    label: goOptional(goStringMap()),
});

const ruleWithOperationsSchema = z.object({
    operations: goList(z.string()),
    apiGroups: goList(z.string()),
    apiVersions: goList(z.string()),
    resources: goList(z.string()),
    scope: goOptional(z.enum(["Cluster", "Namespaced", "*"])),
});

export const WEBHOOK_TYPES = ["ValidatingAdmissionWebhook", "MutatingAdmissionWebhook", "ConversionWebhook"] as const;

/** OLM's WebhookDescription: the seed's Webhook struct plus where and how it is served. */
const webhookDescriptionSchema = z.object({
    generateName: z.string(),
    type: z.enum(WEBHOOK_TYPES),
    deploymentName: goOptional(z.string()),
    containerPort: goOptional(z.number().int()),
    targetPort: goOptional(z.union([z.number().int(), z.string()])),
    rules: goOptional(z.array(ruleWithOperationsSchema)),
    failurePolicy: goOptional(z.enum(["Fail", "Ignore"])),
    matchPolicy: goOptional(z.enum(["Exact", "Equivalent"])),
    objectSelector: goOptional(labelSelectorSchema),
    sideEffects: goOptional(z.string()),
    timeoutSeconds: goOptional(z.number().int()),
    admissionReviewVersions: goOptional(stringList()),
    reinvocationPolicy: goOptional(z.enum(["Never", "IfNeeded"])),
    webhookPath: goOptional(z.string()),
    conversionCRDs: goOptional(stringList()),
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
    deploymentName: goOptional(z.string()),
    containerPort: goOptional(z.number().int()),
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
        annotations: goOptional(goStringMap()),
    }),
    spec: z.object({
        /** The CSV this one upgrades from, and those it may jump over (OLM's upgrade edges: upgrade-path.ts). */
        replaces: goOptional(z.string()),
        skips: goOptional(stringList()),
        /** The operator's semantic version, which a later CSV's `olm.skipRange` is matched against. */
        // Not null: OLM's OperatorVersion has its own UnmarshalJSON, which fails on null
        // ("strconv.ParseUint: parsing \"\": invalid syntax", tests/catalog/oracle csvnulls).
        version: z.string().optional(),
        /** The oldest Kubernetes OLM installs the CSV on (min-kube-version.ts). */
        minKubeVersion: goOptional(z.string()),
        /** GroupVersionKinds the operator needs the cluster to serve (native-apis.ts); a missing field decodes as "", as in Go. */
        nativeAPIs: goOptional(z.array(z.object({ group: goString(), version: goString(), kind: goString() }))),
        installModes: goList(z.object({ type: z.enum(INSTALL_MODE_TYPES), supported: z.boolean() })),
        install: z.object({
            strategy: z.literal("deployment"),
            spec: z.object({
                deployments: z.array(strategyDeploymentSchema).min(1),
                permissions: goOptional(z.array(permissionSchema)),
                clusterPermissions: goOptional(z.array(permissionSchema)),
            }),
        }),
        customresourcedefinitions: goOptional(
            z.object({
                owned: goOptional(z.array(crdDescriptionSchema)),
                required: goOptional(z.array(crdDescriptionSchema)),
            }),
        ),
        apiservicedefinitions: goOptional(
            z.object({
                owned: goOptional(z.array(apiServiceDescriptionSchema)),
                required: goOptional(z.array(apiServiceDescriptionSchema)),
            }),
        ),
        webhookdefinitions: goOptional(z.array(webhookDescriptionSchema)),
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
