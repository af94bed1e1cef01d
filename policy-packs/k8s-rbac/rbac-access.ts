/**
 * RBAC judged by what it lets its holders do, as the API server decides it
 * (components/shared/rbac-power.ts), against the dangerous-request set and its sources
 * (components/shared/rbac-dangerous.ts), with the roles and bindings every cluster already holds
 * (components/shared/rbac-well-known.ts) standing in for the live objects: what a patch changes,
 * what an aggregationRule selects, which names are powerful.
 *
 * - k8s-no-wildcard-access: a `*` verb on `*` resources, rule by rule;
 * - k8s-no-broad-grants: a Role or ClusterRole that allows any request of the set at its scope
 *   (a Role inside its own namespace is not judged on namespaced powers there), through its own
 *   rules, what its aggregationRule selects, or what it gives an aggregated role it joins;
 * - k8s-no-cluster-admin-service-accounts: cluster-admin bound to a service account;
 * - k8s-no-power-for-broad-groups: a role the cluster holds, with any power, bound (or patched
 *   while bound) to everyone;
 * - k8s-no-powerful-bindings: a role the cluster holds bound with a power of the set to anyone;
 * - k8s-no-admin-for-everyone (stack): a role the stack declares, with any power, bound to everyone.
 */
import { OPERATOR_LABEL, GENERATED_BY_LABEL } from "../../components/shared/labels";
import {
    BROAD_GROUPS,
    clusterAdminServiceAccounts,
    describeSubject,
    isBroadSubject,
    isWildcardRule,
    PolicyRule,
} from "../../components/shared/rbac";
import {
    DANGEROUS_POWERS,
    describeRequest,
    gainedPowers,
    PowerFinding,
    PowerId,
    powersOf,
    POWER_IDS,
    PowerfulIdentities,
    Scope,
} from "../../components/shared/rbac-dangerous";
import {
    ClusterRoleObject,
    mergeObjects,
    RbacAuthorizer,
    RbacObjects,
    rulesAllow,
    rulesNotIn,
    selectorSelectsRole,
} from "../../components/shared/rbac-power";
import { wellKnown } from "../../components/shared/rbac-well-known";
import { carriedObjects, describeObject, objectPolicy } from "../shared/k8s";
import { stackPolicy, stringList } from "../shared/policy";
import { BindingView, bindingView, liveRoleView, RoleView, roleView } from "./rbac-objects";

interface WildcardConfig {
    allowedRoles: string[];
}

export const noWildcardAccess = objectPolicy<WildcardConfig>(
    {
        name: "k8s-no-wildcard-access",
        description: 'Roles and ClusterRoles grant no "*" verb on "*" resources, unless they are on the allow-list.',
        severity: "critical",
        remediationSteps:
            'List the verbs and resources the role needs instead of "*". If a role really must do everything (a break-glass role), add its name (ClusterRole) or namespace/name (Role) to this policy\'s allowedRoles.',
        config: { allowedRoles: stringList('Roles that may grant "*" on "*": ClusterRole names, and Roles as namespace/name.') },
    },
    (object, config, report) => {
        const role = roleView(object);
        if (!role || config.allowedRoles.includes(role.allowName)) {
            return;
        }
        role.declaredRules.forEach((rule, index) => {
            if (isWildcardRule(rule)) {
                report(
                    `${describeObject(role.kind, role.identity)} rules[${index}] grants every verb ("*") on every resource ("*") of API groups ${JSON.stringify(rule.apiGroups)}; list the verbs and resources it needs, or add ${JSON.stringify(role.allowName)} to allowedRoles`,
                );
            }
        });
    },
);

// ---------------------------------------------------------------- roles: the dangerous-request set

/** An operator's reviewed acceptance of powers its generated roles hold (`npm run policy:config -- --accept`). */
export interface OperatorExemption {
    operator: string;
    powers: PowerId[];
    reason: string;
}

interface BroadGrantsConfig {
    allowedRoles: string[];
    operators: string[];
    operatorExemptions: OperatorExemption[];
}

/** Where a power a role holds comes from, for its message. */
interface RoleFinding extends PowerFinding {
    /** `rules[2] allows …`, `its aggregationRule takes ClusterRole "x" (…), which allows …`. */
    where: string;
}

const scopeOf = (role: Pick<RoleView, "kind" | "identity">): Scope =>
    role.kind === "Role" ? { namespace: role.identity.namespace ?? "default" } : {};

/** The authorizer over the well-known objects with `roles` in place of theirs (undefined: nothing to add). */
function withRoles(roles: readonly ClusterRoleObject[]): RbacAuthorizer {
    return RbacAuthorizer.withClusterRoles(wellKnown().authorizer, roles);
}

const asClusterRole = (role: RoleView): ClusterRoleObject => ({
    name: role.identity.name,
    labels: role.labels,
    rules: role.rules,
    ...(role.aggregationRule ? { aggregationRule: role.aggregationRule } : {}),
    source: "the stack",
});

/** Whether an aggregated role the cluster holds selects a role with these labels. */
function joinsWellKnownAggregate(role: ClusterRoleObject): boolean {
    return wellKnown().authorizer.objects.clusterRoles.some(
        (aggregator) =>
            aggregator.name !== role.name &&
            (aggregator.aggregationRule?.clusterRoleSelectors ?? []).some((s) => selectorSelectsRole(s, role)),
    );
}

/**
 * What a well-known aggregated role allows as the cluster holds it, asked once per role and set of
 * powerful names (every stack role that joins it asks; roleFindings only asks of wellKnown()).
 */
const knownPowerCache = new WeakMap<PowerfulIdentities, Map<string, ReadonlySet<PowerId>>>();

function knownPowers(known: ReturnType<typeof wellKnown>, name: string, powerful: PowerfulIdentities): ReadonlySet<PowerId> {
    const byName = knownPowerCache.get(powerful) ?? new Map<string, ReadonlySet<PowerId>>();
    knownPowerCache.set(powerful, byName);
    let powers = byName.get(name);
    if (powers === undefined) {
        powers = new Set(powersOf(known.authorizer.clusterRoleRules(name) ?? [], {}, powerful).map((f) => f.power));
        byName.set(name, powers);
    }
    return powers;
}

/**
 * The powers of the set a role holds at its scope, each with where it comes from: its own rules
 * (the live object's too, for a patch of a known role), the roles its aggregationRule selects
 * among those the cluster holds, and what its labels add to an aggregated role the cluster holds.
 */
export function roleFindings(role: RoleView, powerful: PowerfulIdentities = wellKnown().powerful): RoleFinding[] {
    const scope = scopeOf(role);
    const findings: RoleFinding[] = powersOf(role.rules, scope, powerful).map((f) => ({
        ...f,
        where: role.declaresRules
            ? `rules[${f.rule}] allows ${describeRequest(f.request)}`
            : `the live ${role.kind} "${role.identity.name}" (${role.live?.source ?? "the cluster"}) allows ${describeRequest(f.request)}`,
    }));
    if (role.kind !== "ClusterRole") {
        return impliedByEverything(findings);
    }
    const self = asClusterRole(role);
    if (!role.aggregationRule && !joinsWellKnownAggregate(self)) {
        return impliedByEverything(findings);
    }
    const authorizer = withRoles([self]);
    const held = new Set(findings.map((f) => f.power));
    if (role.aggregationRule) {
        for (const finding of powersOf(authorizer.clusterRoleRules(self.name) ?? [], {}, powerful)) {
            if (held.has(finding.power)) continue;
            const from = authorizer
                .aggregatedFrom(self.name)
                .find((r) => rulesAllow(authorizer.clusterRoleRules(r.name) ?? r.rules, finding.request));
            held.add(finding.power);
            findings.push({
                ...finding,
                where: `its aggregationRule selects ${from ? `ClusterRole ${JSON.stringify(from.name)} (${from.source ?? "the cluster"})` : "roles"} whose rules allow ${describeRequest(finding.request)}`,
            });
        }
    }
    // The aggregated roles the cluster holds that take this role's rules, and what they gain by it.
    const known = wellKnown();
    for (const aggregator of known.authorizer.objects.clusterRoles) {
        if (!aggregator.aggregationRule || !authorizer.aggregatedFrom(aggregator.name).some((r) => r.name === self.name)) continue;
        const before = known.authorizer.clusterRoleRules(aggregator.name) ?? [];
        const after = authorizer.clusterRoleRules(aggregator.name) ?? [];
        for (const gained of gainedPowers(knownPowers(known, aggregator.name, powerful), rulesNotIn(after, before), after, {}, powerful)) {
            findings.push({
                ...gained,
                where: `its labels put its rules into ClusterRole ${JSON.stringify(aggregator.name)} (${aggregator.source ?? "the cluster"}), which then allows ${describeRequest(gained.request)}`,
            });
        }
    }
    return impliedByEverything(findings);
}

/**
 * `*` on `*` of every group allows every other resource request of the set: one finding says it.
 * Non-resource URLs are another matter (a rule lists either resources or URLs).
 */
function impliedByEverything<F extends PowerFinding>(findings: F[]): F[] {
    const everything = findings.filter((f) => f.power === "everything");
    if (everything.length === 0) return findings;
    return [everything[0], ...findings.filter((f) => f.power === "non-resource-urls")];
}

/** The exemptions that cover a role: those of the operator whose generated RBAC it is. */
function exemptPowers(role: RoleView, exemptions: readonly OperatorExemption[]): Set<PowerId> {
    const operator = role.labels[OPERATOR_LABEL];
    if (operator === undefined || role.labels[GENERATED_BY_LABEL] === undefined) {
        return new Set();
    }
    return new Set(exemptions.filter((e) => e.operator === operator).flatMap((e) => e.powers));
}

const GRANT_REMEDY = "list the verbs, resources and names it needs";

function exemptionProblems(config: Record<string, unknown>): string[] {
    const operators = (config.operators as string[] | undefined) ?? [];
    return ((config.operatorExemptions as OperatorExemption[] | undefined) ?? []).flatMap((exemption, i) =>
        operators.includes(exemption.operator)
            ? []
            : [
                  `k8s-no-broad-grants.operatorExemptions[${i}].operator: ${JSON.stringify(exemption.operator)} names no operator the stack declares (operators: ${JSON.stringify(operators)}); an exemption is for one of the stack's operators`,
              ],
    );
}

export const noBroadGrants = objectPolicy<BroadGrantsConfig>(
    {
        name: "k8s-no-broad-grants",
        description: `No Role or ClusterRole (rbac.authorization.k8s.io or OpenShift's authorization.openshift.io, patches and aggregation included) allows a request of the dangerous-request set at its scope: ${POWER_IDS.join(", ")}. A Role's namespaced powers inside its own namespace pass, except where that namespace's service accounts are themselves powerful.`,
        severity: "critical",
        remediationSteps:
            "List the verbs, resources and names the role needs; keep Secrets, exec and token powers in a Role of the namespace that needs them. An operator's generated roles that must hold such a power are accepted per operator with a reason (npm run policy:config -- --accept <operator> --reason <text>); any other reviewed role goes on allowedRoles.",
        config: {
            allowedRoles: stringList("Roles this policy does not judge: ClusterRole names, and Roles as namespace/name."),
            operators: stringList(
                "The operators the stack declares (npm run policy:config writes them): the names operatorExemptions may use.",
            ),
            operatorExemptions: {
                type: "array",
                default: [],
                description:
                    "Powers an operator's generated roles may hold, each accepted by an admin with a reason (npm run policy:config -- --accept). A power not listed, or gained in an upgrade, is refused again.",
                items: {
                    type: "object",
                    required: ["operator", "powers", "reason"],
                    additionalProperties: false,
                    properties: {
                        operator: { type: "string", minLength: 1 },
                        powers: { type: "array", minItems: 1, uniqueItems: true, items: { type: "string", enum: POWER_IDS } },
                        reason: { type: "string", minLength: 1 },
                    },
                },
            },
        },
        check: exemptionProblems,
    },
    (object, config, report) => {
        const role = roleView(object);
        if (!role || config.allowedRoles.includes(role.allowName)) {
            return;
        }
        const exempt = exemptPowers(role, config.operatorExemptions);
        const operator = role.labels[OPERATOR_LABEL];
        // A patch of a role the cluster holds is judged by what it adds to it.
        const live = liveRoleView(role);
        const before = new Set(live ? roleFindings(live).map((f) => f.power) : []);
        for (const finding of roleFindings(role)) {
            if (exempt.has(finding.power) || before.has(finding.power)) continue;
            // "*" on "*" of every group in the role's own rules is k8s-no-wildcard-access's to report.
            if (finding.power === "everything" && finding.where.startsWith("rules[") && isWildcardRule(role.rules[finding.rule])) continue;
            const power = DANGEROUS_POWERS[finding.power];
            const accept =
                operator !== undefined && role.labels[GENERATED_BY_LABEL] !== undefined && !power.overRbac
                    ? `, accept it for operator ${JSON.stringify(operator)} (npm run policy:config -- --accept ${operator} --reason <why>)`
                    : "";
            report(
                `${describeObject(role.kind, role.identity)} [${finding.power}] ${power.title}: ${finding.where} (source: ${power.source}); ${GRANT_REMEDY}${accept}, or add ${JSON.stringify(role.allowName)} to allowedRoles`,
            );
        }
    },
);

// ---------------------------------------------------------------- bindings

/** The powers, `everything` standing for the resource powers it implies (see impliedByEverything). */
const powerList = (powers: readonly PowerId[]) =>
    (powers.includes("everything") ? powers.filter((p) => p === "everything" || p === "non-resource-urls") : powers)
        .map((p) => `[${p}] ${DANGEROUS_POWERS[p].title}`)
        .join("; ");

function bindingScope(binding: BindingView, everyone: boolean): Scope {
    return binding.kind === "RoleBinding" ? { namespace: binding.identity.namespace ?? "default", everyone } : { everyone };
}

/** The rules of a binding's role when the cluster holds it (well-known), with where it comes from. */
function knownRoleOf(binding: BindingView): { rules: readonly Partial<PolicyRule>[]; source: string } | undefined {
    if (!binding.roleRef) return undefined;
    const known = wellKnown().authorizer;
    const rules = known.roleRefRules(
        binding.roleRef,
        binding.kind === "RoleBinding" ? (binding.identity.namespace ?? "default") : undefined,
    );
    if (!rules) return undefined;
    const object =
        binding.roleRef.kind === "ClusterRole"
            ? known.clusterRole(binding.roleRef.name)
            : known.role(binding.identity.namespace ?? "default", binding.roleRef.name);
    return { rules, source: object?.source ?? "the cluster" };
}

const describeRef = (binding: BindingView) => `${binding.roleRef?.kind} ${JSON.stringify(binding.roleRef?.name)}`;

export const noClusterAdminServiceAccounts = objectPolicy(
    {
        name: "k8s-no-cluster-admin-service-accounts",
        description: "No RoleBinding or ClusterRoleBinding gives the cluster-admin ClusterRole to a service account.",
        severity: "critical",
        remediationSteps:
            "Bind the service account to a Role or ClusterRole with only the permissions its workload needs. Anyone who can read the service account's token, or run a pod as it, would otherwise own the cluster.",
    },
    (object, _config, report) => {
        const binding = bindingView(object);
        if (!binding?.roleRef) {
            return;
        }
        for (const subject of clusterAdminServiceAccounts(binding.roleRef, binding.subjects)) {
            report(
                `${describeObject(binding.kind, binding.identity)} binds ClusterRole "cluster-admin" to ${describeSubject(subject)}; bind a role with only the permissions the workload needs`,
            );
        }
    },
);

/**
 * A role the cluster holds, with any power of the set (namespaced ones inside its namespace
 * included: everyone holds them), bound to a broad group: by a binding, a patch of a binding, or
 * a patch of a role the cluster already binds to everyone (OpenShift's and Kubernetes'
 * `system:basic-user`, `system:discovery`, …). Judged before the binding exists.
 */
export const noPowerForBroadGroups = objectPolicy(
    {
        name: "k8s-no-power-for-broad-groups",
        description: `No binding gives a role the cluster holds (Kubernetes', OpenShift's or OLM's) any power of the dangerous-request set, namespaced ones included, to a broad group (${BROAD_GROUPS.join(", ")}, system:serviceaccounts:<namespace>, system:anonymous); nor does a patch add such a power to a role the cluster binds to one.`,
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it, and leave the roles the cluster gives everyone as they are. On OpenShift system:authenticated:oauth is every user who can log in through the cluster's identity providers.",
    },
    (object, _config, report) => {
        const binding = bindingView(object);
        if (binding) {
            const role = knownRoleOf(binding);
            if (!role) return;
            const powers = [...new Set(powersOf(role.rules, bindingScope(binding, true), wellKnown().powerful).map((f) => f.power))];
            if (powers.length === 0) return;
            // cluster-admin to every service account is k8s-no-cluster-admin-service-accounts' to report.
            const reported = new Set(clusterAdminServiceAccounts(binding.roleRef, binding.subjects));
            for (const subject of binding.subjects.filter((s) => isBroadSubject(s) && !reported.has(s))) {
                report(
                    `${describeObject(binding.kind, binding.identity)} binds ${describeRef(binding)} (${role.source}), which gives ${powerList(powers)}, to ${describeSubject(subject)}; bind it to the named subjects that need it`,
                );
            }
            return;
        }
        const role = roleView(object);
        if (!role?.type.patch || !role.live) return;
        const known = wellKnown().authorizer;
        for (const b of known.objects.bindings) {
            const same =
                b.roleRef.kind === role.kind &&
                b.roleRef.name === role.identity.name &&
                (role.kind === "ClusterRole" || b.namespace === role.identity.namespace);
            const broad = b.subjects.filter(isBroadSubject);
            if (!same || broad.length === 0) continue;
            const before = new Set(
                powersOf(
                    role.live.rules,
                    b.namespace ? { namespace: b.namespace, everyone: true } : { everyone: true },
                    wellKnown().powerful,
                ).map((f) => f.power),
            );
            const gained = [
                ...new Set(
                    powersOf(
                        role.rules,
                        b.namespace ? { namespace: b.namespace, everyone: true } : { everyone: true },
                        wellKnown().powerful,
                    )
                        .map((f) => f.power)
                        .filter((p) => !before.has(p)),
                ),
            ];
            if (gained.length > 0) {
                report(
                    `${describeObject(role.kind, role.identity)} is bound to ${broad.map(describeSubject).join(", ")} by ${b.kind} ${JSON.stringify(b.name)} (${b.source ?? "the cluster"}); this patch gives them ${powerList(gained)}; grant the power through a role of your own bound to the subjects that need it`,
                );
            }
        }
    },
);

interface PowerfulBindingsConfig {
    allowedBindings: string[];
}

/**
 * A role the cluster holds (admin, edit, a controller's role, an SCC's role…) bound to anyone with
 * a power of the set at the binding's scope; broad groups and cluster-admin for service accounts
 * are the two policies above's to report. A patch of a binding the pack does not know that leaves
 * out roleRef is reported: what it grants cannot be judged.
 */
export const noPowerfulBindings = objectPolicy<PowerfulBindingsConfig>(
    {
        name: "k8s-no-powerful-bindings",
        description:
            "No binding gives a role the cluster holds (Kubernetes', OpenShift's or OLM's) a power of the dangerous-request set at the binding's scope (a RoleBinding's namespaced powers inside its namespace pass), and no binding patch leaves its roleRef to a live binding the pack does not know.",
        severity: "critical",
        remediationSteps:
            "Bind a role of the stack's own with only the verbs and resources the subject needs (a RoleBinding where the power is namespaced). A patch of a binding must state its roleRef. A reviewed binding goes on allowedBindings.",
        config: {
            allowedBindings: stringList(
                "Bindings this policy does not judge: ClusterRoleBinding names, and RoleBindings as namespace/name.",
            ),
        },
    },
    (object, config, report) => {
        const binding = bindingView(object);
        if (!binding || config.allowedBindings.includes(binding.allowName)) return;
        if (binding.unjudged) {
            report(`${describeObject(binding.kind, binding.identity)} cannot be judged: ${binding.unjudged}`);
            return;
        }
        const role = knownRoleOf(binding);
        if (!role) return;
        const powers = [...new Set(powersOf(role.rules, bindingScope(binding, false), wellKnown().powerful).map((f) => f.power))];
        if (powers.length === 0) return;
        const clusterAdmins = new Set(clusterAdminServiceAccounts(binding.roleRef, binding.subjects));
        const subjects = binding.subjects.filter((s) => !isBroadSubject(s) && !clusterAdmins.has(s));
        if (subjects.length > 0) {
            report(
                `${describeObject(binding.kind, binding.identity)} binds ${describeRef(binding)} (${role.source}), which gives ${powerList(powers)}, to ${subjects.map(describeSubject).join(", ")}; bind a role of your own with only what they need, or add ${JSON.stringify(binding.allowName)} to allowedBindings`,
            );
        }
    },
);

/**
 * A role the stack declares, with any power of the set (namespaced ones inside its namespace
 * included), bound to a broad group. A stack policy: the role is read beside the binding.
 */
export const noEverythingForEveryone = stackPolicy(
    {
        name: "k8s-no-admin-for-everyone",
        description:
            "No binding gives a role of the stack any power of the dangerous-request set (namespaced ones inside its namespace included) to a broad group: system:authenticated, system:authenticated:oauth, system:unauthenticated, system:anonymous, all service accounts (of the cluster or of a namespace).",
        severity: "critical",
        remediationSteps:
            "Bind the role to the named users, groups or service accounts that need it. A binding to system:authenticated gives it to every account of the cluster (and of its identity provider; on OpenShift system:authenticated:oauth to every user who logs in), to system:unauthenticated or system:anonymous to anyone who can reach the API server, to system:serviceaccounts to every workload.",
    },
    (args, _config, report) => {
        const objects = args.resources.flatMap((resource) => carriedObjects(resource).map((object) => ({ object, urn: resource.urn })));
        const bindings = objects.flatMap(({ object, urn }) => {
            const binding = bindingView(object);
            return binding && !binding.type.patch && binding.roleRef && binding.subjects.some(isBroadSubject) ? [{ binding, urn }] : [];
        });
        if (bindings.length === 0) return;
        const roles = objects.flatMap(({ object }) => {
            const role = roleView(object);
            return role && !role.type.patch ? [role] : [];
        });
        const stack: RbacObjects = {
            clusterRoles: roles.filter((r) => r.kind === "ClusterRole").map(asClusterRole),
            roles: roles
                .filter((r) => r.kind === "Role")
                .map((r) => ({ name: r.identity.name, namespace: r.identity.namespace ?? "default", rules: r.rules, source: "the stack" })),
            bindings: [],
        };
        const declared = new Set(
            roles.map((r) => `${r.kind}/${r.kind === "Role" ? `${r.identity.namespace ?? "default"}/` : ""}${r.identity.name}`),
        );
        const authorizer = new RbacAuthorizer(mergeObjects(wellKnown().authorizer.objects, stack));
        for (const { binding, urn } of bindings) {
            const ref = binding.roleRef as { kind: string; name: string };
            const namespace = binding.kind === "RoleBinding" ? (binding.identity.namespace ?? "default") : undefined;
            // A role the cluster holds is k8s-no-power-for-broad-groups' to report, before the binding exists.
            if (!declared.has(`${ref.kind}/${ref.kind === "Role" ? `${namespace}/` : ""}${ref.name}`)) continue;
            const rules = authorizer.roleRefRules(ref, namespace) ?? [];
            const powers = [...new Set(powersOf(rules, bindingScope(binding, true), wellKnown().powerful).map((f) => f.power))];
            if (powers.length === 0) continue;
            const what = powers.includes("everything") ? "which grants everything" : `which gives ${powerList(powers)}`;
            for (const subject of binding.subjects.filter(isBroadSubject)) {
                report(
                    `${describeObject(binding.kind, binding.identity)} binds ${ref.kind} ${JSON.stringify(ref.name)}, ${what}, to ${describeSubject(subject)}; bind it to the named subjects that need it`,
                    urn,
                );
            }
        }
    },
);
