/**
 * Declares a bundle's other objects (bundle-objects.ts) as OLM's ExecutePlan creates them: the core
 * and RBAC kinds as their typed resources, the supported kinds of other APIs as custom resources at
 * their own apiVersion. A Secret's `data` and `stringData` are the bundle's own content and enter
 * the state only as Pulumi secrets (a preview shows `[secret]`). Objects another install of the
 * same bundle shares are kept on this one's removal (the next install takes them back).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { BundleObjectPlan, bundleObjectKey } from "./bundle-objects";

export function declareBundleObjects(
    op: string,
    objects: readonly BundleObjectPlan[],
    shared: ReadonlySet<string>,
    opts: { parent: pulumi.Resource; dependsOn: pulumi.Resource[] },
): pulumi.Resource[] {
    return objects.map((object) => {
        const name = `${op}-bundle-${object.kind.toLowerCase()}-${object.name}`;
        const options: pulumi.CustomResourceOptions = { ...opts, ...(shared.has(bundleObjectKey(object)) ? { retainOnDelete: true } : {}) };
        const manifest = object.manifest as Record<string, unknown>;
        switch (object.dynamic ? "" : object.kind) {
            case "Secret": {
                const { data, stringData, ...rest } = manifest;
                return new k8s.core.v1.Secret(
                    name,
                    {
                        ...(rest as k8s.core.v1.SecretArgs),
                        ...(data === undefined ? {} : { data: pulumi.secret(data as Record<string, string>) }),
                        ...(stringData === undefined ? {} : { stringData: pulumi.secret(stringData as Record<string, string>) }),
                    },
                    options,
                );
            }
            case "ConfigMap":
                return new k8s.core.v1.ConfigMap(name, manifest as k8s.core.v1.ConfigMapArgs, options);
            case "Service":
                return new k8s.core.v1.Service(name, manifest as k8s.core.v1.ServiceArgs, options);
            case "ServiceAccount":
                return new k8s.core.v1.ServiceAccount(name, manifest as k8s.core.v1.ServiceAccountArgs, options);
            case "Role":
                return new k8s.rbac.v1.Role(name, manifest as k8s.rbac.v1.RoleArgs, options);
            case "RoleBinding":
                return new k8s.rbac.v1.RoleBinding(name, manifest as unknown as k8s.rbac.v1.RoleBindingArgs, options);
            case "ClusterRole":
                return new k8s.rbac.v1.ClusterRole(name, manifest as k8s.rbac.v1.ClusterRoleArgs, options);
            case "ClusterRoleBinding":
                return new k8s.rbac.v1.ClusterRoleBinding(name, manifest as unknown as k8s.rbac.v1.ClusterRoleBindingArgs, options);
            default:
                return new k8s.apiextensions.CustomResource(name, manifest as unknown as k8s.apiextensions.CustomResourceArgs, options);
        }
    });
}
