/**
 * Which APIServices keep a deleted Namespace Terminating, and what the pre-flight says about it
 * (components/shared/namespace-deletion.ts). The APIService objects are shaped as the aggregator's
 * availability controller writes them (kube-aggregator `pkg/controllers/status/remote`:
 * `Available` with reasons `MissingEndpoints`, `ServiceNotFound`, `FailedDiscoveryCheck`); the
 * real tier reads them from the API server (tests/real/unavailable-apiservice.real.ts).
 */
import { namespaceDeletionWarning, unavailableApiServices } from "../../components/shared/namespace-deletion";

const apiService = (name: string, available?: { status: string; reason: string; message: string }) => ({
    metadata: { name },
    status: { conditions: available ? [{ type: "Available", ...available }] : [] },
});

describe("APIServices that keep a namespace Terminating", () => {
    test("GIVEN a list of local, available, unavailable and not-yet-checked APIServices THEN exactly those whose Available condition is not True are named, by name, with reason and message", () => {
        const list = {
            items: [
                apiService("v1.", { status: "True", reason: "Local", message: "Local APIServices are always available" }),
                apiService("v1beta1.metrics.k8s.io", {
                    status: "False",
                    reason: "MissingEndpoints",
                    message: 'endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"',
                }),
                apiService("v1.custom.example.com"),
                apiService("v1alpha1.ready.example.com", { status: "True", reason: "Passed", message: "all checks passed" }),
            ],
        };
        expect(unavailableApiServices(list)).toEqual([
            {
                name: "v1beta1.metrics.k8s.io",
                reason: "MissingEndpoints",
                message: 'endpoints for service/metrics-server in "kube-system" have no addresses with port name "https"',
            },
        ]);
        expect(unavailableApiServices({})).toEqual([]);
    });

    test("GIVEN an unavailable APIService THEN the warning names it, the namespaces the stack owns, the controller's rule and the bounded wait, owned namespaces or not; with none unavailable, nothing is said", () => {
        const down = [{ name: "v1beta1.metrics.k8s.io", reason: "MissingEndpoints", message: "no addresses" }];
        expect(namespaceDeletionWarning(down, ["widgets", "cluster-platform-subscriptions"])).toBe(
            "APIService v1beta1.metrics.k8s.io (MissingEndpoints: no addresses) is not Available: a Namespace deleted now " +
                "(this stack's cluster-platform-subscriptions, widgets; any removed from config; all on pulumi destroy) stays " +
                "Terminating until it is Available again or deleted, because the namespace controller finalizes a namespace only " +
                "when discovery of every API group succeeds (condition NamespaceDeletionDiscoveryFailure; kubernetes " +
                "pkg/controller/namespace/deletion). The stack's Namespace deletes wait 60s, then fail naming the Namespace; it " +
                "stays in the state, and the next run deletes it again once the APIService is repaired.",
        );
        // A namespace removed from config is no longer in it: the warning stands without owned namespaces.
        expect(namespaceDeletionWarning(down, [])).toContain(
            "a Namespace deleted now (any removed from config; all on pulumi destroy) stays Terminating",
        );
        expect(namespaceDeletionWarning([], ["widgets"])).toBeUndefined();
    });
});
