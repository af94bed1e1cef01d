/**
 * The PKO `Stack` (pulumi.com/v1) that runs this stack from inside the cluster, as a plain
 * object. Pure. Field names and meanings from pulumi/pulumi-kubernetes-operator
 * operator/api/pulumi/shared/stack_types.go (StackSpec, GitSource, FluxSource, ResourceRef);
 * tests validate the object against the CRD schema in ../shared/testdata/pulumi-kubernetes-operator/.
 */
import { platformLabels } from "../shared/labels";

export interface GitProgramSource {
    repository: string;
    branch?: string;
    commit?: string;
    directory?: string;
    shallow: boolean;
    accessTokenSecret?: { name: string; key: string };
}

export interface FluxProgramSource {
    apiVersion: string;
    kind: string;
    name: string;
    directory?: string;
}

export interface StackObjectArgs {
    /** metadata.name and namespace of the Stack object. */
    readonly name: string;
    readonly namespace: string;
    /** The fully qualified stack (`<org>/<project>/<stack>`). */
    readonly stack: string;
    /** The program's git source (`spec.projectRepo`, ...); exactly one of git and flux. @default none (flux) */
    readonly git?: GitProgramSource;
    /** The program's Flux source (`spec.fluxSource`); exactly one of git and flux. @default none (git) */
    readonly flux?: FluxProgramSource;
    /** Backend URL (`spec.backend`). @default the CLI's default (Pulumi Cloud) */
    readonly backend?: string;
    /** Environment variables from Secrets the admin names: `{VAR: {secret, key}}`. */
    readonly environment: Record<string, { secret: string; key: string }>;
    readonly resyncFrequencySeconds: number;
    readonly serviceAccountName: string;
    /** Stack config set inline over the checked-in config (the in-cluster cluster choice). */
    readonly config: Record<string, unknown>;
}

/** The Stack object. Keys in a stable order; nothing secret (Secrets are referenced by name). */
export function pkoStackObject(args: StackObjectArgs): Record<string, unknown> {
    const source = args.git
        ? {
              projectRepo: args.git.repository,
              ...(args.git.branch !== undefined ? { branch: args.git.branch } : {}),
              ...(args.git.commit !== undefined ? { commit: args.git.commit } : {}),
              ...(args.git.directory !== undefined ? { repoDir: args.git.directory } : {}),
              ...(args.git.shallow ? { shallow: true } : {}),
              ...(args.git.accessTokenSecret
                  ? {
                        gitAuth: {
                            accessToken: {
                                type: "Secret",
                                secret: { name: args.git.accessTokenSecret.name, key: args.git.accessTokenSecret.key },
                            },
                        },
                    }
                  : {}),
          }
        : {
              fluxSource: {
                  sourceRef: { apiVersion: args.flux!.apiVersion, kind: args.flux!.kind, name: args.flux!.name },
                  ...(args.flux!.directory !== undefined ? { dir: args.flux!.directory } : {}),
              },
          };
    const envRefs = Object.fromEntries(
        Object.keys(args.environment)
            .sort()
            .map((name) => [name, { type: "Secret", secret: { name: args.environment[name].secret, key: args.environment[name].key } }]),
    );
    return {
        apiVersion: "pulumi.com/v1",
        kind: "Stack",
        metadata: { name: args.name, namespace: args.namespace, labels: platformLabels("reconcile") },
        spec: {
            stack: args.stack,
            ...source,
            ...(args.backend !== undefined ? { backend: args.backend } : {}),
            envRefs,
            config: args.config,
            // Re-run on schedule even when the commit did not change: certificates renew and
            // drift is corrected between commits.
            refresh: true,
            continueResyncOnCommitMatch: true,
            resyncFrequencySeconds: args.resyncFrequencySeconds,
            // Failed runs back off exponentially up to this (PKO's default is 24 hours); capped at
            // the schedule so a failing run is retried at least as often as the schedule runs.
            retryMaxBackoffDurationSeconds: args.resyncFrequencySeconds,
            serviceAccountName: args.serviceAccountName,
            // Deleting the Stack object (reconcile removed from config) must never destroy the stack.
            destroyOnFinalize: false,
        },
    };
}
