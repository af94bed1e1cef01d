/**
 * The reconcile capability in the stack: the PKO Stack that runs this stack on a schedule, its
 * ServiceAccount and RBAC. Inside PKO's workspace the program reaches the cluster in-cluster:
 * the Stack sets `cluster` inline with `inCluster: true` over the checked-in config.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Reconcile } from "./index";
import type { PolicyRule } from "./rbac";
import { pkoStackName } from "./names";
import { derivedResyncSeconds } from "./rules";
import { FluxProgramSource, GitProgramSource } from "./stack";

/** The parts of the validated `reconcile` config section the capability installs from. */
export interface ReconcileSettings {
    /** Create the namespace the Stack and its ServiceAccount live in. */
    readonly createNamespace: boolean;
    /** The namespace of the Stack and its ServiceAccount. */
    readonly namespace: string;
    /** The Pulumi stack PKO runs. @default this stack (`<organization>/<project>/<stack>`) */
    readonly stack?: string;
    /** The program's git source (or `flux`). */
    readonly git?: GitProgramSource;
    /** The program's Flux source (or `git`). */
    readonly flux?: FluxProgramSource;
    /** The backend URL. @default the CLI's default (Pulumi Cloud) */
    readonly backend?: string;
    /** Environment variables from Secrets, by variable name. */
    readonly environment: Readonly<Record<string, { readonly name: string; readonly key: string }>>;
    /** Seconds between runs. @default derived from `certificates.renewBeforeDays` (schedule.ts) */
    readonly resyncFrequencySeconds?: number;
    /** The ServiceAccount PKO runs the program as. */
    readonly serviceAccountName: string;
}

/** The cluster PKO's runs reach in-cluster, as the inline `cluster-platform:cluster` config names it. */
export interface ReconciledCluster {
    /** `cluster.name`. */
    readonly name: string;
    /** `cluster.platform`. */
    readonly platform: string;
}

/** The Reconcile component for this stack; `rules` are the recorded kinds' rules, resolved once the stack is sealed. */
export function installReconcile(
    settings: ReconcileSettings,
    cluster: ReconciledCluster,
    renewBeforeDays: number,
    rules: Promise<PolicyRule[]>,
    kubernetes: k8s.Provider,
): Reconcile {
    return new Reconcile(
        "reconcile",
        {
            createNamespace: settings.createNamespace,
            rules,
            stack: {
                name: pkoStackName(cluster.name),
                namespace: settings.namespace,
                stack: settings.stack ?? `${pulumi.getOrganization()}/${pulumi.getProject()}/${pulumi.getStack()}`,
                git: settings.git,
                flux: settings.flux,
                backend: settings.backend,
                environment: Object.fromEntries(
                    Object.entries(settings.environment).map(([name, ref]) => [name, { secret: ref.name, key: ref.key }]),
                ),
                resyncFrequencySeconds: settings.resyncFrequencySeconds ?? derivedResyncSeconds(renewBeforeDays),
                serviceAccountName: settings.serviceAccountName,
                config: {
                    "cluster-platform:cluster": { name: cluster.name, platform: cluster.platform, inCluster: true, runByOperator: true },
                },
            },
        },
        { providers: { kubernetes } },
    );
}
