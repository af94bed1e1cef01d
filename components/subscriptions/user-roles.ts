/**
 * Namespace users and the Bundle API: ClusterRoles aggregated into Kubernetes' user-facing roles,
 * so a project admin or editor can create Bundles (the namespaced console sample) and a viewer can
 * read them. Aggregation is how CRDs extend admin/edit/view
 * (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#aggregated-clusterroles; the
 * default roles select `rbac.authorization.k8s.io/aggregate-to-<role>: "true"`). ClusterBundles are
 * not included: they are cluster-scoped and only this stack declares them.
 */
import { BUNDLE_PLURAL, SUBSCRIPTION_GROUP } from "../../webhook/api";
import { platformLabels } from "../shared/labels";
import { aggregationLabel } from "./rules";

const READ = ["get", "list", "watch"];
const WRITE = ["create", "update", "patch", "delete", "deletecollection"];

/** The two roles: edit (into admin and edit) and view (into view, and through it into edit and admin). */
export function bundleUserRoleManifests() {
    const role = (name: string, verbs: string[], aggregateTo: string[]) => ({
        apiVersion: "rbac.authorization.k8s.io/v1" as const,
        kind: "ClusterRole" as const,
        metadata: {
            name,
            labels: platformLabels("subscriptions", Object.fromEntries(aggregateTo.map((target) => [aggregationLabel(target), "true"]))),
        },
        rules: [{ apiGroups: [SUBSCRIPTION_GROUP], resources: [BUNDLE_PLURAL], verbs }],
    });
    return [role("subscription-bundles-edit", [...READ, ...WRITE], ["admin", "edit"]), role("subscription-bundles-view", READ, ["view"])];
}
