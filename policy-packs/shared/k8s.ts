/**
 * Kubernetes objects as the engine shows them to a policy: the type token names the group,
 * version and kind (`kubernetes:rbac.authorization.k8s.io/v1:ClusterRole`), and the properties
 * are the object's fields. `…Patch` types are server-side-apply patches of objects the stack does
 * not own: they are judged on the fields they set, never on the ones they leave out.
 */
import type { ReportViolation, ResourceValidationPolicy } from "@pulumi/policy";
import { ADMISSION_GROUP } from "../../components/admission-webhook/rules";
import { RBAC_GROUPS } from "../../components/shared/rbac-power";
import { PolicyMeta, resourcePolicy } from "./policy";
import { asArray, asObject, known, Obj, UNKNOWN } from "./values";

export interface K8sType {
    /** "" for the core group. */
    group: string;
    version: string;
    /** The object's kind, without the `Patch` suffix. */
    kind: string;
    patch: boolean;
}

const K8S_TYPE = /^kubernetes:([^/:]+)\/([^:]+):([A-Za-z0-9]+)$/;
const parsed = new Map<string, K8sType | undefined>();

/** The group, version and kind a `kubernetes:` type token stands for; undefined for other tokens. */
export function k8sTypeOf(type: string): K8sType | undefined {
    if (parsed.has(type)) {
        return parsed.get(type);
    }
    const match = K8S_TYPE.exec(type);
    let result: K8sType | undefined;
    if (match) {
        const patch = match[3].endsWith("Patch") && match[3] !== "Patch";
        result = {
            group: match[1] === "core" ? "" : match[1],
            version: match[2],
            kind: patch ? match[3].slice(0, -"Patch".length) : match[3],
            patch,
        };
    }
    parsed.set(type, result);
    return result;
}

export function isKind(type: K8sType | undefined, group: string, kinds: readonly string[]): type is K8sType {
    return type !== undefined && type.group === group && kinds.includes(type.kind);
}

export { ADMISSION_GROUP };
export const RBAC_GROUP = "rbac.authorization.k8s.io";

/** Whether `type` is one of `kinds` of RBAC, Kubernetes' group or OpenShift's legacy `authorization.openshift.io` (rbac-power.ts). */
export function isRbacKind(type: K8sType | undefined, kinds: readonly string[]): type is K8sType {
    return RBAC_GROUPS.some((group) => isKind(type, group, kinds));
}
export const WEBHOOK_CONFIGURATION_KINDS = ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"] as const;

export interface ObjectIdentity {
    name: string;
    namespace?: string;
}

/** metadata.name and metadata.namespace; the Pulumi name stands in while the object name is unknown. */
export function identityOf(props: Obj, fallbackName: string): ObjectIdentity {
    const metadata = known(() => asObject(props.metadata));
    const meta = metadata === UNKNOWN ? undefined : metadata;
    const name = known(() => meta?.name);
    const namespace = known(() => meta?.namespace);
    return {
        name: typeof name === "string" ? name : fallbackName,
        ...(typeof namespace === "string" ? { namespace } : {}),
    };
}

/** `ClusterRole "name"` or `Deployment "namespace/name"`, as messages name objects. */
export function describeObject(kind: string, identity: ObjectIdentity): string {
    return `${kind} ${JSON.stringify(identity.namespace ? `${identity.namespace}/${identity.name}` : identity.name)}`;
}

/** metadata.labels (undefined when unset). */
export function labelsOf(props: Obj): Obj | undefined {
    return asObject(asObject(props.metadata)?.labels);
}

/** One Kubernetes object a resource carries, seen as the engine would show it declared alone. */
export interface CarriedObject {
    /** The object's own type token (`…:ClusterRole` for an item of a `…:ClusterRoleList`). */
    type: string;
    props: Obj;
    /** The Pulumi name, or for a list item `<list name>.items[i]` until its metadata.name is read. */
    name: string;
}

/**
 * The objects a resource carries: itself, or for a `…List` type (`ClusterRoleList`, …) each of
 * its `items`, typed as the list's kind without `List`, so that every policy judges the content
 * of a list exactly as it judges the objects. `…Patch` types stay themselves (their K8sType says
 * `patch`, and each policy judges only the fields a patch sets).
 */
export function carriedObjects(args: { type: string; props: Obj; name: string }): CarriedObject[] {
    const type = k8sTypeOf(args.type);
    if (!type || !type.kind.endsWith("List") || type.kind === "List" || type.patch) {
        return [args];
    }
    // A custom kind whose name merely ends in List (no items) is an object of its own.
    const items = args.props.items;
    if (!Array.isArray(items)) {
        return [args];
    }
    const itemType = args.type.slice(0, -"List".length);
    return asArray(items).map((item, index) => ({ type: itemType, props: asObject(item) ?? {}, name: `${args.name}.items[${index}]` }));
}

/**
 * A resource policy over Kubernetes objects: the check runs once for each object the resource
 * carries (`carriedObjects`), so lists are never a way around it.
 */
export function objectPolicy<C = Record<string, never>>(
    meta: PolicyMeta,
    check: (object: CarriedObject, config: C, report: ReportViolation) => void,
): ResourceValidationPolicy {
    return resourcePolicy<C>(meta, (args, config, report) => {
        for (const object of carriedObjects(args)) {
            check(object, config, report);
        }
    });
}
