/**
 * The phases of one run of the program, in the only order their values allow:
 *
 *  1. `openStack`: the declared kinds are recorded (a stack transformation, so it must come before
 *     the first resource), the previous update's outputs are read, and what running pods would lose
 *     is warned about: all before a single provider exists, so before any change.
 *  2. `tagStack`: the Kubernetes providers are made here and nowhere earlier, then the aws-tags
 *     capability registers its stack transformations; every capability takes its providers from the
 *     `TaggedStack` this returns, so nothing taggable can be declared before the tagging.
 *  3. (index.ts) the capabilities, composed from the `TaggedStack`.
 *  4. `finishStack`: the reconcile objects, then the declared kinds are sealed into their RBAC and
 *     the certificates' outputs are taken, once every capability has been composed. Both close
 *     behind them: a kind declared after the seal, or an issuer asked for after the certificates'
 *     outputs, fails the run instead of being silently left out.
 *
 * A phase's input is the previous phase's result, which only that phase makes (its providers and
 * kinds are held under module-private keys), so the phases cannot be called out of order.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { awsAssetPlan } from "../aws-assets";
import { AwsTags, awsTagsOutputs, installAwsTags } from "../aws-tags";
import { Certificates } from "../certificates";
import { StackConfig } from "../config";
import { DeclaredKinds, recordDeclaredKinds } from "../reconcile";
import { installReconcile } from "../reconcile/install";
import { ConversionResets } from "../operator";
import type { InstallRecords } from "../operator/rename";
import { adoptionTransformation } from "../shared/adoption";
import { ClusterTarget, kubernetesConnectionArgs, projectDirectory } from "../shared/cluster";
import { objectLister } from "../shared/object-presence";
import { ConversionResetState, conversionResets, InstalledCrds, retentionMessages } from "../shared/crd-retention";
import { carriedOutputs, PreviousUpdate, readPreviousUpdate } from "../shared/previous-update";
import { KeptShare, keepSharesOfRunningPods, podSharesOnly, ShareGrants } from "../subscriptions/running-pods";
import { webhookImageOutput } from "../webhook-image";
import { connectionOf } from "./preflight";

const KINDS = Symbol("declared kinds");
const CONNECTION = Symbol("connection");

/** Phase 1's result: nothing is registered yet but the reference to the previous update. */
export interface OpenedStack {
    /** The validated stack config. */
    readonly config: StackConfig;
    /** The cluster the stack governs. */
    readonly cluster: ClusterTarget;
    /** What the previous update carried (components/shared/previous-update.ts). */
    readonly previous: PreviousUpdate;
    /** This update's share grants (kept shares included), for the next update's running-pod check. */
    readonly shareGrants: ShareGrants;
    /** Shares this update no longer declares that running pods still mount: kept until they end. */
    readonly keptShares: KeptShare[];
    readonly [KINDS]: DeclaredKinds | undefined;
    readonly [CONNECTION]: ReturnType<typeof connectionOf>;
}

/** Phase 1: record kinds, read the previous update, warn about running-pod losses. */
export async function openStack(config: StackConfig): Promise<OpenedStack> {
    // First: the recording is a stack transformation, which sees only resources registered after it.
    const kinds = config.reconcile.enabled ? recordDeclaredKinds() : undefined;
    const connection = connectionOf(config);
    const cluster: ClusterTarget = {
        name: config.cluster.name,
        platform: config.cluster.platform,
        live: connection.kind !== "renderYamlToDirectory",
    };
    const previous = await readPreviousUpdate();
    for (const warning of previous.warnings) {
        pulumi.log.warn(warning);
    }
    // With the capability off nothing is declared, kept shares included: every share goes (the preview says so).
    const subscriptions = config.subscriptions;
    const removals = await keepSharesOfRunningPods(
        previous.values.subscriptionShareGrants,
        subscriptions.enabled ? subscriptions.clusterBundles : [],
        subscriptions.enabled ? subscriptions.removedShares : "disabled",
        async () =>
            connection.kind === "renderYamlToDirectory"
                ? "unknown"
                : objectLister(connection, projectDirectory())({ apiVersion: "v1", kind: "Pod", plural: "pods" }, podSharesOnly),
    );
    return {
        config,
        cluster,
        previous,
        shareGrants: removals.grants,
        keptShares: removals.kept,
        [KINDS]: kinds,
        [CONNECTION]: connection,
    };
}

/** Phase 2's result: the providers, and the stack's tagging in place. */
export interface TaggedStack extends Omit<OpenedStack, typeof CONNECTION> {
    /** The Kubernetes provider every capability uses (server-side apply). */
    readonly kubernetes: k8s.Provider;
    /**
     * Adopts objects that already exist instead of failing on them: every resource the adoption
     * rule (components/shared/adoption.ts) decides `adopt` is declared on it.
     */
    readonly adoptingKubernetes: k8s.Provider;
    /** The AWS assets and tags, when `aws.enabled`. */
    readonly awsTags?: AwsTags;
}

/** Phase 2: the providers, then AwsTags and its stack transformations (components/aws-tags/install.ts). */
export function tagStack(opened: OpenedStack): TaggedStack {
    const { [CONNECTION]: connection, ...rest } = opened;
    const connectionArgs = kubernetesConnectionArgs(connection);
    const kubernetes = new k8s.Provider("kubernetes", { ...connectionArgs, enableServerSideApply: true });
    // The adoption rule (components/shared/adoption.ts): `upsertExistingObjects` exists from provider
    // 4.29 (pulumi-kubernetes PR #4278: without it a create is a POST that fails on an existing object).
    // The lockfile pins 4.25.0, the only version the Go module proxy builds for the real tier, whose
    // creates are server-side applies that always upsert; its SDK serializes only the arguments it
    // declares, so the key reaches a provider only from an SDK that has it (4.29+), where it is what
    // keeps these creates upserts.
    const adoptingArgs: k8s.ProviderArgs & { readonly upsertExistingObjects: boolean } = {
        ...connectionArgs,
        enableServerSideApply: true,
        upsertExistingObjects: true,
    };
    const adoptingKubernetes = new k8s.Provider("kubernetes-adopting", adoptingArgs);
    // Before any capability: the resources decided `adopt` go through the adopting provider.
    pulumi.runtime.registerStackTransformation(adoptionTransformation(adoptingKubernetes));
    const { config, cluster, previous } = opened;
    // The webhook image is pushed to `awsTags.webhookRepositoryUrl` when the plan has the ECR repository.
    const assets = awsAssetPlan({
        ...config,
        webhookImage: { ...config.webhookImage, output: webhookImageOutput(config.webhookImage, cluster.live) },
    });
    const awsTags = config.aws.enabled ? installAwsTags(config.aws, assets, cluster, kubernetes, previous.values) : undefined;
    return { ...rest, kubernetes, adoptingKubernetes, awsTags };
}

/** What index.ts composed in phase 3, for the last phase. */
export interface Composed {
    /** The stack's certificates: their outputs are taken last. */
    readonly certificates: Certificates;
    /** The CRDs this update installs, by owner and fate. */
    readonly crds: InstalledCrds;
    /** The operator installs, for the next update's implied renames (components/operator/rename.ts). */
    readonly operatorInstalls: InstallRecords;
    /** The capabilities' own stack outputs (none that the next update reads back). */
    readonly outputs: Record<string, unknown>;
}

/**
 * Phase 4: says which CRDs leave the stack and holds at conversion None those a removed operator's
 * webhook converted (ConversionResets), declares the reconcile objects (reconcile on), seals the
 * declared kinds into their rules, and returns the stack outputs, the certificates' last.
 */
export function finishStack(tagged: TaggedStack, composed: Composed): Record<string, unknown> {
    const { config, cluster } = tagged;
    const resets = reportCrdRetention(composed.crds, tagged.previous);
    if (Object.keys(resets).length > 0) {
        const connection = connectionOf(config);
        new ConversionResets(
            "crd-conversion-resets",
            { crds: resets, cluster, connection: connection.kind === "renderYamlToDirectory" ? undefined : connection },
            { providers: { kubernetes: tagged.kubernetes } },
        );
    }
    const kinds = tagged[KINDS];
    const reconcile = kinds
        ? installReconcile(config.reconcile, config.cluster, config.certificates.renewBeforeDays, kinds.rules, tagged.kubernetes)
        : undefined;
    // Every component, and the reconcile objects themselves, are registered by now.
    kinds?.seal();
    return {
        clusterName: cluster.name,
        ...(reconcile ? { reconcileStack: reconcile.stackObject } : {}),
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        ...composed.outputs,
        ...(tagged.awsTags ? awsTagsOutputs(tagged.awsTags, config.aws) : {}),
        ...carriedOutputs({
            // Only while there are grants: a stack without ClusterBundles keeps its outputs as they were.
            subscriptionShareGrants: Object.keys(tagged.shareGrants).length > 0 ? tagged.shareGrants : undefined,
            installedCrds: Object.keys(composed.crds).length > 0 ? composed.crds : undefined,
            conversionResets: Object.keys(resets).length > 0 ? resets : undefined,
            operatorInstalls: Object.keys(composed.operatorInstalls).length > 0 ? composed.operatorInstalls : undefined,
        }),
        // Last, once every component has issued its certificates: read back by the next update.
        ...composed.certificates.stackOutputs(),
    };
}

/**
 * Says in the preview which CRDs outlive their owner and which (opted in) die with it, and names
 * the CRDs the previous update installed that this one drops (components/shared/crd-retention.ts);
 * returns the kept CRDs whose conversion the stack holds at None.
 */
function reportCrdRetention(crds: InstalledCrds, previous: PreviousUpdate): ConversionResetState {
    const messages = retentionMessages(crds, previous.values.installedCrds);
    for (const line of messages.infos) {
        pulumi.log.info(line);
    }
    for (const line of messages.warnings) {
        pulumi.log.warn(line);
    }
    return conversionResets(crds, previous.values.installedCrds, previous.values.conversionResets);
}
