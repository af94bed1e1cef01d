import * as path from "node:path";
import { ClusterState, KubeObject } from "../../scripts/render/cluster-state";
import { flattenConfig, readConfigFile } from "../../scripts/render/config-file";
import { renderProgram, RenderedResource, RenderOptions, RenderResult } from "../../scripts/render/render";
import { ROOT } from "./root";

export { ROOT };

/** Renders the real program for a config given as an object of top-level keys. */
export function renderConfig(
    config: Record<string, unknown>,
    options: Omit<Partial<RenderOptions>, "config" | "cluster"> & { cluster?: KubeObject[] } = {},
): Promise<RenderResult> {
    const { cluster, ...rest } = options;
    return renderProgram({
        ...rest,
        config: flattenConfig(config),
        cluster: cluster ? new ClusterState(cluster) : undefined,
    });
}

/** Renders the real program for a config file (relative to the project root). */
export function renderFile(file: string, options: Omit<Partial<RenderOptions>, "config"> = {}): Promise<RenderResult> {
    return renderProgram({ ...options, config: readConfigFile(path.join(ROOT, file)) });
}

/** The one rendered resource of `type` named `name`; fails the test when absent or repeated. */
export function resourceNamed(result: RenderResult, type: string, name: string): RenderedResource {
    const found = result.resources.filter((r) => r.type === type && r.name === name);
    if (found.length !== 1) {
        throw new Error(
            `expected one ${type} named ${name}, found ${found.length}: ${result.resources.map((r) => `${r.type}::${r.name}`).join(", ")}`,
        );
    }
    return found[0];
}

/** Every rendered object of this kind and name (namespaced kinds may have one per namespace). */
export function manifestsNamed(result: RenderResult, kind: string, name: string): Record<string, unknown>[] {
    return result.manifests
        .filter((m) => m.object.kind === kind && (m.object.metadata as { name?: string } | undefined)?.name === name)
        .map((m) => m.object);
}

/** The one rendered Kubernetes object of `kind` named `name`; fails the test when absent or repeated. */
export function manifestNamed(result: RenderResult, kind: string, name: string): Record<string, unknown> {
    const found = manifestsNamed(result, kind, name);
    if (found.length !== 1) {
        throw new Error(`expected one ${kind} named ${name}, found ${found.length}`);
    }
    return found[0];
}

export function resourcesOfType(result: RenderResult, type: string): RenderedResource[] {
    return result.resources.filter((r) => r.type === type);
}

/** The smallest live stack: a live stack names its cluster (cluster.kubeContext). */
export const MINIMAL = { cluster: { name: "test", platform: "kubernetes", kubeContext: "test" } };
