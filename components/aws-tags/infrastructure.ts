/**
 * Day-2 propagation (seed 004, "Proposal for managing user-defined tags in day2 operations"):
 * the cluster's own operators (ingress, cloud credential, storage, image registry, machine-api)
 * are to read `Infrastructure/cluster` `spec.platformSpec.aws.resourceTags`, a mutable list of
 * `{key, value}`, taking precedence over `status.platformStatus.aws.resourceTags`, and never
 * delete a tag from AWS when it leaves the list. The stack server-side-applies that list from
 * `aws.userTags` with its own field manager, so it owns exactly the entries it wrote: a key
 * removed from `aws.userTags` leaves the list and stays on AWS resources. Pure: no Pulumi imports.
 *
 * Whether the cluster's API has the field is read from the CRD's schema, never assumed:
 * openshift/api (config/v1/types_infrastructure.go, `AWSPlatformSpec`) has only
 * `serviceEndpoints` in spec up to at least its August 2026 head; `status...resourceTags`
 * exists since April 2021 (OpenShift 4.8). Without the field the API server would prune the
 * list, so the patch then writes nothing and the stack says so once.
 */
import { INFRASTRUCTURE_API_VERSION, INFRASTRUCTURE_KIND, INFRASTRUCTURE_NAME } from "./install-tags";

/** The CRD that defines Infrastructure. */
export const INFRASTRUCTURE_CRD = "infrastructures.config.openshift.io";
/** The field manager that owns the stack's entries of the list (visible in `managedFields`). */
export const TAGS_FIELD_MANAGER = "cluster-platform-aws-tags";
const FIELD_PATH = ["spec", "platformSpec", "aws", "resourceTags"] as const;
export const DAY2_FIELD = `${INFRASTRUCTURE_KIND}/${INFRASTRUCTURE_NAME} spec.platformSpec.aws.resourceTags`;

interface SchemaNode {
    properties?: Record<string, SchemaNode>;
    maxItems?: number;
    "x-kubernetes-list-type"?: string;
}

export type Day2TagsField = { present: false } | { present: true; listType: string; maxItems?: number };

/**
 * Whether the served `v1` of the Infrastructure CRD has `spec.platformSpec.aws.resourceTags`,
 * its list type (`atomic` when unset, as Kubernetes reads it) and its item limit.
 */
export function day2TagsField(crd: unknown): Day2TagsField {
    const versions = (
        crd as { spec?: { versions?: { name?: string; served?: boolean; schema?: { openAPIV3Schema?: SchemaNode } }[] } } | undefined
    )?.spec?.versions;
    const v1 = versions?.find((v) => v.name === "v1" && v.served !== false);
    let node: SchemaNode | undefined = v1?.schema?.openAPIV3Schema;
    for (const step of FIELD_PATH) {
        node = node?.properties?.[step];
    }
    if (node === undefined) {
        return { present: false };
    }
    return {
        present: true,
        listType: node["x-kubernetes-list-type"] ?? "atomic",
        ...(node.maxItems === undefined ? {} : { maxItems: node.maxItems }),
    };
}

/** The keys of `aws.userTags` a day-2 change sets: absent from the install-time tags, or with another value there. Sorted. */
export function day2Changes(userTags: Readonly<Record<string, string>>, installTags: Readonly<Record<string, string>>): string[] {
    return Object.keys(userTags)
        .filter((key) => installTags[key] !== userTags[key])
        .sort();
}

/**
 * The one warning when the cluster's API has no day-2 field and `aws.userTags` differs from the
 * install-time tags: what the change reaches and, by name, which existing AWS resources it does
 * not, with the operator that keeps the install-time values there. Undefined when nothing differs.
 *
 * Why the stack does not write `status.platformStatus.aws.resourceTags` instead, though the API
 * server accepts it through the status subresource (tests/real/infrastructure.real.ts): the CRD
 * says status holds "observed values from the cluster. They may not be overridden"; the installer
 * is its writer, and Red Hat documents no day-2 edit of it for AWS (openshift/enhancements
 * enhancements/api-review/custom-tags-aws.md leaves day-2 updates to a future spec field).
 * The operators that read it (cluster-ingress-operator: the router Service's additional-tags
 * annotation; cluster-image-registry-operator AWSTagController: bucket tags, added or updated;
 * csi-operator EBSVolumeTagsController: every EBS CSI volume; machine-api-provider-aws: new
 * instances) would all act on an unsupported write.
 */
export function day2UnreachedWarning(
    userTags: Readonly<Record<string, string>>,
    installTags: Readonly<Record<string, string>>,
    stackRegistryBucket: boolean,
): string | undefined {
    const changed = day2Changes(userTags, installTags);
    if (changed.length === 0) {
        return undefined;
    }
    const keys = changed.map((k) => JSON.stringify(k)).join(", ");
    const newKeys = changed.filter((k) => !(k in installTags));
    const unreached = [
        "existing EBS volumes and the volumes of every StorageClass but gp3-csi-tagged (csi-operator's EBSVolumeTagsController keeps the install-time values on every EBS CSI volume)",
        "the instances of existing and new MachineSets (machine-api-provider-aws tags them from the install-time tags and each MachineSet's providerSpec)",
        "the default router's load balancer (cluster-ingress-operator annotates its Service from the install-time tags)",
        ...(stackRegistryBucket ? [] : ["the installer's image registry bucket (cluster-image-registry-operator's AWSTagController)"]),
        "what the installer created: VPC, subnets, security groups, control-plane instances, DNS zones, IAM roles",
    ];
    return (
        `aws.userTags sets ${keys} differently from the install-time tags, and ${DAY2_FIELD} is not in this cluster's Infrastructure API (CRD ${INFRASTRUCTURE_CRD}; openshift/api has only serviceEndpoints there), so the cluster's operators keep the install-time values. ` +
        `Reached: the stack's own AWS resources${stackRegistryBucket ? " (the registry bucket only for keys the install-time tags do not carry)" : ""}, the LoadBalancer Services it declares` +
        `${newKeys.length > 0 ? `, and new volumes of the gp3-csi-tagged StorageClass for ${newKeys.map((k) => JSON.stringify(k)).join(", ")}` : ""}. ` +
        `Not reached: ${unreached.join("; ")}. ` +
        "The stack does not write status.platformStatus.aws.resourceTags: the API server accepts it, but status is not the admin's to set (docs/aws-tags.md, Day 2)"
    );
}

export interface PatchBody {
    apiVersion: string;
    kind: string;
    metadata: { name: string; annotations: Record<string, string> };
    spec?: { platformSpec: { aws: { resourceTags: { key: string; value: string }[] } } };
}

/**
 * The server-side-apply body: `aws.userTags` as the list, in key order, under the stack's own
 * field manager. Forced: a key another manager set (the installer, an admin's `oc edit`) is
 * taken over, as `aws.userTags` is the config for it. Nothing to write (no field, no tags)
 * owns no field, so the entries written before leave the list.
 */
export function infrastructureTagsPatch(userTags: Readonly<Record<string, string>>, fieldPresent: boolean): PatchBody {
    const keys = Object.keys(userTags).sort();
    return {
        apiVersion: INFRASTRUCTURE_API_VERSION,
        kind: INFRASTRUCTURE_KIND,
        metadata: {
            name: INFRASTRUCTURE_NAME,
            annotations: { "pulumi.com/patchForce": "true", "pulumi.com/patchFieldManager": TAGS_FIELD_MANAGER },
        },
        ...(fieldPresent && keys.length > 0
            ? { spec: { platformSpec: { aws: { resourceTags: keys.map((key) => ({ key, value: userTags[key] })) } } } }
            : {}),
    };
}

/**
 * With an atomic list (one owner for the whole list), the stack's forced apply replaces it:
 * entries others set that `aws.userTags` does not have leave it. Says which, or undefined.
 */
export function replacedEntriesWarning(
    infrastructure: unknown,
    userTags: Readonly<Record<string, string>>,
    listType: string,
): string | undefined {
    if (listType !== "atomic") {
        return undefined;
    }
    const live = (infrastructure as { spec?: { platformSpec?: { aws?: { resourceTags?: unknown } } } } | undefined)?.spec?.platformSpec?.aws
        ?.resourceTags;
    const others = (Array.isArray(live) ? live : [])
        .map((entry) => (entry as { key?: unknown })?.key)
        .filter((key): key is string => typeof key === "string" && !(key in userTags));
    if (others.length === 0) {
        return undefined;
    }
    return `${DAY2_FIELD} is an atomic list, so applying aws.userTags replaces it: ${[...new Set(others)]
        .sort()
        .map((k) => JSON.stringify(k))
        .join(
            ", ",
        )} set outside the stack leave the list (the operators stop managing them; they stay on AWS resources). Add them to aws.userTags to keep them`;
}

/** The error when `aws.userTags` has more tags than the cluster's list takes (the API server would refuse the patch). */
export function day2LimitProblem(field: Day2TagsField, userTags: Readonly<Record<string, string>>): string | undefined {
    const count = Object.keys(userTags).length;
    if (!field.present || field.maxItems === undefined || count <= field.maxItems) {
        return undefined;
    }
    return `aws.userTags has ${count} tags, but this cluster's ${DAY2_FIELD} takes at most ${field.maxItems} (CRD ${INFRASTRUCTURE_CRD}); remove tags or set aws.propagateUserTags to false`;
}
