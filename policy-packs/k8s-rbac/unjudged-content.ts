/**
 * Content the pack cannot see is reported, never passed in silence: a Helm Release (the
 * provider renders the chart; its objects never reach an analyzer), a yaml/v2 ConfigGroup or
 * ConfigFile (objects read from files or YAML text at this resource), and a custom resource
 * that carries RBAC rules or a pod spec the API server will act on (an operator's CSV, say).
 * Advisory: the pack says what it did not judge; it cannot say that it is wrong.
 */
import { looksLikePolicyRule } from "../../components/shared/rbac";
import { RBAC_GROUPS } from "../../components/shared/rbac-power";
import { describeObject, identityOf, k8sTypeOf, objectPolicy } from "../shared/k8s";
import { asObject, known, UNKNOWN } from "../shared/values";

/** Types whose content never reaches the pack as objects, and why. */
const OPAQUE_CONTAINER_TYPES: Readonly<Record<string, string>> = {
    "kubernetes:helm.sh/v3:Release":
        "the provider renders and applies the chart itself, so its RBAC, webhooks and pods never reach a policy pack",
    "kubernetes:yaml/v2:ConfigGroup":
        "the objects in its files, yaml and objs inputs are judged only as the provider registers them one by one; what this resource holds is not read here",
    "kubernetes:yaml/v2:ConfigFile":
        "the objects in its file are judged only as the provider registers them one by one; what this resource holds is not read here",
};

const MAX_DEPTH = 8;

/**
 * Where a custom resource carries RBAC rules or pod specs: JSON paths, at most one per kind of
 * content and path prefix. Unknown values (a preview) are skipped: they hold nothing to report yet.
 */
function carriedRbacOrPods(value: unknown, path: string, depth: number, found: Set<string>): void {
    if (depth > MAX_DEPTH || found.size >= 3) {
        return;
    }
    if (Array.isArray(value)) {
        value.forEach((item, index) => {
            const entry = known(() => item);
            if (entry !== UNKNOWN) {
                carriedRbacOrPods(entry, `${path}[${index}]`, depth + 1, found);
            }
        });
        return;
    }
    const o = asObject(value);
    if (!o) {
        return;
    }
    if (looksLikePolicyRule(o)) {
        found.add(`RBAC rules (${path.replace(/\[\d+\]$/, "[]")})`);
        return;
    }
    if (Array.isArray(o.containers)) {
        found.add(`a pod spec (${path})`);
        return;
    }
    for (const key of Object.keys(o)) {
        const entry = known(() => o[key]);
        if (entry !== UNKNOWN && typeof entry === "object" && entry !== null) {
            carriedRbacOrPods(entry, path === "" ? key : `${path}.${key}`, depth + 1, found);
        }
    }
}

/**
 * Groups Kubernetes itself serves (the core group, `apps`, `batch`, `policy`, … and `*.k8s.io`),
 * and OpenShift's legacy RBAC group, whose RBAC and pod-carrying kinds the other policies judge. Every other group's kinds are
 * custom resources here, OpenShift's included (a DeploymentConfig's pod template is reported).
 */
function isKubernetesGroup(group: string): boolean {
    return !group.includes(".") || group.endsWith(".k8s.io") || (RBAC_GROUPS as readonly string[]).includes(group);
}

export const unjudgedContent = objectPolicy(
    {
        name: "k8s-unjudged-content",
        description:
            "Kubernetes content this pack cannot judge (Helm Releases, yaml/v2 ConfigGroups, custom resources carrying RBAC or pods) is reported as not judged.",
        severity: "medium",
        enforcementLevel: "advisory",
        remediationSteps:
            "Review the content yourself, or declare it so the pack sees it: render a chart with kubernetes:helm.sh/v4:Chart (its objects are registered as resources and judged), declare RBAC as Role/ClusterRole objects. Set this policy to disabled once reviewed if the advisory is noise.",
    },
    (args, _config, report) => {
        const opaque = OPAQUE_CONTAINER_TYPES[args.type];
        if (opaque) {
            report(`${args.type} "${args.name}" was not judged: ${opaque}`);
            return;
        }
        const type = k8sTypeOf(args.type);
        if (!type || isKubernetesGroup(type.group)) {
            return;
        }
        const found = new Set<string>();
        for (const key of Object.keys(args.props).filter((k) => k !== "metadata" && k !== "apiVersion" && k !== "kind")) {
            const entry = known(() => args.props[key]);
            if (entry !== UNKNOWN) {
                carriedRbacOrPods(entry, key, 1, found);
            }
        }
        if (found.size > 0) {
            report(
                `${describeObject(`${type.kind} (${type.group})`, identityOf(args.props, args.name))} was not judged: it carries ${[...found].join(", ")}, which the API server or an operator will act on but this pack does not read for custom resources; review them`,
            );
        }
    },
);
