/**
 * RBAC objects as the pack judges them: read from what the engine sends (both RBAC APIs, lists'
 * items, patches), normalised to Kubernetes RBAC (OpenShift's legacy kinds as openshift-apiserver
 * stores them, components/shared/rbac-openshift.ts), and a patch of an object the cluster already
 * holds (a well-known role or binding) judged as the object it leaves.
 *
 * A server-side-apply patch leaves the live object with the patch's fields over its own: the
 * RBAC lists (`rules`, `subjects`, `clusterRoleSelectors`) are atomic (k8s.io/api rbac/v1
 * types.go, `+listType=atomic`), so a patch that sets one replaces it whole (once it may: a field
 * another manager owns needs `pulumi.com/patchForce`), labels are merged key by key, and a
 * binding's `roleRef` (immutable) stays the live one when the patch leaves it out
 * (`mergePatch`, as server-side apply merges them).
 * A patch of a binding the pack does not know, without a roleRef, cannot be judged: it is
 * reported so.
 */
import type { LabelSelector } from "../../components/shared/label-selector";
import type { PolicyRule, RbacSubject } from "../../components/shared/rbac";
import { normalizeLegacyBinding, normalizeLegacyRules } from "../../components/shared/rbac-openshift";
import { BindingObject, ClusterRoleObject, patchedBinding, patchedRole, RoleObject } from "../../components/shared/rbac-power";
import { wellKnown } from "../../components/shared/rbac-well-known";
import { CarriedObject, identityOf, isRbacKind, K8sType, k8sTypeOf, labelsOf, ObjectIdentity } from "../shared/k8s";
import { arrayCopy, asArray, asObject, knownEntries, knownStringMap, Obj } from "../shared/values";

export const LEGACY_GROUP = "authorization.openshift.io";

export interface RoleView {
    kind: "Role" | "ClusterRole";
    type: K8sType;
    identity: ObjectIdentity;
    /** How an allow-list names it: `name` for a ClusterRole, `namespace/name` for a Role. */
    allowName: string;
    labels: Record<string, string>;
    /** The rules as the object declares them (normalised); messages index into these. */
    declaredRules: Partial<PolicyRule>[];
    /** What the object holds: the declared rules, or for a patch that sets none the live object's. */
    rules: Partial<PolicyRule>[];
    /** Whether `rules` are the declared ones (else the live object's). */
    declaresRules: boolean;
    aggregationRule?: { clusterRoleSelectors: LabelSelector[] };
    /** The live object a patch changes, when the pack knows it. */
    live?: ClusterRoleObject | RoleObject;
}

export interface BindingView {
    kind: "RoleBinding" | "ClusterRoleBinding";
    type: K8sType;
    identity: ObjectIdentity;
    allowName: string;
    roleRef?: { kind: string; name: string };
    subjects: RbacSubject[];
    live?: BindingObject;
    /** Why the binding cannot be judged (a patch leaving roleRef to an object the pack does not know). */
    unjudged?: string;
}

/** How allow-lists name an object: `name` when cluster-scoped, `namespace/name` when namespaced. */
export function allowListName(namespaced: boolean, identity: ObjectIdentity): string {
    return namespaced ? `${identity.namespace ?? "default"}/${identity.name}` : identity.name;
}

function rulesOf(props: Obj, legacy: boolean): Partial<PolicyRule>[] {
    if (legacy) {
        return normalizeLegacyRules(props.rules);
    }
    // Each list is read once into a plain array (a value unknown during a preview throws here, as
    // any later read of it would): the evaluator asks hundreds of requests of every rule, and each
    // read through the policy SDK's proxy costs a new proxy.
    return asArray(props.rules).map((rule) => {
        const r = asObject(rule) ?? {};
        return {
            apiGroups: arrayCopy(r.apiGroups) as string[],
            resources: arrayCopy(r.resources) as string[],
            verbs: arrayCopy(r.verbs) as string[],
            resourceNames: arrayCopy(r.resourceNames) as string[],
            nonResourceURLs: arrayCopy(r.nonResourceURLs) as string[],
        };
    });
}

function aggregationRuleOf(props: Obj): { clusterRoleSelectors: LabelSelector[] } | undefined {
    const rule = asObject(props.aggregationRule);
    return rule ? { clusterRoleSelectors: asArray(rule.clusterRoleSelectors).map((s) => (asObject(s) ?? {}) as LabelSelector) } : undefined;
}

/** A Role or ClusterRole (either API, a list item, a patch); undefined for other objects. */
export function roleView(object: CarriedObject): RoleView | undefined {
    const type = k8sTypeOf(object.type);
    if (!isRbacKind(type, ["Role", "ClusterRole"])) {
        return undefined;
    }
    const kind = type.kind as RoleView["kind"];
    const identity = identityOf(object.props, object.name);
    const declaredRules = rulesOf(object.props, type.group === LEGACY_GROUP);
    const known = wellKnown().authorizer;
    const live = type.patch
        ? kind === "ClusterRole"
            ? known.clusterRole(identity.name)
            : known.role(identity.namespace ?? "default", identity.name)
        : undefined;
    const declaresRules = !type.patch || object.props.rules !== undefined;
    const declaredLabels = knownEntries(knownStringMap(labelsOf(object.props)));
    const declaredAggregation = kind === "ClusterRole" ? aggregationRuleOf(object.props) : undefined;
    // What the object holds: a patch of a known object merged as server-side apply merges it.
    const held = live
        ? patchedRole(live as ClusterRoleObject, {
              labels: declaredLabels,
              ...(declaresRules ? { rules: declaredRules } : {}),
              ...(declaredAggregation ? { aggregationRule: declaredAggregation } : {}),
          })
        : undefined;
    const rules = held ? [...held.rules] : declaredRules;
    const labels = held && "labels" in held ? { ...held.labels } : declaredLabels;
    const heldAggregation = held && "aggregationRule" in held ? held.aggregationRule : declaredAggregation;
    const aggregationRule = heldAggregation ? { clusterRoleSelectors: [...(heldAggregation.clusterRoleSelectors ?? [])] } : undefined;
    return {
        kind,
        type,
        identity,
        allowName: allowListName(kind === "Role", identity),
        labels,
        declaredRules,
        rules,
        declaresRules,
        ...(aggregationRule ? { aggregationRule } : {}),
        ...(live ? { live } : {}),
    };
}

function subjectsOf(props: Obj): RbacSubject[] {
    return asArray(props.subjects).map((s) => {
        const subject = asObject(s) ?? {};
        return {
            kind: String(subject.kind ?? ""),
            name: String(subject.name ?? ""),
            ...(typeof subject.namespace === "string" ? { namespace: subject.namespace } : {}),
        };
    });
}

/** A RoleBinding or ClusterRoleBinding (either API, a list item, a patch); undefined for other objects and for legacy bindings openshift-apiserver refuses. */
export function bindingView(object: CarriedObject): BindingView | undefined {
    const type = k8sTypeOf(object.type);
    if (!isRbacKind(type, ["RoleBinding", "ClusterRoleBinding"])) {
        return undefined;
    }
    const kind = type.kind as BindingView["kind"];
    const identity = identityOf(object.props, object.name);
    const namespace = kind === "RoleBinding" ? (identity.namespace ?? "default") : undefined;
    let roleRef: { kind: string; name: string } | undefined;
    let subjects: RbacSubject[];
    if (type.group === LEGACY_GROUP) {
        const legacy = normalizeLegacyBinding(object.props, namespace);
        if (!legacy.ok) {
            return undefined;
        }
        roleRef = object.props.roleRef === undefined ? undefined : legacy.roleRef;
        subjects = legacy.subjects;
    } else {
        const ref = asObject(object.props.roleRef);
        roleRef = ref ? { kind: String(ref.kind ?? ""), name: String(ref.name ?? "") } : undefined;
        subjects = subjectsOf(object.props);
    }
    const live = type.patch
        ? wellKnown().authorizer.objects.bindings.find((b) => b.kind === kind && b.name === identity.name && b.namespace === namespace)
        : undefined;
    const setsSubjects =
        !type.patch || object.props.subjects !== undefined || object.props.userNames !== undefined || object.props.groupNames !== undefined;
    const held = live ? patchedBinding(live, { ...(roleRef ? { roleRef } : {}), ...(setsSubjects ? { subjects } : {}) }) : undefined;
    const view: BindingView = {
        kind,
        type,
        identity,
        allowName: allowListName(kind === "RoleBinding", identity),
        subjects: held ? [...held.subjects] : subjects,
        ...(live ? { live } : {}),
    };
    const effectiveRef = held?.roleRef ?? roleRef;
    if (effectiveRef) {
        view.roleRef = effectiveRef;
    } else if (type.patch) {
        view.unjudged = `it sets no roleRef, so it keeps the live binding's, which this pack does not know; state the roleRef the binding has (it cannot change) so the subjects it adds can be judged`;
    }
    return view;
}

/** The live object a patch of a known role changes, as a view of its own (what it held before the patch). */
export function liveRoleView(role: RoleView): RoleView | undefined {
    if (!role.live) return undefined;
    const live = role.live;
    const props = {
        metadata: {
            name: live.name,
            ...("namespace" in live ? { namespace: live.namespace } : {}),
            ...("labels" in live ? { labels: live.labels } : {}),
        },
        rules: live.rules,
        ...("aggregationRule" in live && live.aggregationRule ? { aggregationRule: live.aggregationRule } : {}),
    };
    return roleView({ type: `kubernetes:rbac.authorization.k8s.io/v1:${role.kind}`, props: props as unknown as Obj, name: live.name });
}
