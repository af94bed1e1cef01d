import pino from "pino";
import { ANNOTATIONS } from "../../webhook/api";
import { AdmissionHandler } from "../../webhook/admission";
import { decideInjection } from "../../webhook/inject";
import { ENTITLEMENTS_VOLUME, YUM_REPOS_VOLUME } from "../../webhook/mounts";
import { WebhookMetrics } from "../../webhook/metrics";
import { type Pod, readPod } from "../../webhook/pod";
import { applyJsonPatch } from "./support/json-patch";
import { bundle, byName, input, keySets, staticAccess, staticCluster, thirdPartyReviews } from "./support/fixtures";

const reviews = thirdPartyReviews();
const entitlementMount = { name: ENTITLEMENTS_VOLUME, mountPath: "/run/secrets/etc-pki-entitlement", readOnly: true };
const repoMount = { name: YUM_REPOS_VOLUME, mountPath: "/run/secrets/redhat.repo", subPath: "redhat.repo", readOnly: true };

/** An always-inject Bundle with entitlements (one volume: mounted whole) and a yum repo (per file) in the review's namespace. */
function stateFor(namespace: string) {
    return {
        namespace,
        bundles: byName([
            bundle(namespace, "rhel", {
                alwaysInject: true,
                generation: 5,
                entitlements: ["etc-pki-entitlement"],
                yumRepositories: ["rhel-repos"],
            }),
        ]),
        keys: keySets({
            [`Secret/${namespace}/etc-pki-entitlement`]: ["6.pem", "6-key.pem"],
            [`ConfigMap/${namespace}/rhel-repos`]: ["redhat.repo"],
        }),
    };
}

function podOf(request: Record<string, unknown>): Pod {
    const reading = readPod(request.object);
    if (!reading.ok) throw new Error(reading.problem);
    return reading.pod;
}

describe("third-party AdmissionReviews (../shared/testdata/admission-reviews)", () => {
    test("GIVEN the fixture directory WHEN listed THEN the five documented files are there, two of them bare AdmissionRequests", () => {
        expect(reviews.map(({ file, bare }) => [file, bare])).toEqual([
            ["connaisseur-02_pod.json", false],
            ["connaisseur-19_pod_initcontainer.json", false],
            ["connaisseur-20_pod_ephemeralcontainer.json", false],
            ["kubewarden-allow-privilege-escalation-req_pod_with_init_container.request.json", true],
            ["kubewarden-pod-privileged-policy-privileged_ephemeral_container.request.json", true],
        ]);
    });

    test.each(reviews.map((review) => [review.file, review] as const))(
        "GIVEN %s and no bundles WHEN decided THEN it is admitted unchanged",
        (_file, { review }) => {
            const decision = decideInjection(input(podOf(review.request), { namespace: review.request.namespace as string }));
            expect(decision).toEqual({ allowed: true, patch: [], warnings: [], injected: { bundles: {}, clusterBundles: {} } });
        },
    );

    test.each(reviews.map((review) => [review.file, review] as const))(
        "GIVEN %s and an always-inject Bundle WHEN decided THEN every init and regular container gets both mounts, ephemeral ones the directory, and a second pass adds nothing",
        (_file, { review }) => {
            const original = podOf(review.request);
            const state = stateFor(review.request.namespace as string);
            const decision = decideInjection(input(original, state));
            if (!decision.allowed) throw new Error(decision.message);
            const result = applyJsonPatch(original, decision.patch);
            for (const list of ["initContainers", "containers"] as const) {
                (original.spec[list] ?? []).forEach((container, index) => {
                    expect(result.spec[list]?.[index].volumeMounts).toEqual([
                        ...(container.volumeMounts ?? []),
                        entitlementMount,
                        repoMount,
                    ]);
                });
            }
            (original.spec.ephemeralContainers ?? []).forEach((container, index) => {
                expect(result.spec.ephemeralContainers?.[index].volumeMounts).toEqual([
                    ...(container.volumeMounts ?? []),
                    entitlementMount,
                ]);
            });
            expect(decision.warnings).toEqual(
                (original.spec.ephemeralContainers ?? []).map(
                    (container) =>
                        `ephemeral container ${JSON.stringify(container.name)} lacks 1 per-file subscription mount: Kubernetes forbids subPath in ephemeral containers`,
                ),
            );
            expect(result.metadata.annotations?.[ANNOTATIONS.bundleGenerations]).toBe('{"bundles":{"rhel":5}}');
            expect(result.metadata.annotations).toEqual({
                ...original.metadata.annotations,
                [ANNOTATIONS.bundleGenerations]: '{"bundles":{"rhel":5}}',
            });
            const again = decideInjection(input(result, state));
            expect(again.allowed && again.patch).toEqual([]);
        },
    );

    test("GIVEN the baseline connaisseur pod (no metadata.namespace) WHEN decided THEN the exact patch uses request.namespace's Bundle", () => {
        const { review } = reviews[0];
        const decision = decideInjection(input(podOf(review.request), stateFor("test-connaisseur")));
        expect(decision.allowed && decision.patch).toEqual([
            { op: "add", path: "/metadata/annotations/subscription.openshift.io~1bundle-generations", value: '{"bundles":{"rhel":5}}' },
            {
                op: "replace",
                path: "/spec/volumes",
                value: [
                    { name: "default-token-hn7nn", secret: { secretName: "default-token-hn7nn" } },
                    { name: ENTITLEMENTS_VOLUME, projected: { defaultMode: 420, sources: [{ secret: { name: "etc-pki-entitlement" } }] } },
                    { name: YUM_REPOS_VOLUME, projected: { defaultMode: 420, sources: [{ configMap: { name: "rhel-repos" } }] } },
                ],
            },
            {
                op: "replace",
                path: "/spec/containers/0/volumeMounts",
                value: [
                    { name: "default-token-hn7nn", readOnly: true, mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" },
                    entitlementMount,
                    repoMount,
                ],
            },
        ]);
    });

    describe("through the admission handler", () => {
        const handlerFor = (namespace: string) => {
            const state = stateFor(namespace);
            return new AdmissionHandler({
                cluster: staticCluster([...state.bundles.values()], [], state.keys),
                access: staticAccess(new Map()),
                metrics: new WebhookMetrics({ processMetrics: false }),
                logger: pino({ level: "silent" }),
                lookupTimeoutMs: 1000,
            });
        };

        test.each(reviews.map((review) => [review.file, review] as const))(
            "GIVEN %s as an AdmissionReview WHEN handled THEN the response carries its uid and a JSONPatch",
            async (_file, { review }) => {
                const result = await handlerFor(review.request.namespace as string).handle(review);
                const body = JSON.parse(result.body);
                expect(result.status).toBe(200);
                expect(body.apiVersion).toBe("admission.k8s.io/v1");
                expect(body.response.uid).toBe(review.request.uid);
                expect(body.response.allowed).toBe(true);
                expect(body.response.patchType).toBe("JSONPatch");
                expect(body.response.status).toEqual({ code: 200, message: "injected Bundle rhel" });
            },
        );

        test.each(reviews.filter((review) => review.bare).map((review) => [review.file, review] as const))(
            "GIVEN %s as sent (a bare AdmissionRequest) WHEN handled THEN it is refused with 400: the API server always wraps requests",
            async (_file, { review }) => {
                const result = await handlerFor("default").handle(review.request);
                expect(result.status).toBe(400);
                expect(JSON.parse(result.body).message).toBe(
                    "expected an AdmissionReview of apiVersion admission.k8s.io/v1 or admission.k8s.io/v1beta1",
                );
            },
        );
    });
});
