/**
 * Objects that already exist in the cluster, from `--cluster <file>` (multi-document YAML,
 * as `kubectl get -o yaml` prints them, `kind: List` documents included). Reads made by the
 * program (`k8s.*.get`) resolve against them by Pulumi type token and id.
 */
import * as fs from "node:fs";
import { parseAllDocuments } from "yaml";

export type KubeObject = Record<string, unknown> & {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; [key: string]: unknown };
};

/** The Pulumi type token of a Kubernetes kind: `kubernetes:<group or core>/<version>:<Kind>`. */
export function typeTokenOf(apiVersion: string, kind: string): string {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["core", apiVersion];
    return `kubernetes:${group}/${version}:${kind}`;
}

/** The id Pulumi uses for a Kubernetes object: `namespace/name`, or `name` when cluster-scoped. */
export function objectId(object: KubeObject): string {
    return object.metadata.namespace ? `${object.metadata.namespace}/${object.metadata.name}` : object.metadata.name;
}

export class ClusterState {
    private readonly byKey = new Map<string, KubeObject>();

    constructor(objects: KubeObject[]) {
        for (const object of objects) {
            this.byKey.set(`${typeTokenOf(object.apiVersion, object.kind)}|${objectId(object)}`, object);
        }
    }

    static fromFile(file: string): ClusterState {
        const objects: KubeObject[] = [];
        for (const doc of parseAllDocuments(fs.readFileSync(file, "utf8"))) {
            if (doc.errors.length > 0) {
                throw new Error(`${file}: ${doc.errors[0].message}`);
            }
            collect(doc.toJS(), objects, file);
        }
        return new ClusterState(objects);
    }

    /** Every object of `type`, in the order the file lists them (a list across all namespaces). */
    all(type: string): KubeObject[] {
        return [...this.byKey.entries()].filter(([key]) => key.startsWith(`${type}|`)).map(([, object]) => object);
    }

    /** The object a read of `type` with `id` finds (a `default/` namespace prefix is optional for namespaced reads). */
    find(type: string, id: string): KubeObject | undefined {
        return this.byKey.get(`${type}|${id}`) ?? this.byKey.get(`${type}|default/${id}`);
    }
}

function collect(value: unknown, into: KubeObject[], file: string): void {
    if (value === null || value === undefined) {
        return;
    }
    const object = value as Partial<KubeObject> & { items?: unknown[] };
    if (object.kind === "List" || (object.kind?.endsWith("List") && Array.isArray(object.items))) {
        for (const item of object.items ?? []) {
            collect(item, into, file);
        }
        return;
    }
    if (typeof object.apiVersion !== "string" || typeof object.kind !== "string" || typeof object.metadata?.name !== "string") {
        throw new Error(`${file}: every document needs apiVersion, kind and metadata.name`);
    }
    into.push(object as KubeObject);
}
