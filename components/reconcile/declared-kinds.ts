/**
 * What the program declares, recorded while it runs: a stack transformation (registered before
 * the first resource; legacy transformations run in the SDK, under the engine and under mocks
 * alike) notes the Kubernetes kind and use of every custom resource, and `seal()` turns them
 * into the ClusterRole rules once every component has been constructed.
 */
import * as pulumi from "@pulumi/pulumi";
import { KindUse, kindUseOfToken, PolicyRule, reconcileRules } from "./rbac";

export interface DeclaredKinds {
    /** Resolves `rules` from what was recorded so far. */
    seal(): void;
    /** The ClusterRole's rules, once sealed. */
    rules: Promise<PolicyRule[]>;
}

export function recordDeclaredKinds(): DeclaredKinds {
    const uses = new Map<string, KindUse>();
    let seal: () => void = () => undefined;
    const rules = new Promise<PolicyRule[]>((resolve) => {
        seal = () => resolve(reconcileRules([...uses.values()]));
    });
    pulumi.runtime.registerStackTransformation((args) => {
        const use = args.resource instanceof pulumi.CustomResource ? kindUseOfToken(args.type, args.opts.id !== undefined) : undefined;
        if (use) {
            uses.set(`${use.apiVersion}|${use.kind}|${use.use}`, use);
        }
        return undefined;
    });
    return { seal: () => seal(), rules };
}
