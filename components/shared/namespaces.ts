/**
 * Namespaced objects wait for the Namespace the stack creates for them. Declaring each
 * dependency by hand missed some (a serving Secret, a Certificate, a PodDisruptionBudget, a
 * Service), and the API server refuses an object in a namespace that does not exist yet; a
 * component transformation finds them all by `metadata.namespace`.
 */
import * as pulumi from "@pulumi/pulumi";
import { asResolvedRecord } from "./resolved-records";

/** The namespace an object's props name, when it is a plain string (unknown for Outputs). */
export function namespaceNamed(props: Record<string, unknown>): string | undefined {
    const namespace = asResolvedRecord(props.metadata)?.namespace;
    return typeof namespace === "string" ? namespace : undefined;
}

/**
 * A `transformations` entry: every Kubernetes object (not a read) whose `metadata.namespace` is
 * one of `created` (name → the Namespace resource) depends on that Namespace.
 */
export function dependOnCreatedNamespaces(created: ReadonlyMap<string, pulumi.Resource>): pulumi.ResourceTransformation {
    return ({ type, props, opts }) => {
        const namespace = type.startsWith("kubernetes:") && opts.id === undefined ? namespaceNamed(props) : undefined;
        const resource = namespace === undefined ? undefined : created.get(namespace);
        if (resource === undefined || dependsAlreadyOn(opts.dependsOn, resource)) {
            return undefined;
        }
        return { props, opts: pulumi.mergeOptions(opts, { dependsOn: [resource] }) };
    };
}

/** Whether a plain `dependsOn` names `resource` already (an Output-valued one is not looked into). */
function dependsAlreadyOn(dependsOn: pulumi.CustomResourceOptions["dependsOn"], resource: pulumi.Resource): boolean {
    return dependsOn === resource || (Array.isArray(dependsOn) && dependsOn.includes(resource));
}
