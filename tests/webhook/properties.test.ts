import fc from "fast-check";
import { ANNOTATIONS } from "../../webhook/api";
import { DENIAL_REASONS, type AccessDecision, type BundleInfo, type InjectionInput } from "../../webhook/decision";
import { decideEphemeralContainers, decideInjection } from "../../webhook/inject";
import { isInjectedVolumeName } from "../../webhook/mounts";
import { type Container, type Pod, readPod } from "../../webhook/pod";
import { applyJsonPatch } from "./support/json-patch";
import { keySets } from "./support/fixtures";

const NAMESPACE = "team-a";
const bundleNames = ["a", "b", "c", "d"];
const secretNames = ["s1", "s2", "s3", "s4"];
const configMapNames = ["r1", "r2"];
const keyPool = ["k1.pem", "k2.pem", "k3.pem", "k4-key.pem", "redhat.repo", "x.repo", "etc-pki-entitlement"];
const mountPaths = [
    "/var/run/secrets/kubernetes.io/serviceaccount",
    "/data",
    "/run",
    "/run/secrets",
    "/run/secrets/etc-pki-entitlement",
    "/run/secrets/redhat.repo",
    "/etc/pki",
];

const keySetArb = fc.uniqueArray(fc.constantFrom(...keyPool), { maxLength: 3 });
const refsArb = (names: string[], namespaces: string[]) =>
    fc.uniqueArray(fc.record({ name: fc.constantFrom(...names), namespace: fc.constantFrom(...namespaces) }), {
        maxLength: 2,
        selector: (ref) => `${ref.namespace}/${ref.name}`,
    });

const bundleArb = (name: string, namespace: string | undefined): fc.Arbitrary<BundleInfo> =>
    fc.record({
        name: fc.constant(name),
        namespace: fc.constant(namespace),
        generation: fc.integer({ min: 1, max: 9 }),
        alwaysInject: fc.boolean(),
        entitlements: refsArb(
            secretNames,
            namespace ? [namespace, namespace, namespace, "openshift-config"] : ["openshift-config", NAMESPACE],
        ),
        yumRepositories: refsArb(configMapNames, namespace ? [namespace] : ["openshift-config"]),
    });

const bundlesArb = (namespace: string | undefined): fc.Arbitrary<BundleInfo[]> =>
    fc
        .subarray(bundleNames)
        .chain((names) =>
            names.length === 0
                ? fc.constant<BundleInfo[]>([])
                : (fc.tuple(...names.map((name) => bundleArb(name, namespace))) as fc.Arbitrary<BundleInfo[]>),
        );

const nameListArb = fc
    .tuple(fc.uniqueArray(fc.constantFrom(...bundleNames, "missing", "*", "Bad Name"), { maxLength: 3 }), fc.constantFrom(",", " , ", ",,"))
    .map(([names, separator]) => names.join(separator));
const annotationsArb = fc.dictionary(
    fc.constantFrom(
        ANNOTATIONS.injectBundle,
        ANNOTATIONS.injectClusterBundle,
        ANNOTATIONS.allowBundles,
        ANNOTATIONS.denyBundles,
        ANNOTATIONS.allowClusterBundles,
        ANNOTATIONS.denyClusterBundles,
    ),
    nameListArb,
    { maxKeys: 3 },
);

const volumeArb = fc.constantFrom<Record<string, unknown>>({ emptyDir: {} }, { secret: { secretName: "x" } }, { configMap: { name: "y" } });
const containerArb = (prefix: string) =>
    fc.record({
        name: fc.constantFrom(`${prefix}1`, `${prefix}2`),
        volumeMounts: fc.option(
            fc.uniqueArray(
                fc.record({
                    name: fc.constantFrom("v0", "v1", "v2"),
                    mountPath: fc.constantFrom(...mountPaths),
                    readOnly: fc.option(fc.boolean(), { nil: undefined }),
                }),
                { maxLength: 2, selector: (mount) => mount.mountPath },
            ),
            { nil: undefined },
        ),
    }) as fc.Arbitrary<Container>;

const podArb: fc.Arbitrary<Pod> = fc
    .record({
        annotations: fc.option(annotationsArb, { nil: undefined }),
        containers: fc.array(containerArb("app"), { minLength: 1, maxLength: 3 }),
        initContainers: fc.option(fc.array(containerArb("init"), { maxLength: 2 }), { nil: undefined }),
        ephemeralContainers: fc.option(fc.array(containerArb("debug"), { maxLength: 2 }), { nil: undefined }),
        volumes: fc.tuple(volumeArb, volumeArb, volumeArb),
    })
    .map(({ annotations, containers, initContainers, ephemeralContainers, volumes }) => {
        const pod: Pod = {
            metadata: { generateName: "p-", ...(annotations ? { annotations } : {}) },
            spec: { containers, volumes: volumes.map((source, i) => ({ name: `v${i}`, ...source })), serviceAccountName: "sa" },
        };
        if (initContainers) pod.spec.initContainers = initContainers;
        if (ephemeralContainers) pod.spec.ephemeralContainers = ephemeralContainers;
        return pod;
    });

const accessArb = fc.constantFrom<AccessDecision>({ allowed: true }, { allowed: true }, { allowed: false }, { error: "timeout" });

const scenarioArb: fc.Arbitrary<InjectionInput> = fc
    .record({
        pod: podArb,
        bundles: bundlesArb(NAMESPACE),
        clusterBundles: bundlesArb(undefined),
        secretKeys: fc.dictionary(
            fc.constantFrom(...secretNames.flatMap((name) => [`Secret/${NAMESPACE}/${name}`, `Secret/openshift-config/${name}`])),
            keySetArb,
        ),
        repoKeys: fc.dictionary(
            fc.constantFrom(...configMapNames.flatMap((name) => [`ConfigMap/${NAMESPACE}/${name}`, `ConfigMap/openshift-config/${name}`])),
            keySetArb,
        ),
        access: fc.tuple(...bundleNames.map(() => accessArb)),
    })
    .map(({ pod, bundles, clusterBundles, secretKeys, repoKeys, access }) => ({
        pod,
        namespace: NAMESPACE,
        bundles: new Map(bundles.map((item) => [item.name, item])),
        clusterBundles: new Map(clusterBundles.map((item) => [item.name, item])),
        keys: keySets({ ...secretKeys, ...repoKeys }),
        access: new Map(bundleNames.map((name, i) => [name, access[i]])),
    }));

const RUNS = { numRuns: 400 };

test("GIVEN the scenario generator WHEN sampled THEN it reaches patches, every denial reason the rules can give, and unchanged pods", () => {
    const outcomes = new Set<string>();
    for (const scenario of fc.sample(scenarioArb, { numRuns: 3000, seed: 7 })) {
        const decision = decideInjection(scenario);
        outcomes.add(decision.allowed ? (decision.patch.length > 0 ? "patched" : "unchanged") : decision.reason);
    }
    expect([...outcomes].sort()).toEqual(
        [
            "AccessCheckFailed",
            "AccessDenied",
            "BundleNotFound",
            "InvalidAnnotation",
            "InvalidBundle",
            "KeyOverlap",
            "MountConflict",
            "ReferenceNotFound",
            "patched",
            "unchanged",
        ].sort(),
    );
});

function injectedMounts(container: Container) {
    return (container.volumeMounts ?? []).filter((mount) => isInjectedVolumeName(mount.name));
}

describe("properties of the injection decision", () => {
    test("GIVEN any pod and cluster state WHEN decided THEN a denial always has a known reason, an HTTP code and a non-empty message", () => {
        fc.assert(
            fc.property(scenarioArb, (scenario) => {
                const decision = decideInjection(scenario);
                if (decision.allowed) return;
                expect(DENIAL_REASONS).toContain(decision.reason);
                expect([400, 403, 404, 409, 500, 503]).toContain(decision.code);
                expect(decision.message.trim().length).toBeGreaterThan(0);
            }),
            RUNS,
        );
    });

    test("GIVEN any pod and cluster state WHEN admitted THEN the patch applies cleanly to that pod and leaves a valid pod", () => {
        fc.assert(
            fc.property(scenarioArb, (scenario) => {
                const decision = decideInjection(scenario);
                if (!decision.allowed) return;
                const result = applyJsonPatch(scenario.pod, decision.patch);
                expect(readPod(result).ok).toBe(true);
            }),
            RUNS,
        );
    });

    test("GIVEN an admitted pod WHEN the patched pod is decided again (re-invocation) THEN it is admitted with an empty patch", () => {
        fc.assert(
            fc.property(scenarioArb, (scenario) => {
                const decision = decideInjection(scenario);
                if (!decision.allowed) return;
                const again = decideInjection({ ...scenario, pod: applyJsonPatch(scenario.pod, decision.patch) });
                expect(again.allowed && again.patch).toEqual([]);
            }),
            RUNS,
        );
    });

    test("GIVEN an admitted pod WHEN patched THEN every init and regular container has the same injected mounts, and ephemeral ones exactly those without subPath", () => {
        fc.assert(
            fc.property(scenarioArb, (scenario) => {
                const decision = decideInjection(scenario);
                if (!decision.allowed) return;
                const result = applyJsonPatch(scenario.pod, decision.patch);
                const regular = [...(result.spec.initContainers ?? []), ...result.spec.containers].map(injectedMounts);
                for (const mounts of regular) expect(mounts).toEqual(regular[0]);
                for (const container of result.spec.ephemeralContainers ?? []) {
                    expect(injectedMounts(container)).toEqual(regular[0].filter((mount) => !mount.subPath));
                }
                const volumeNames = new Set((result.spec.volumes ?? []).map((volume) => volume.name));
                expect(volumeNames.size).toBe((result.spec.volumes ?? []).length);
                for (const mount of regular[0]) expect(volumeNames.has(mount.name)).toBe(true);
            }),
            RUNS,
        );
    });

    test("GIVEN an injected pod WHEN ephemeral containers are added through the subresource THEN the patch applies and a second pass adds nothing", () => {
        fc.assert(
            fc.property(scenarioArb, fc.array(containerArb("late"), { minLength: 1, maxLength: 2 }), (scenario, late) => {
                const decision = decideInjection(scenario);
                if (!decision.allowed) return;
                const injected = applyJsonPatch(scenario.pod, decision.patch);
                injected.spec.ephemeralContainers = [...(injected.spec.ephemeralContainers ?? []), ...late];
                const update = decideEphemeralContainers(injected);
                if (!update.allowed) {
                    expect(update.reason).toBe("MountConflict");
                    return;
                }
                expect(update.patch.every((operation) => operation.path.startsWith("/spec/ephemeralContainers/"))).toBe(true);
                const again = decideEphemeralContainers(applyJsonPatch(injected, update.patch));
                expect(again.allowed && again.patch).toEqual([]);
            }),
            RUNS,
        );
    });
});
