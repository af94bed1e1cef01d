/**
 * Declares a bundle's other objects (bundle-objects.ts) as OLM's ExecutePlan creates them: the core
 * and RBAC kinds as their typed resources, the supported kinds of other APIs as custom resources at
 * their own apiVersion. A Secret's `data` and `stringData` are the bundle's own content and enter
 * the state only as Pulumi secrets (a preview shows `[secret]`). Objects another install of the
 * same bundle shares are kept on this one's removal (the next install takes them back).
 *
 * A bundle Service is created without the provider's readiness await, as ExecutePlan creates it and
 * moves on: pulumi-kubernetes waits for a `LoadBalancer` Service until the cloud writes its ingress
 * address (`provider/pkg/await/service.go`, `processServiceEvent`), which a cluster without a
 * load-balancer controller never does. The tagger bundle's `tagio-external` held `up` for the
 * provider's 10 minutes on the real tier, and the Deployments ordered after it were never created.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { BundleObjectPlan, bundleObjectKey } from "./bundle-objects";

/** The provider's annotation for "create or update, then return without awaiting readiness" (`provider/pkg/metadata/annotations.go`). */
export const SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait";

/** The manifest with SKIP_AWAIT_ANNOTATION set, its other annotations kept. Pure. */
export function withoutReadinessAwait(manifest: Record<string, unknown>): Record<string, unknown> {
    const metadata = (manifest.metadata as Record<string, unknown> | undefined) ?? {};
    const annotations = (metadata.annotations as Record<string, string> | undefined) ?? {};
    return { ...manifest, metadata: { ...metadata, annotations: { ...annotations, [SKIP_AWAIT_ANNOTATION]: "true" } } };
}

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
                return new k8s.core.v1.Service(name, withoutReadinessAwait(manifest) as k8s.core.v1.ServiceArgs, options);
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
