/**
 * A renamed operator install keeps its resources: Pulumi's `aliases` resource option maps the
 * URNs the old name gave to the new ones (pulumi/pulumi `sdk/nodejs/resource.ts`, `Alias`), so
 * the engine updates them in place instead of deleting and creating them.
 *
 * A URN holds a resource's name and its parents' types, not their names; so a child needs an
 * alias only when its own name changes. Pulumi derives a child alias from a renamed parent only
 * when the child's name starts with the parent's name (`inheritedChildAlias`): the install is
 * `operator-<name>` and its descendants are `<name>-...` (install.ts, serving.ts, the
 * AdmissionWebhook), so none qualifies and each gets an explicit `{ name }` alias, its parent left
 * to default to its current parent (same types, so the same URN prefix).
 */
import type * as pulumi from "@pulumi/pulumi";

export const INSTALL_TYPE = "cluster-platform:operator:OperatorInstall";

/** The install component's name for an operator. */
export function installName(operator: string): string {
    return `operator-${operator}`;
}

/**
 * The names a resource of the install had under each previous operator name: the install itself
 * `operator-<old>`, a descendant `<old>-<rest>` for its name `<name>-<rest>`; none for a name
 * that does not embed the operator's name.
 */
export function previousNamesOf(type: string, name: string, operator: string, previous: readonly string[]): string[] {
    if (type === INSTALL_TYPE) {
        return name === installName(operator) ? previous.map(installName) : [];
    }
    const prefix = `${operator}-`;
    return name.startsWith(prefix) ? previous.map((old) => `${old}-${name.slice(prefix.length)}`) : [];
}

/** Adds the aliases of `previousNamesOf` to the install and every resource declared under it. */
export function renameAliases(operator: string, previous: readonly string[]): pulumi.ResourceTransformation {
    return (args) => {
        const names = previousNamesOf(args.type, args.name, operator, previous);
        if (names.length === 0) {
            return undefined;
        }
        return {
            props: args.props,
            opts: { ...args.opts, aliases: [...(args.opts.aliases ?? []), ...names.map((name) => ({ name }))] },
        };
    };
}
