/**
 * The real cluster's network slots (scripts/real/cluster.ts): each slot owns a namespace, veth pair
 * and addresses no other slot uses, so clusters in different slots can run side by side.
 */
import { networkFor } from "../../scripts/real/cluster";

describe("network slots", () => {
    test("GIVEN slot 0 WHEN its network is made THEN it keeps the names and addresses CI and the docs use", () => {
        expect(networkFor(0)).toEqual({
            namespace: "cp-real",
            hostVeth: "cp-real-h",
            namespaceVeth: "cp-real-n",
            hostIp: "10.200.0.1",
            namespaceIp: "10.200.0.2",
            prefix: 30,
            podCidr: "10.244.7.0/24",
            serviceCidr: "10.96.0.0/16",
            firstServiceIp: "10.96.0.1",
        });
    });

    test("GIVEN every slot WHEN their networks are made THEN no namespace, interface, address or pod CIDR is shared", () => {
        const networks = Array.from({ length: 10 }, (_, slot) => networkFor(slot));
        for (const field of ["namespace", "hostVeth", "namespaceVeth", "hostIp", "namespaceIp", "podCidr"] as const) {
            expect(new Set(networks.map((n) => n[field])).size).toBe(10);
        }
        // Linux limits interface names to 15 characters (IFNAMSIZ 16 with the NUL).
        expect(Math.max(...networks.map((n) => n.namespaceVeth.length))).toBeLessThanOrEqual(15);
    });

    test.each([-1, 10, 1.5, Number.NaN])("GIVEN slot %p WHEN its network is made THEN the error names REAL_SLOT and the range", (slot) => {
        expect(() => networkFor(slot)).toThrow(`real:cluster: REAL_SLOT must be an integer from 0 to 9, got ${JSON.stringify(slot)}`);
    });
});
