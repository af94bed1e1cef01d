/**
 * What the program declares, recorded while it runs: a stack transformation (registered before
 * the first resource; legacy transformations run in the SDK, under the engine and under mocks
 * alike) notes the Kubernetes kind and use of every custom resource, and the plurals of the CRDs
 * it declares, and `seal()` turns them into the ClusterRole rules once every component has been
 * constructed. A kind first declared
 * after the seal would be missing from the rules (PKO's run would be forbidden to manage it), so it
 * fails the run instead, naming the resource.
 */
import * as pulumi from "@pulumi/pulumi";
import { ApiResource, Plurals, resourcesOfCrd } from "../shared/api-resources";
import { KindUse, kindUseOfToken, PolicyRule, reconcileRules } from "./rbac";

const CRD_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";

export interface DeclaredKinds {
    /** Resolves `rules` from what was recorded so far. */
    seal(): void;
    /** The ClusterRole's rules, once sealed. */
    rules: Promise<PolicyRule[]>;
}

export function recordDeclaredKinds(): DeclaredKinds {
    const uses = new Map<string, KindUse>();
    // The plurals of the CRDs the stack declares: the kinds they serve need no discovery.
    const crds: ApiResource[] = [];
    let sealed = false;
    let resolveRules: (rules: PolicyRule[]) => void = () => undefined;
    const rules = new Promise<PolicyRule[]>((resolve) => (resolveRules = resolve));
    pulumi.runtime.registerStackTransformation((args) => {
        if (args.type === CRD_TYPE) {
            crds.push(...resourcesOfCrd({ kind: "CustomResourceDefinition", ...(args.props as Record<string, unknown>) }));
        }
        const use = args.resource instanceof pulumi.CustomResource ? kindUseOfToken(args.type, args.opts.id !== undefined) : undefined;
        const key = use ? `${use.apiVersion}|${use.kind}|${use.use}` : undefined;
        if (use && key && !uses.has(key)) {
            if (sealed) {
                throw new Error(
                    `${args.type} ${JSON.stringify(args.name)} is declared after the reconcile RBAC was sealed: its kind is not in the rules PKO runs with (components/composition/phases.ts seals last)`,
                );
            }
            uses.set(key, use);
        }
        return undefined;
    });
    return {
        seal: () => {
            sealed = true;
            resolveRules(reconcileRules([...uses.values()], new Plurals(crds)));
        },
        rules,
    };
}
