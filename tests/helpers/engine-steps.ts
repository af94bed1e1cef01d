/**
 * The steps Pulumi's engine takes for an update in which some resources are replaced and others
 * updated, computed from the options and property dependencies a render recorded. It encodes the
 * engine's rules for delete-before-replace (pulumi/pulumi `pkg/resource/deploy/step_generator.go`):
 *
 * - resources are stepped in registration order (a resource registers only once the resources
 *   its inputs and `dependsOn` name have been stepped);
 * - a replaced resource with `deleteBeforeReplace` first deletes its dependents that would be
 *   replaced (`calculateDependentReplacements`): a dependent is replaced when one of its input
 *   properties depends on a resource in the replace set and the diff of that property (now
 *   unknown) is a replacement after `applyReplaceOnChanges`, i.e. the dependent's
 *   `replaceOnChanges` contains the property; deletes go in reverse dependency order, then the
 *   resource itself is deleted and created again;
 * - a dependent deleted that way is created again when its own registration comes.
 *
 * What the provider's own diff would add (the Kubernetes provider also replaces on an unknown
 * `metadata.name`) is deliberately not modelled: the order must follow from the options alone.
 */
import type { RenderedResource } from "../../scripts/render/render";

export type Step = `${"delete" | "create" | "update" | "same"} ${string}`;

function replaceOnChangesCovers(paths: readonly string[], property: string): boolean {
    // A replaceOnChanges path contains a diff path when it is the same property or a parent of it.
    return paths.some((path) => path === property || path === "*" || property.startsWith(`${path}.`));
}

/** The steps for an update where `replaced` are replaced (by their own diff) and `updated` updated; others are unchanged. */
export function stepsOf(resources: readonly RenderedResource[], replaced: ReadonlySet<string>, updated: ReadonlySet<string>): Step[] {
    const steps: Step[] = [];
    const deletedAhead = new Set<string>();
    for (const resource of resources) {
        if (deletedAhead.has(resource.name)) {
            steps.push(`create ${resource.name}`);
            continue;
        }
        if (!replaced.has(resource.name)) {
            steps.push(`${updated.has(resource.name) ? "update" : "same"} ${resource.name}`);
            continue;
        }
        if (!resource.options.deleteBeforeReplace) {
            steps.push(`create ${resource.name}`); // create-before-delete; the old one is deleted at the end
            continue;
        }
        const replaceSet = new Set([resource.name]);
        const dependents: string[] = [];
        // Dependents in dependency order: registration order after the root.
        for (const candidate of resources.slice(resources.indexOf(resource) + 1)) {
            const properties = Object.entries(candidate.options.propertyDependencies)
                .filter(([, on]) => on.some((name) => replaceSet.has(name)))
                .map(([property]) => property);
            if (properties.some((property) => replaceOnChangesCovers(candidate.options.replaceOnChanges, property))) {
                replaceSet.add(candidate.name);
                dependents.push(candidate.name);
            }
        }
        for (const dependent of [...dependents].reverse()) {
            steps.push(`delete ${dependent}`);
            deletedAhead.add(dependent);
        }
        steps.push(`delete ${resource.name}`, `create ${resource.name}`);
    }
    return steps;
}
