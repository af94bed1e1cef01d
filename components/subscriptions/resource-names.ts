/**
 * The Pulumi resource names of the subscription capability's per-object resources: kebab-case
 * `<what>-<name>` (other children are named `<component>-<what>`, as in every capability), and a
 * namespaced object's name as `<namespace>/<name>`, the form kubectl prints (a namespace is a DNS
 * label, so the `/` keeps `a-b/c` and `a/b-c` apart, which `-` would not). Names an earlier release gave a resource are its aliases: the engine then
 * renames the resource in the state instead of deleting it and creating it anew
 * (https://www.pulumi.com/docs/iac/concepts/options/aliases/), so no existing stack replaces a
 * ClusterBundle, a share or a Bundle.
 */

export interface ResourceName {
    name: string;
    /** Names earlier releases used for the same resource. */
    previous: string[];
}

export const clusterBundleResource = (bundle: string): ResourceName => ({
    name: `clusterbundle-${bundle}`,
    previous: [`clusterbundle/${bundle}`],
});

export const shareResource = (share: string): ResourceName => ({ name: `share-${share}`, previous: [`share/${share}`] });

export const bundleResource = (namespace: string, bundle: string): ResourceName => ({
    name: `bundle-${namespace}/${bundle}`,
    previous: [`bundle/${namespace}/${bundle}`],
});

/** The driver's read access to one shared object (new in the release that named it so: nothing to alias). */
export const driverReadResource = (namespace: string, share: string): ResourceName => ({
    name: `driver-read-${namespace}/${share}`,
    previous: [],
});

/** A pre-flight read of one of the driver's objects (a read creates nothing: a renamed read needs no alias). */
export const driverObjectRead = (object: string): string => `shared-resource-csi-driver-${object}`;

/** The `aliases` option that carries a resource's earlier names. */
export function aliasesOf(resource: ResourceName): { aliases?: { name: string }[] } {
    return resource.previous.length > 0 ? { aliases: resource.previous.map((name) => ({ name })) } : {};
}
