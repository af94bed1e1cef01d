/**
 * The APIs subscription injection needs beyond core Kubernetes, checked against discovery before
 * anything is created:
 * - the ValidatingAdmissionPolicy that refuses ClusterBundles the stack did not declare
 *   (cluster-bundle-policy.ts): `admissionregistration.k8s.io/v1` from Kubernetes 1.30 (OpenShift
 *   4.17), `v1beta1` in 1.28-1.29 where enabled; neither served, the policy is skipped with a
 *   warning saying what is then unguarded;
 * - the console samples: `console.openshift.io/v1` ConsoleYAMLSample, absent when the Console
 *   capability is disabled (OpenShift 4.12+ optional capabilities); then skipped with a warning.
 */
import type { ServedResources } from "../shared/discovery";

export type AdmissionPolicyVersion = "v1" | "v1beta1";

export interface SubscriptionClusterApis {
    /** The ValidatingAdmissionPolicy version to use; undefined: none served, no policy. */
    admissionPolicyVersion: AdmissionPolicyVersion | undefined;
    /** Whether ConsoleYAMLSamples can be created (the Console capability is on). */
    consoleSamples: boolean;
}

/** Without a cluster to ask (rendering to a directory): the current APIs. */
export const ASSUMED_SUBSCRIPTION_APIS: SubscriptionClusterApis = { admissionPolicyVersion: "v1", consoleSamples: true };

const POLICY_RESOURCES = ["validatingadmissionpolicies", "validatingadmissionpolicybindings"];

/** Picks what the served resources allow (pure). */
export function chooseSubscriptionApis(served: Record<string, ReadonlySet<string>>): SubscriptionClusterApis {
    const serves = (groupVersion: string, resources: string[]) => resources.every((resource) => served[groupVersion]?.has(resource));
    const admissionPolicyVersion = (["v1", "v1beta1"] as const).find((version) =>
        serves(`admissionregistration.k8s.io/${version}`, POLICY_RESOURCES),
    );
    return { admissionPolicyVersion, consoleSamples: serves("console.openshift.io/v1", ["consoleyamlsamples"]) };
}

/** Asks discovery for the group versions `chooseSubscriptionApis` reads. */
export async function discoverSubscriptionApis(discovery: ServedResources): Promise<SubscriptionClusterApis> {
    const groupVersions = ["admissionregistration.k8s.io/v1", "admissionregistration.k8s.io/v1beta1", "console.openshift.io/v1"];
    const served = await Promise.all(groupVersions.map(discovery));
    return chooseSubscriptionApis(Object.fromEntries(groupVersions.map((groupVersion, i) => [groupVersion, served[i]])));
}

/** The warning when no ValidatingAdmissionPolicy version is served. */
export const UNGUARDED_WARNING =
    "this cluster serves no ValidatingAdmissionPolicy API (admissionregistration.k8s.io/v1 from Kubernetes 1.30 / OpenShift 4.17, or v1beta1 where enabled): the policy refusing ClusterBundles the stack did not declare is not created, so a ClusterBundle created by hand is accepted and mounts nothing (its shares, ClusterRole and driver access do not exist)";

/** The warning when the Console capability is off. */
export const NO_CONSOLE_WARNING =
    "the Console capability is disabled on this cluster (no console.openshift.io/v1 ConsoleYAMLSample API): the subscription console samples are not created";
