import * as pulumi from "@pulumi/pulumi";
import { LOAD_BALANCER_TAGS_ANNOTATION, loadBalancerTagAnnotation, parseLoadBalancerTagAnnotation } from "./consumers";
import { isResolvedRecord } from "../shared/resolved-records";

const SERVICE_TYPE = "kubernetes:core/v1:Service";

type Tags = Record<string, string>;
type Metadata = { annotations?: pulumi.Input<Record<string, pulumi.Input<string>>> } & Record<string, unknown>;

/**
 * A legacy transformation (registered for the whole stack) that gives every LoadBalancer
 * Service the stack declares the load balancer tags annotation, so the AWS cloud provider or
 * load balancer controller tags the load balancers it creates. `tagsFor(label, own)` merges
 * the stack's tags under the tags the Service's own annotation already sets (those win, with
 * a warning). Only the annotation's value is computed, so the Service's name stays known in
 * every preview.
 */
export function loadBalancerTagTransformation(
    tagsFor: (service: string, own: Readonly<Tags>) => pulumi.Output<Tags>,
): pulumi.ResourceTransformation {
    return ({ type, name, props, opts }) => {
        if (type !== SERVICE_TYPE || !isLoadBalancer(props.spec) || !isResolvedRecord(props.metadata ?? {})) {
            return undefined;
        }
        const metadata = (props.metadata ?? {}) as Metadata;
        const label = `${SERVICE_TYPE} ${JSON.stringify(name)}`;
        const annotations = pulumi.output(metadata.annotations ?? {});
        const own = annotations.apply((a) => parseLoadBalancerTagAnnotation(a[LOAD_BALANCER_TAGS_ANNOTATION] ?? ""));
        const value = own.apply((o) => tagsFor(label, o)).apply(loadBalancerTagAnnotation);
        const merged = pulumi.all([annotations, value]).apply(([a, v]) => ({ ...a, [LOAD_BALANCER_TAGS_ANNOTATION]: v }));
        return { props: { ...props, metadata: { ...metadata, annotations: merged } }, opts };
    };
}

/** A spec whose type is LoadBalancer, as written in the program (a computed type cannot be judged here). */
function isLoadBalancer(spec: unknown): boolean {
    return isResolvedRecord(spec) && (spec as { type?: unknown }).type === "LoadBalancer";
}
