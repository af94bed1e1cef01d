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
 *
 * Without an alias a rename is a create of every new resource and, at the end of the update, a
 * delete of every old one; the Kubernetes provider's create is a server-side apply over the same
 * object and its delete a DELETE by name (pulumi-kubernetes provider/pkg/await/await.go,
 * `Creation`, `Deletion`; tests/real/provider-rule.real.ts), so the objects the new resources
 * record are deleted, a Patch's fields relinquished, or (each install's objects carrying its name
 * in a label) the creates fail on the old resources' fields. So the names come from three places:
 * `previousNames` in config; an install renamed without them, recognised from the previous
 * update's record of its installs (`installRecords`: a removed install of the same namespace, the
 * only one there or the only one of the same CSV); and installs that leave while another install
 * of the same bundle takes over the cluster-scoped objects they declared for both
 * (shared-objects.ts), whose resources are aliased to the leaver's.
 */
import type * as pulumi from "@pulumi/pulumi";
import { byEntryKey, compareText } from "../shared/order";

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

/** What an update records of each install, for the next one (the `operatorInstalls` output). */
export interface InstallRecord {
    /** Its namespace. */
    namespace: string;
    /** Its CSV's `metadata.name`. */
    csv: string;
    /** Its previous names, oldest first, as config (or an implied rename) gave them. */
    previousNames?: string[];
}

export type InstallRecords = Record<string, InstallRecord>;

/** What one install takes from the previous update's record of installs. */
export interface InheritedNames {
    /**
     * Its names before, oldest first, that config does not list: those the record keeps for it (an
     * earlier rename without `previousNames`), or those of the gone install it renames now.
     */
    previousNames: string[];
    /** Set when it is taken as the rename of a gone install in this update: that install's name. */
    renames?: string;
    /** Installs that left, whose resources may hold the shared objects this one now declares. */
    sharedFrom: string[];
}

interface CurrentInstall {
    name: string;
    namespace: string;
    csv: string;
    previousNames?: readonly string[];
}

/** Every name an install had before, oldest first: what the record inherited, then config's `previousNames`. */
export function allPreviousNames(install: CurrentInstall, inherited: InheritedNames | undefined): string[] {
    const names = [...(inherited?.previousNames ?? []), ...(install.previousNames ?? [])];
    return names.filter((name, i) => name !== install.name && names.indexOf(name) === i);
}

/** This update's record: each install's namespace, CSV and every previous name (implied ones included), keys sorted. */
export function installRecords(installs: readonly CurrentInstall[], inherited: ReadonlyMap<string, InheritedNames>): InstallRecords {
    return Object.fromEntries(
        installs
            .map((i): [string, InstallRecord] => {
                const previousNames = allPreviousNames(i, inherited.get(i.name));
                return [i.name, { namespace: i.namespace, csv: i.csv, ...(previousNames.length > 0 ? { previousNames } : {}) }];
            })
            .sort(byEntryKey),
    );
}

/**
 * What each install inherits from the previous update's record. An install the record knows (by
 * its name or one of its previous names) keeps the names the record gives it. A new one is taken as
 * the rename of a gone install (one the record names that is neither an install's name nor one of
 * its previous names now) of its namespace when that one is unambiguous: the only gone install
 * there, else the only one there with the same CSV; a gone install is claimed once, in config
 * order. Every install may take over the shared objects of every gone install.
 */
export function inheritedNames(previous: InstallRecords | undefined, installs: readonly CurrentInstall[]): Map<string, InheritedNames> {
    const inherited = new Map<string, InheritedNames>();
    if (previous === undefined) {
        return inherited;
    }
    const named = new Set(installs.flatMap((i) => [i.name, ...(i.previousNames ?? [])]));
    const gone = Object.keys(previous)
        .filter((name) => !named.has(name))
        .sort(compareText);
    const claimed = new Set<string>();
    for (const install of installs) {
        const own = [install.name, ...(install.previousNames ?? [])];
        const known = own.find((name) => previous[name] !== undefined);
        const candidates =
            known !== undefined ? [] : gone.filter((name) => !claimed.has(name) && previous[name].namespace === install.namespace);
        const sameCsv = candidates.filter((name) => previous[name].csv === install.csv);
        const renames = candidates.length === 1 ? candidates[0] : sameCsv.length === 1 ? sameCsv[0] : undefined;
        const from = known ?? renames;
        const history = from === undefined ? [] : [...(previous[from].previousNames ?? []), from];
        if (renames !== undefined) {
            claimed.add(renames);
        }
        inherited.set(install.name, {
            previousNames: history.filter((name) => !own.includes(name)),
            ...(renames !== undefined ? { renames } : {}),
            sharedFrom: gone,
        });
    }
    return inherited;
}

/** `Kind namespace/name` of a resource's object as its props give it, when they give it plainly. */
function propsObjectKey(props: Record<string, unknown>): string | undefined {
    const metadata = props.metadata as { name?: unknown; namespace?: unknown } | undefined;
    if (typeof props.kind !== "string" || typeof metadata?.name !== "string") {
        return undefined;
    }
    const namespace = typeof metadata.namespace === "string" ? `${metadata.namespace}/` : "";
    return `${props.kind} ${namespace}${metadata.name}`;
}

/**
 * Adds the aliases of `previousNamesOf` to the install and every resource declared under it: its
 * previous names (config's and an implied rename's) for every resource, and the names of gone
 * installs (`sharedFrom`) for the resources of objects in `shared` (`Kind namespace/name`).
 */
export function renameAliases(
    operator: string,
    previous: readonly string[],
    sharedFrom: readonly string[] = [],
    shared: ReadonlySet<string> = new Set(),
): pulumi.ResourceTransformation {
    return (args) => {
        const key = sharedFrom.length > 0 ? propsObjectKey(args.props) : undefined;
        const from = key !== undefined && shared.has(key) ? [...previous, ...sharedFrom.filter((n) => !previous.includes(n))] : previous;
        const names = previousNamesOf(args.type, args.name, operator, from);
        if (names.length === 0) {
            return undefined;
        }
        return {
            props: args.props,
            opts: { ...args.opts, aliases: [...(args.opts.aliases ?? []), ...names.map((name) => ({ name }))] },
        };
    };
}
