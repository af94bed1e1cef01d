/**
 * The informers' store (webhook/informer.ts `NamespacedStore`: one object per namespace held
 * directly, a Map only where a namespace has several) against @kubernetes/client-node 0.22.3's own
 * cache functions (dist/cache.js `addOrUpdateObject`, `deleteObject`, `deleteItems`, exported by
 * the library for testing), which the ListWatch it replaces keeps its objects with: the same
 * events, in the same order, and the same objects found, after any sequence of adds, updates,
 * deletes and relists.
 */
import fc from "fast-check";
import type { KubernetesObject } from "@kubernetes/client-node";
import { addOrUpdateObject, deleteItems, deleteObject } from "@kubernetes/client-node/dist/cache";
import { NamespacedStore } from "../../webhook/informer";

type Op =
    | { kind: "upsert"; object: KubernetesObject }
    | { kind: "remove"; object: KubernetesObject }
    | { kind: "relist"; objects: KubernetesObject[] };

const NAMESPACES = ["", "team-a", "team-b", "team-c"];
const NAMES = ["etc-pki-entitlement", "rhel", "extra", "satellite"];

const object = fc
    .record({ namespace: fc.constantFrom(...NAMESPACES), name: fc.constantFrom(...NAMES), rv: fc.option(fc.nat(5), { nil: undefined }) })
    .map(({ namespace, name, rv }) => ({
        metadata: { name, ...(namespace ? { namespace } : {}), ...(rv === undefined ? {} : { resourceVersion: String(rv) }) },
    }));

const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 5, arbitrary: object.map((o) => ({ kind: "upsert" as const, object: o })) },
    { weight: 2, arbitrary: object.map((o) => ({ kind: "remove" as const, object: o })) },
    { weight: 1, arbitrary: fc.array(object, { maxLength: 8 }).map((objects) => ({ kind: "relist" as const, objects })) },
);

const key = (o: KubernetesObject) => `${o.metadata?.namespace ?? ""}/${o.metadata?.name}@${o.metadata?.resourceVersion ?? "-"}`;

describe("the informers' store against client-node's cache", () => {
    test("GIVEN any sequence of adds, updates, deletes and relists WHEN applied to both THEN the events and every lookup agree", () => {
        fc.assert(
            fc.property(fc.array(op, { maxLength: 40 }), (ops) => {
                const upstream = new Map<string, Map<string, KubernetesObject>>();
                const store = new NamespacedStore<KubernetesObject>();
                let expected: string[] = [];
                let got: string[] = [];
                const record = (into: string[], event: string) => (o: KubernetesObject) => into.push(`${event} ${key(o)}`);
                for (const step of ops) {
                    expected = [];
                    got = [];
                    if (step.kind === "upsert") {
                        addOrUpdateObject(upstream, step.object, [record(expected, "add")], [record(expected, "update")]);
                        const event = store.upsert(step.object);
                        if (event) record(got, event)(step.object);
                    } else if (step.kind === "remove") {
                        deleteObject(upstream, step.object, [record(expected, "delete")]);
                        if (store.remove(step.object)) record(got, "delete")(step.object);
                    } else {
                        // ListWatch's relist: deleteItems, then addOrUpdate each listed object.
                        deleteItems(upstream, step.objects, [record(expected, "delete")]);
                        for (const o of step.objects)
                            addOrUpdateObject(upstream, o, [record(expected, "add")], [record(expected, "update")]);
                        for (const gone of store.keepOnly(step.objects)) record(got, "delete")(gone);
                        for (const o of step.objects) {
                            const event = store.upsert(o);
                            if (event) record(got, event)(o);
                        }
                    }
                    // A relist's deletes come in each store's own order, then its adds and updates in list order.
                    if (step.kind === "relist") {
                        const deletes = (events: string[]) => events.filter((e) => e.startsWith("delete ")).sort();
                        expect(deletes(got)).toEqual(deletes(expected));
                        expect(got.filter((e) => !e.startsWith("delete "))).toEqual(expected.filter((e) => !e.startsWith("delete ")));
                    } else {
                        expect(got).toEqual(expected);
                    }
                    for (const namespace of NAMESPACES) {
                        const upstreamList = [...(upstream.get(namespace)?.values() ?? [])].map(key).sort();
                        expect(
                            store
                                .list(namespace || undefined)
                                .filter((o) => (o.metadata?.namespace ?? "") === namespace)
                                .map(key)
                                .sort(),
                        ).toEqual(upstreamList);
                        for (const name of NAMES) {
                            const found = upstream.get(namespace)?.get(name);
                            expect(store.get(name, namespace || undefined)).toBe(found);
                        }
                    }
                    expect(store.list().map(key).sort()).toEqual(
                        [...upstream.values()]
                            .flatMap((m) => [...m.values()])
                            .map(key)
                            .sort(),
                    );
                }
            }),
        );
    });
});
