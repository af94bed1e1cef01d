import { ANNOTATIONS, clusterBundleShareName } from "../../webhook/api";
import type { Admission, Denial, InjectionDecision } from "../../webhook/decision";
import { decideEphemeralContainers, decideInjection } from "../../webhook/inject";
import { ENTITLEMENTS_VOLUME, YUM_REPOS_VOLUME, shareVolumeName } from "../../webhook/mounts";
import type { Pod } from "../../webhook/pod";
import { applyJsonPatch } from "./support/json-patch";
import { TOKEN_MOUNT, TOKEN_VOLUME, allow, bundle, byName, clusterBundle, input, keySets, pod } from "./support/fixtures";

const ENT = "/run/secrets/etc-pki-entitlement";
const GEN = ANNOTATIONS.bundleGenerations;

function admitted(decision: InjectionDecision): Admission {
    if (!decision.allowed) throw new Error(`expected admission, got denial: ${decision.message}`);
    return decision;
}

function denied(decision: InjectionDecision): Omit<Denial, "allowed"> {
    if (decision.allowed) throw new Error("expected a denial");
    const { reason, code, message } = decision;
    return { reason, code, message };
}

function patched(decision: InjectionDecision, original: Pod): Pod {
    return applyJsonPatch(original, admitted(decision).patch);
}

const teamKeys = keySets({
    "Secret/team-a/local-entitlement": ["entitlement-key.pem", "entitlement.pem"],
    "Secret/team-a/driver-entitlement": ["driver-key.pem", "driver.pem"],
    "Secret/team-a/clash-entitlement": ["entitlement.pem"],
    "ConfigMap/team-a/local-repo": ["redhat.repo"],
    "ConfigMap/team-a/driver-repo": ["driver.repo"],
    "Secret/openshift-config/etc-pki-entitlement": ["sca.pem", "sca-key.pem"],
    "ConfigMap/openshift-config/satellite": ["satellite.repo"],
});

const local = bundle("team-a", "local", { generation: 2, entitlements: ["local-entitlement"] });
const driver = bundle("team-a", "driver", { generation: 3, entitlements: ["driver-entitlement"] });
const cluster = clusterBundle("cluster", { generation: 4, entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }] });
const clusterShare = clusterBundleShareName("cluster", "entitlement", { namespace: "openshift-config", name: "etc-pki-entitlement" });

describe("bundle selection (seed steps 1-3)", () => {
    test("GIVEN a pod with no subscription annotations and no always-inject bundles WHEN decided THEN it is admitted unchanged", () => {
        const decision = decideInjection(input(pod(), { bundles: byName([local]), keys: teamKeys }));
        expect(decision).toEqual({ allowed: true, patch: [], warnings: [], injected: { bundles: {}, clusterBundles: {} } });
    });

    test("GIVEN inject-bundle naming one Bundle WHEN decided THEN one projected volume of its Secret is mounted whole at the entitlement path and the generation is recorded", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const decision = decideInjection(input(original, { bundles: byName([local, driver]), keys: teamKeys }));
        expect(admitted(decision)).toEqual({
            allowed: true,
            warnings: [],
            injected: { bundles: { local: 2 }, clusterBundles: {} },
            patch: [
                {
                    op: "add",
                    path: "/metadata/annotations/subscription.openshift.io~1bundle-generations",
                    value: '{"bundles":{"local":2}}',
                },
                {
                    op: "add",
                    path: "/spec/volumes/-",
                    value: {
                        name: ENTITLEMENTS_VOLUME,
                        projected: { defaultMode: 420, sources: [{ secret: { name: "local-entitlement" } }] },
                    },
                },
                {
                    op: "add",
                    path: "/spec/containers/0/volumeMounts/-",
                    value: { name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true },
                },
            ],
        });
    });

    test("GIVEN a comma-separated list with spaces, empties and a repeat WHEN decided THEN each named Bundle is injected once", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "  local , driver,, local ," } });
        const decision = admitted(decideInjection(input(original, { bundles: byName([local, driver]), keys: teamKeys })));
        expect(decision.injected).toEqual({ bundles: { driver: 3, local: 2 }, clusterBundles: {} });
        expect(patched(decision, original).spec.volumes?.[1]).toEqual({
            name: ENTITLEMENTS_VOLUME,
            projected: {
                defaultMode: 420,
                sources: [{ secret: { name: "driver-entitlement" } }, { secret: { name: "local-entitlement" } }],
            },
        });
    });

    test("GIVEN inject-bundle and inject-cluster-bundle naming bundles that do not exist WHEN decided THEN the pod is denied naming each of them", () => {
        const original = pod({
            annotations: { [ANNOTATIONS.injectBundle]: "local,ghost,phantom", [ANNOTATIONS.injectClusterBundle]: "nowhere" },
        });
        expect(denied(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })))).toEqual({
            reason: "BundleNotFound",
            code: 404,
            message:
                'Bundle "ghost", "phantom" (annotation subscription.openshift.io/inject-bundle) not found in namespace "team-a"; ClusterBundle "nowhere" (annotation subscription.openshift.io/inject-cluster-bundle) not found',
        });
    });

    test("GIVEN annotation values that are not bundle names WHEN decided THEN the pod is denied naming the annotation and the values", () => {
        const original = pod({
            annotations: { [ANNOTATIONS.injectBundle]: "Local,../etc,*", [ANNOTATIONS.denyClusterBundles]: "ok,bad name" },
        });
        expect(denied(decideInjection(input(original)))).toEqual({
            reason: "InvalidAnnotation",
            code: 400,
            message:
                'invalid bundle names in pod annotations (a name must be a DNS-1123 subdomain; "*" is allowed only in allow/deny lists): subscription.openshift.io/inject-bundle: "Local", "../etc", "*"; subscription.openshift.io/deny-cluster-bundles: "bad name"',
        });
    });

    const always = [
        bundle("team-a", "a", { alwaysInject: true, entitlements: [] }),
        bundle("team-a", "b", { alwaysInject: true, entitlements: [] }),
        bundle("team-a", "c", { alwaysInject: true, entitlements: [] }),
        bundle("team-a", "manual", { entitlements: [] }),
    ];
    test.each([
        ["no allow/deny annotation: every always-inject Bundle", {}, ["a", "b", "c"]],
        ["allow-bundles: only those listed", { [ANNOTATIONS.allowBundles]: "a,b" }, ["a", "b"]],
        ["allow-bundles: * allows all", { [ANNOTATIONS.allowBundles]: "*" }, ["a", "b", "c"]],
        ["deny-bundles: all but those listed", { [ANNOTATIONS.denyBundles]: "b,c" }, ["a"]],
        ["deny-bundles: * denies all", { [ANNOTATIONS.denyBundles]: "*" }, []],
        ["allow and deny: deny wins", { [ANNOTATIONS.allowBundles]: "a,b", [ANNOTATIONS.denyBundles]: "b,c" }, ["a"]],
        [
            "deny-bundles does not filter what inject-bundle asks for",
            { [ANNOTATIONS.denyBundles]: "*", [ANNOTATIONS.injectBundle]: "b,manual" },
            ["b", "manual"],
        ],
        ["the cluster lists do not filter Bundles", { [ANNOTATIONS.denyClusterBundles]: "*" }, ["a", "b", "c"]],
    ])("GIVEN always-inject Bundles a, b, c WHEN %s THEN exactly those are injected", (_case, annotations, expected) => {
        const decision = admitted(decideInjection(input(pod({ annotations }), { bundles: byName(always) })));
        expect(Object.keys(decision.injected.bundles)).toEqual(expected);
    });

    const alwaysCluster = [
        clusterBundle("x", { alwaysInject: true, entitlements: [] }),
        clusterBundle("y", { alwaysInject: true, entitlements: [] }),
    ];
    test.each([
        ["no annotation", {}, ["x", "y"]],
        ["allow-cluster-bundles: x", { [ANNOTATIONS.allowClusterBundles]: "x" }, ["x"]],
        ["deny-cluster-bundles: x", { [ANNOTATIONS.denyClusterBundles]: "x" }, ["y"]],
        ["deny-cluster-bundles: *", { [ANNOTATIONS.denyClusterBundles]: "*" }, []],
        ["the namespace lists do not filter ClusterBundles", { [ANNOTATIONS.denyBundles]: "*" }, ["x", "y"]],
    ])("GIVEN always-inject ClusterBundles x, y WHEN %s THEN exactly those are injected", (_case, annotations, expected) => {
        const decision = admitted(
            decideInjection(input(pod({ annotations }), { clusterBundles: byName(alwaysCluster), access: allow("x", "y") })),
        );
        expect(Object.keys(decision.injected.clusterBundles)).toEqual(expected);
    });
});

describe("ClusterBundle access (seed step 4)", () => {
    const annotated = pod({ annotations: { [ANNOTATIONS.injectClusterBundle]: "cluster" } });

    test("GIVEN access granted WHEN decided THEN the share comes through a read-only Shared Resource CSI volume mounted whole", () => {
        const decision = admitted(
            decideInjection(input(annotated, { clusterBundles: byName([cluster]), keys: teamKeys, access: allow("cluster") })),
        );
        const result = patched(decision, annotated);
        expect(result.spec.volumes).toEqual([
            TOKEN_VOLUME,
            {
                name: shareVolumeName(clusterShare),
                csi: { driver: "csi.sharedresource.openshift.io", readOnly: true, volumeAttributes: { sharedSecret: clusterShare } },
            },
        ]);
        expect(result.spec.containers[0].volumeMounts).toEqual([
            TOKEN_MOUNT,
            { name: shareVolumeName(clusterShare), mountPath: ENT, readOnly: true },
        ]);
        expect(result.metadata.annotations?.[GEN]).toBe('{"clusterBundles":{"cluster":4}}');
    });

    test("GIVEN the service account may not use a requested ClusterBundle WHEN decided THEN the pod is denied with 403 naming account, bundle, the review that failed and the grant it needs", () => {
        const access = new Map([
            ["cluster", { allowed: false as const, reason: "use sharedsecrets/cluster-entitlement-x not allowed: no RBAC policy matched" }],
        ]);
        expect(denied(decideInjection(input(annotated, { clusterBundles: byName([cluster]), keys: teamKeys, access })))).toEqual({
            reason: "AccessDenied",
            code: 403,
            message:
                "service account team-a/builder may not use ClusterBundle \"cluster\": use sharedsecrets/cluster-entitlement-x not allowed: no RBAC policy matched (needs, in the pod's namespace, get on the ClusterBundle and use on each of its shares, as the Shared Resource CSI driver checks before mounting; bind the bundle's ClusterRole, or a role it aggregates to, with a RoleBinding in the namespace or a ClusterRoleBinding)",
        });
    });

    test("GIVEN an always-inject ClusterBundle the service account may not use WHEN decided THEN it is left out with a warning and the rest is injected", () => {
        const open = clusterBundle("open", {
            alwaysInject: true,
            entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
        });
        const restricted = clusterBundle("restricted", { alwaysInject: true, entitlements: [] });
        const access = new Map([
            ["open", { allowed: true as const }],
            ["restricted", { allowed: false as const }],
        ]);
        const decision = admitted(decideInjection(input(pod(), { clusterBundles: byName([open, restricted]), keys: teamKeys, access })));
        expect(decision.injected).toEqual({ bundles: {}, clusterBundles: { open: 1 } });
        expect(decision.warnings).toEqual([
            'always-inject ClusterBundle "restricted" not injected: service account team-a/builder may not use it',
        ]);
    });

    test("GIVEN the access review failed WHEN decided THEN the pod is denied as retryable (503), never injected unverified", () => {
        const access = new Map([["cluster", { error: "SubjectAccessReview failed: status 500" }]]);
        expect(denied(decideInjection(input(annotated, { clusterBundles: byName([cluster]), keys: teamKeys, access })))).toEqual({
            reason: "AccessCheckFailed",
            code: 503,
            message:
                'could not review access of service account team-a/builder to ClusterBundle "cluster": SubjectAccessReview failed: status 500; retry',
        });
    });

    test("GIVEN the pod runs as the default service account implicitly WHEN access is denied THEN the message names team-a/default", () => {
        const implicit = pod({ annotations: { [ANNOTATIONS.injectClusterBundle]: "cluster" } });
        delete implicit.spec.serviceAccountName;
        const access = new Map([["cluster", { allowed: false as const }]]);
        expect(denied(decideInjection(input(implicit, { clusterBundles: byName([cluster]), access }))).message).toContain(
            "service account team-a/default may not use",
        );
    });
});

describe("key overlap (seed steps 4/5 and 7/8)", () => {
    test("GIVEN two Bundles whose Secrets share a key WHEN decided THEN the pod is denied naming the key and both sources", () => {
        const clash = bundle("team-a", "clash", { entitlements: ["clash-entitlement"] });
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local,clash" } });
        expect(denied(decideInjection(input(original, { bundles: byName([local, clash]), keys: teamKeys })))).toEqual({
            reason: "KeyOverlap",
            code: 409,
            message:
                'overlapping keys in the injected bundles: key "entitlement.pem" is in both Secret team-a/clash-entitlement (Bundle "clash") and Secret team-a/local-entitlement (Bundle "local")',
        });
    });

    test("GIVEN two Bundles whose yum ConfigMaps share a key WHEN decided THEN the pod is denied naming the key and both ConfigMaps", () => {
        const one = bundle("team-a", "one", { entitlements: [], yumRepositories: ["local-repo"] });
        const two = bundle("team-a", "two", { entitlements: [], yumRepositories: ["dup-repo"] });
        const keys = keySets({ "ConfigMap/team-a/local-repo": ["redhat.repo"], "ConfigMap/team-a/dup-repo": ["redhat.repo", "x.repo"] });
        expect(
            denied(
                decideInjection(
                    input(pod({ annotations: { [ANNOTATIONS.injectBundle]: "one,two" } }), { bundles: byName([one, two]), keys }),
                ),
            ),
        ).toEqual({
            reason: "KeyOverlap",
            code: 409,
            message:
                'overlapping keys in the injected bundles: key "redhat.repo" is in both ConfigMap team-a/local-repo (Bundle "one") and ConfigMap team-a/dup-repo (Bundle "two")',
        });
    });

    test("GIVEN two Bundles referencing the same Secret WHEN decided THEN it is one source, mounted once, with no overlap", () => {
        const twin = bundle("team-a", "twin", { entitlements: ["local-entitlement"] });
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local,twin" } });
        const result = patched(decideInjection(input(original, { bundles: byName([local, twin]), keys: teamKeys })), original);
        expect(result.spec.volumes?.[1]).toEqual({
            name: ENTITLEMENTS_VOLUME,
            projected: { defaultMode: 420, sources: [{ secret: { name: "local-entitlement" } }] },
        });
    });

    test("GIVEN a Bundle Secret and a ClusterBundle Secret that share a key WHEN decided THEN the overlap across kinds is denied too", () => {
        const keys = keySets({
            "Secret/team-a/local-entitlement": ["sca.pem"],
            "Secret/openshift-config/etc-pki-entitlement": ["sca.pem"],
        });
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local", [ANNOTATIONS.injectClusterBundle]: "cluster" } });
        expect(
            denied(
                decideInjection(
                    input(original, { bundles: byName([local]), clusterBundles: byName([cluster]), keys, access: allow("cluster") }),
                ),
            ),
        ).toEqual({
            reason: "KeyOverlap",
            code: 409,
            message:
                'overlapping keys in the injected bundles: key "sca.pem" is in both Secret team-a/local-entitlement (Bundle "local") and Secret openshift-config/etc-pki-entitlement (ClusterBundle "cluster")',
        });
    });
});

describe("references", () => {
    test("GIVEN a Bundle whose Secret does not exist WHEN decided THEN the pod is denied naming the Secret and the bundle", () => {
        const broken = bundle("team-a", "broken", { entitlements: ["gone"] });
        expect(
            denied(
                decideInjection(
                    input(pod({ annotations: { [ANNOTATIONS.injectBundle]: "broken" } }), { bundles: byName([broken]), keys: teamKeys }),
                ),
            ),
        ).toEqual({
            reason: "ReferenceNotFound",
            code: 404,
            message: 'referenced Secret not found: Secret team-a/gone (referenced by Bundle "broken")',
        });
    });

    test("GIVEN a Bundle referencing a Secret in another namespace WHEN decided THEN the pod is denied: a projected volume reads only the pod's namespace", () => {
        const stray = bundle("team-a", "stray", { entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }] });
        expect(
            denied(
                decideInjection(
                    input(pod({ annotations: { [ANNOTATIONS.injectBundle]: "stray" } }), { bundles: byName([stray]), keys: teamKeys }),
                ),
            ),
        ).toEqual({
            reason: "InvalidBundle",
            code: 400,
            message:
                'Bundle "stray" references Secret openshift-config/etc-pki-entitlement, outside the pod\'s namespace "team-a" (a projected volume reads only its own namespace)',
        });
    });

    test("GIVEN a ClusterBundle reference without a namespace WHEN decided THEN the pod is denied naming the bundle", () => {
        const vague = clusterBundle("vague", { entitlements: ["etc-pki-entitlement"] });
        expect(
            denied(
                decideInjection(
                    input(pod({ annotations: { [ANNOTATIONS.injectClusterBundle]: "vague" } }), {
                        clusterBundles: byName([vague]),
                        keys: teamKeys,
                        access: allow("vague"),
                    }),
                ),
            ),
        ).toEqual({
            reason: "InvalidBundle",
            code: 400,
            message: 'ClusterBundle "vague" references Secret "etc-pki-entitlement" without a namespace',
        });
    });
});

describe("several sources at the entitlement path, and yum repositories", () => {
    const everything = pod({
        annotations: { [ANNOTATIONS.injectBundle]: "local", [ANNOTATIONS.injectClusterBundle]: "cluster" },
        initContainers: [{ name: "setup", volumeMounts: [TOKEN_MOUNT] }],
        containers: [{ name: "app", volumeMounts: [TOKEN_MOUNT] }, { name: "sidecar" }],
        ephemeralContainers: [{ name: "debug" }],
    });
    const satelliteCluster = clusterBundle("cluster", {
        generation: 4,
        entitlements: [{ name: "etc-pki-entitlement", namespace: "openshift-config" }],
        yumRepositories: [{ name: "satellite", namespace: "openshift-config" }],
    });
    const localWithRepo = bundle("team-a", "local", {
        generation: 2,
        entitlements: ["local-entitlement"],
        yumRepositories: ["local-repo"],
    });
    const repoShare = clusterBundleShareName("cluster", "yum-repo", { namespace: "openshift-config", name: "satellite" });
    const decision = decideInjection(
        input(everything, {
            bundles: byName([localWithRepo]),
            clusterBundles: byName([satelliteCluster]),
            keys: teamKeys,
            access: allow("cluster"),
        }),
    );
    const result = patched(decision, everything);
    const perFile = [
        { name: ENTITLEMENTS_VOLUME, mountPath: `${ENT}/entitlement-key.pem`, subPath: "entitlement-key.pem", readOnly: true },
        { name: ENTITLEMENTS_VOLUME, mountPath: `${ENT}/entitlement.pem`, subPath: "entitlement.pem", readOnly: true },
        { name: shareVolumeName(clusterShare), mountPath: `${ENT}/sca-key.pem`, subPath: "sca-key.pem", readOnly: true },
        { name: shareVolumeName(clusterShare), mountPath: `${ENT}/sca.pem`, subPath: "sca.pem", readOnly: true },
        { name: YUM_REPOS_VOLUME, mountPath: "/run/secrets/redhat.repo", subPath: "redhat.repo", readOnly: true },
        { name: shareVolumeName(repoShare), mountPath: "/run/secrets/satellite.repo", subPath: "satellite.repo", readOnly: true },
    ];

    test("GIVEN a Bundle and a ClusterBundle WHEN decided THEN one projected volume per kind plus one CSI volume per share are added", () => {
        expect(result.spec.volumes).toEqual([
            TOKEN_VOLUME,
            { name: ENTITLEMENTS_VOLUME, projected: { defaultMode: 420, sources: [{ secret: { name: "local-entitlement" } }] } },
            {
                name: shareVolumeName(clusterShare),
                csi: { driver: "csi.sharedresource.openshift.io", readOnly: true, volumeAttributes: { sharedSecret: clusterShare } },
            },
            { name: YUM_REPOS_VOLUME, projected: { defaultMode: 420, sources: [{ configMap: { name: "local-repo" } }] } },
            {
                name: shareVolumeName(repoShare),
                csi: { driver: "csi.sharedresource.openshift.io", readOnly: true, volumeAttributes: { sharedConfigMap: repoShare } },
            },
        ]);
    });

    test("GIVEN several entitlement volumes WHEN decided THEN every key is its own subPath file under the entitlement path, in init and regular containers", () => {
        expect(result.spec.initContainers?.[0].volumeMounts).toEqual([TOKEN_MOUNT, ...perFile]);
        expect(result.spec.containers[0].volumeMounts).toEqual([TOKEN_MOUNT, ...perFile]);
        expect(result.spec.containers[1].volumeMounts).toEqual(perFile);
    });

    test("GIVEN per-file mounts WHEN an ephemeral container is present THEN it gets none (subPath is forbidden there) and a warning says so", () => {
        expect(result.spec.ephemeralContainers?.[0]).toEqual({ name: "debug" });
        expect(admitted(decision).warnings).toEqual([
            "entitlements come from 2 volumes, so each file is mounted on its own (subPath) and a changed Secret reaches this pod only when its containers restart",
            'ephemeral container "debug" lacks 6 per-file subscription mounts: Kubernetes forbids subPath in ephemeral containers',
        ]);
    });

    test("GIVEN a single entitlement volume and yum files WHEN an ephemeral container is present THEN it gets the entitlement directory only", () => {
        const withRepo = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" }, ephemeralContainers: [{ name: "debug" }] });
        const out = patched(decideInjection(input(withRepo, { bundles: byName([localWithRepo]), keys: teamKeys })), withRepo);
        expect(out.spec.ephemeralContainers?.[0].volumeMounts).toEqual([{ name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true }]);
        expect(out.spec.containers[0].volumeMounts).toEqual([
            TOKEN_MOUNT,
            { name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true },
            { name: YUM_REPOS_VOLUME, mountPath: "/run/secrets/redhat.repo", subPath: "redhat.repo", readOnly: true },
        ]);
    });

    test("GIVEN both kinds WHEN decided THEN the generations annotation records each bundle under its kind", () => {
        expect(result.metadata.annotations?.[GEN]).toBe('{"bundles":{"local":2},"clusterBundles":{"cluster":4}}');
    });

    test("GIVEN a yum ConfigMap with a key named etc-pki-entitlement WHEN entitlements are injected too THEN the pod is denied: the file would replace the directory", () => {
        const shadow = bundle("team-a", "shadow", { entitlements: ["local-entitlement"], yumRepositories: ["shadow-repo"] });
        const keys = keySets({ "Secret/team-a/local-entitlement": ["a.pem"], "ConfigMap/team-a/shadow-repo": ["etc-pki-entitlement"] });
        expect(
            denied(
                decideInjection(input(pod({ annotations: { [ANNOTATIONS.injectBundle]: "shadow" } }), { bundles: byName([shadow]), keys })),
            ),
        ).toEqual({
            reason: "MountConflict",
            code: 409,
            message:
                'ConfigMap team-a/shadow-repo (Bundle "shadow") has a key "etc-pki-entitlement", whose file would take the place of the entitlement directory /run/secrets/etc-pki-entitlement',
        });
    });
});

describe("existing mounts", () => {
    const requested = { [ANNOTATIONS.injectBundle]: "local" };
    const withRepo = bundle("team-a", "local", { generation: 2, entitlements: ["local-entitlement"], yumRepositories: ["local-repo"] });
    const decideFor = (containers: Pod["spec"]["containers"], volumes = [TOKEN_VOLUME]) =>
        decideInjection(input(pod({ annotations: requested, containers, volumes }), { bundles: byName([withRepo]), keys: teamKeys }));

    test("GIVEN a container that already mounts something at the entitlement path WHEN decided THEN the pod is denied naming container, volume and path", () => {
        const containers = [{ name: "app", volumeMounts: [{ name: "mine", mountPath: "/run/secrets/etc-pki-entitlement/" }] }];
        expect(denied(decideFor(containers, [{ name: "mine", secret: { secretName: "mine" } }]))).toEqual({
            reason: "MountConflict",
            code: 409,
            message:
                'containers already mount where subscription content goes: containers "app": volume "mine" at "/run/secrets/etc-pki-entitlement/" collides with /run/secrets/etc-pki-entitlement',
        });
    });

    test("GIVEN a read-only Secret volume mounted at /var/run/secrets WHEN decided THEN the pod is denied: nothing can be mounted inside it (/var/run is /run)", () => {
        const containers = [{ name: "app", volumeMounts: [{ name: "creds", mountPath: "/var/run/secrets" }] }];
        expect(denied(decideFor(containers, [{ name: "creds", secret: { secretName: "creds" } }])).message).toBe(
            'containers already mount where subscription content goes: containers "app": volume "creds" at "/var/run/secrets" collides with /run/secrets/etc-pki-entitlement',
        );
    });

    test("GIVEN a file mounted inside the entitlement directory WHEN decided THEN the pod is denied: the injected directory would hide it", () => {
        const containers = [
            {
                name: "app",
                volumeMounts: [{ name: "extra", mountPath: "/run/secrets/etc-pki-entitlement/extra.pem", subPath: "extra.pem" }],
            },
        ];
        expect(denied(decideFor(containers, [{ name: "extra", emptyDir: {} }])).reason).toBe("MountConflict");
    });

    test("GIVEN a writable emptyDir at /run and the service account token at /var/run/secrets/kubernetes.io WHEN decided THEN injection proceeds: mount points can be created inside", () => {
        const containers = [{ name: "app", volumeMounts: [{ name: "run", mountPath: "/run" }, TOKEN_MOUNT] }];
        const decision = admitted(decideFor(containers, [{ name: "run", emptyDir: {} }, TOKEN_VOLUME]));
        expect(decision.injected).toEqual({ bundles: { local: 2 }, clusterBundles: {} });
    });

    test("GIVEN a read-only emptyDir mount at /run WHEN decided THEN the pod is denied", () => {
        const containers = [{ name: "app", volumeMounts: [{ name: "run", mountPath: "/run", readOnly: true }] }];
        expect(denied(decideFor(containers, [{ name: "run", emptyDir: {} }])).reason).toBe("MountConflict");
    });

    test("GIVEN the user's own redhat.repo at /run/secrets/redhat.repo WHEN a yum file of that name is injected THEN the pod is denied", () => {
        const containers = [
            { name: "app", volumeMounts: [{ name: "repo", mountPath: "/run/secrets/redhat.repo", subPath: "redhat.repo" }] },
        ];
        expect(denied(decideFor(containers, [{ name: "repo", configMap: { name: "repo" } }])).message).toBe(
            'containers already mount where subscription content goes: containers "app": volume "repo" at "/run/secrets/redhat.repo" collides with /run/secrets/redhat.repo',
        );
    });
});

describe("generations annotation and re-invocation (reinvocationPolicy: IfNeeded)", () => {
    const original = pod({
        annotations: { [ANNOTATIONS.injectBundle]: "local" },
        initContainers: [{ name: "setup" }],
        containers: [{ name: "app", volumeMounts: [TOKEN_MOUNT] }],
    });
    const state = { bundles: byName([local]), keys: teamKeys };
    const first = patched(decideInjection(input(original, state)), original);

    test("GIVEN an injected pod WHEN decided again THEN nothing is added", () => {
        expect(decideInjection(input(first, state))).toEqual({
            allowed: true,
            patch: [],
            warnings: [],
            injected: { bundles: { local: 2 }, clusterBundles: {} },
        });
    });

    test("GIVEN another webhook added a container after the first pass WHEN re-invoked THEN only that container gets the mounts", () => {
        const grown = structuredClone(first);
        grown.spec.containers.push({ name: "mesh-proxy" });
        expect(admitted(decideInjection(input(grown, state))).patch).toEqual([
            { op: "add", path: "/spec/containers/1/volumeMounts", value: [{ name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true }] },
        ]);
    });

    test("GIVEN a pod without annotations WHEN injected by an always-inject bundle THEN the annotations object is created", () => {
        const bare = pod();
        const auto = bundle("team-a", "auto", { alwaysInject: true, generation: 7, entitlements: ["local-entitlement"] });
        expect(admitted(decideInjection(input(bare, { bundles: byName([auto]), keys: teamKeys }))).patch[0]).toEqual({
            op: "add",
            path: "/metadata/annotations",
            value: { [GEN]: '{"bundles":{"auto":7}}' },
        });
    });

    test("GIVEN a pod copied from an older injected pod (stale generations and volume) WHEN decided THEN annotation and volumes are replaced with the current ones", () => {
        const stale = structuredClone(first);
        stale.metadata.annotations = { ...stale.metadata.annotations, [GEN]: '{\n  "bundles": {"local": 1}\n}' };
        (stale.spec.volumes as Pod["spec"]["volumes"] & object)[1] = {
            name: ENTITLEMENTS_VOLUME,
            projected: { defaultMode: 420, sources: [{ secret: { name: "old" } }] },
        };
        const decision = admitted(decideInjection(input(stale, state)));
        expect(decision.patch).toEqual([
            { op: "add", path: "/metadata/annotations/subscription.openshift.io~1bundle-generations", value: '{"bundles":{"local":2}}' },
            {
                op: "replace",
                path: "/spec/volumes",
                value: [
                    TOKEN_VOLUME,
                    { name: ENTITLEMENTS_VOLUME, projected: { defaultMode: 420, sources: [{ secret: { name: "local-entitlement" } }] } },
                ],
            },
        ]);
    });

    test("GIVEN an equivalent generations annotation written with other spacing and order WHEN decided THEN it is left as is", () => {
        const spaced = structuredClone(first);
        spaced.metadata.annotations = { ...spaced.metadata.annotations, [GEN]: '{ "clusterBundles": {}, "bundles": { "local": 2 } }' };
        expect(admitted(decideInjection(input(spaced, state))).patch).toEqual([]);
    });
});

describe("ephemeral containers added through pods/ephemeralcontainers", () => {
    test("GIVEN an injected pod and a new ephemeral container WHEN the subresource update is decided THEN only the ephemeral container gets the whole-volume mounts", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const injected = patched(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })), original);
        injected.spec.ephemeralContainers = [{ name: "debugger-x7k", image: "busybox" }];
        const decision = admitted(decideEphemeralContainers(injected));
        expect(decision.patch).toEqual([
            {
                op: "add",
                path: "/spec/ephemeralContainers/0/volumeMounts",
                value: [{ name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true }],
            },
        ]);
        expect(decideEphemeralContainers(applyJsonPatch(injected, decision.patch))).toEqual({
            allowed: true,
            patch: [],
            warnings: [],
            injected: { bundles: {}, clusterBundles: {} },
        });
    });

    test("GIVEN a pod without injected volumes WHEN an ephemeral container is added THEN nothing changes", () => {
        expect(admitted(decideEphemeralContainers(pod({ ephemeralContainers: [{ name: "debug" }] }))).patch).toEqual([]);
    });
});

describe("always-inject bundles that cannot be used (issue 27 point 4)", () => {
    const orphan = bundle("team-a", "orphan", { generation: 5, alwaysInject: true, entitlements: ["deleted-entitlement"] });
    const unreadable = {
        ...teamKeys,
        unreadable: (kind: string, namespace: string, name: string) =>
            name === "local-entitlement" ? `the webhook may not read ${kind} ${namespace}/${name}` : undefined,
    };

    test("GIVEN an always-inject Bundle whose Secret was deleted WHEN a pod that asked for nothing is decided THEN it is admitted unchanged with a warning and the bundle is reported skipped", () => {
        const decision = decideInjection(input(pod(), { bundles: byName([orphan]), keys: teamKeys }));
        expect(decision).toEqual({
            allowed: true,
            patch: [],
            warnings: [
                'always-inject Bundle "orphan" not injected: referenced Secret not found: Secret team-a/deleted-entitlement (referenced by Bundle "orphan")',
            ],
            injected: { bundles: {}, clusterBundles: {} },
            skipped: [{ kind: "Bundle", bundle: "team-a/orphan", reason: "ReferenceNotFound" }],
        });
    });

    test("GIVEN the same orphan and a requested usable Bundle WHEN decided THEN the requested one is injected alone and the orphan only warns", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const decision = admitted(decideInjection(input(original, { bundles: byName([orphan, local]), keys: teamKeys })));
        expect(decision.injected).toEqual({ bundles: { local: 2 }, clusterBundles: {} });
        expect(decision.skipped).toEqual([{ kind: "Bundle", bundle: "team-a/orphan", reason: "ReferenceNotFound" }]);
        expect(patched(decision, original).spec.volumes).toContainEqual({
            name: ENTITLEMENTS_VOLUME,
            projected: { defaultMode: 0o644, sources: [{ secret: { name: "local-entitlement" } }] },
        });
    });

    test("GIVEN the orphan is requested by name WHEN decided THEN the pod is denied (the pod asked for it)", () => {
        const orphanRequested = pod({ annotations: { [ANNOTATIONS.injectBundle]: "orphan" } });
        expect(denied(decideInjection(input(orphanRequested, { bundles: byName([orphan]), keys: teamKeys })))).toEqual({
            reason: "ReferenceNotFound",
            code: 404,
            message: 'referenced Secret not found: Secret team-a/deleted-entitlement (referenced by Bundle "orphan")',
        });
    });

    test("GIVEN an always-inject Bundle whose Secret the webhook may not read WHEN a plain pod is decided THEN it is admitted with the reason as a warning; requested, it is denied 403", () => {
        const always = { ...local, alwaysInject: true };
        const plain = admitted(decideInjection(input(pod(), { bundles: byName([always]), keys: unreadable })));
        expect(plain.patch).toEqual([]);
        expect(plain.warnings).toEqual([
            `always-inject Bundle "local" not injected: Bundle "local" references Secret team-a/local-entitlement: the webhook may not read Secret team-a/local-entitlement (grant it with a Role and RoleBinding for the webhook's service account: docs/subscriptions.md, "Teams' own Bundles")`,
        ]);
        const requested = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        expect(denied(decideInjection(input(requested, { bundles: byName([always]), keys: unreadable }))).code).toBe(403);
    });

    test("GIVEN two always-inject Bundles whose keys overlap WHEN a plain pod is decided THEN it is admitted unchanged with a warning naming the overlap", () => {
        const clashA = bundle("team-a", "clash-a", { alwaysInject: true, entitlements: ["local-entitlement"] });
        const clashB = bundle("team-a", "clash-b", { alwaysInject: true, entitlements: ["clash-entitlement"] });
        const decision = admitted(decideInjection(input(pod(), { bundles: byName([clashA, clashB]), keys: teamKeys })));
        expect(decision.patch).toEqual([]);
        expect(decision.warnings).toEqual([
            'always-inject bundles not injected: overlapping keys in the injected bundles: key "entitlement.pem" is in both Secret team-a/local-entitlement (Bundle "clash-a") and Secret team-a/clash-entitlement (Bundle "clash-b")',
        ]);
        expect(decision.skipped).toEqual([
            { kind: "Bundle", bundle: "team-a/clash-a", reason: "KeyOverlap" },
            { kind: "Bundle", bundle: "team-a/clash-b", reason: "KeyOverlap" },
        ]);
    });
});

describe("pods the webhook must not change silently (issue 27 point 5)", () => {
    const requested = { [ANNOTATIONS.injectBundle]: "local" };

    test.each([
        ["spec.os.name windows", { os: { name: "windows" } }, "spec.os.name: windows"],
        [
            "a kubernetes.io/os=windows node selector",
            { nodeSelector: { "kubernetes.io/os": "windows" } },
            "nodeSelector kubernetes.io/os: windows",
        ],
    ])(
        "GIVEN a pod asking for a Bundle with %s WHEN decided THEN it is admitted unchanged with a warning saying why",
        (_case, spec, why) => {
            const original = pod({ annotations: requested });
            Object.assign(original.spec, spec);
            expect(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys }))).toEqual({
                allowed: true,
                patch: [],
                warnings: [
                    `subscription bundles not injected: the pod is for Windows nodes (${why}); the entitlement paths and the Shared Resource CSI driver are Linux-only, so its volumes could not be mounted`,
                ],
                injected: { bundles: {}, clusterBundles: {} },
            });
        },
    );

    test("GIVEN a Linux node selector WHEN decided THEN the pod is injected as usual", () => {
        const original = pod({ annotations: requested });
        original.spec.nodeSelector = { "kubernetes.io/os": "linux" };
        expect(admitted(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys }))).injected.bundles).toEqual({
            local: 2,
        });
    });

    test("GIVEN a user volume named subscription-entitlements and no injection record WHEN a Bundle is injected THEN the pod is refused naming the volume", () => {
        const userVolume = { name: ENTITLEMENTS_VOLUME, emptyDir: {} };
        const original = pod({ annotations: requested, volumes: [TOKEN_VOLUME, userVolume] });
        expect(denied(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })))).toEqual({
            reason: "MountConflict",
            code: 409,
            message: `the pod's volume "subscription-entitlements" has a name reserved for injected subscription volumes (subscription-entitlements, subscription-yum-repos, subscription-share-<8 hex digits>) and would be replaced; rename it`,
        });
    });

    test("GIVEN a pod the webhook already injected (re-invocation) WHEN decided again THEN its own volume is recognised and nothing changes", () => {
        const original = pod({ annotations: requested });
        const once = patched(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })), original);
        expect(admitted(decideInjection(input(once, { bundles: byName([local]), keys: teamKeys }))).patch).toEqual([]);
    });
});

describe("a bundle with yum repositories only", () => {
    test("GIVEN a Bundle with no entitlement and one yum repository WHEN decided THEN the repository file is mounted and no warning speaks of entitlement volumes", () => {
        const yumOnly = bundle("team-a", "repos", { generation: 1, entitlements: [], yumRepositories: ["local-repo"] });
        const repoPod = pod({ annotations: { [ANNOTATIONS.injectBundle]: "repos" } });
        const decision = decideInjection(input(repoPod, { bundles: byName([yumOnly]), keys: teamKeys }));
        expect(admitted(decision).warnings).toEqual([]);
        expect(patched(decision, repoPod).spec.containers[0].volumeMounts).toEqual([
            TOKEN_MOUNT,
            { name: YUM_REPOS_VOLUME, mountPath: "/run/secrets/redhat.repo", subPath: "redhat.repo", readOnly: true },
        ]);
    });
});

describe("never refuse a pod that asked for nothing (issue 37 point 3)", () => {
    const always = { ...local, alwaysInject: true };
    const alwaysCluster = { ...cluster, alwaysInject: true };
    // The driver README's own pattern: a pod mounting its own SharedSecret at the entitlement path.
    const ownShare = {
        name: "own-entitlements",
        csi: { driver: "csi.sharedresource.openshift.io", volumeAttributes: { sharedSecret: "mine" } },
    };
    const ownMount = { name: "own-entitlements", mountPath: ENT, readOnly: true };
    const withOwnMount = (annotations?: Record<string, string>) =>
        pod({
            annotations,
            volumes: [TOKEN_VOLUME, ownShare],
            containers: [{ name: "app", image: "ubi9", volumeMounts: [TOKEN_MOUNT, ownMount] }],
        });

    test.each([
        ["its own SharedSecret mounted at the entitlement path", () => withOwnMount(), "MountConflict"],
        [
            "a file of its own under the entitlement directory",
            () =>
                pod({
                    volumes: [TOKEN_VOLUME, { name: "keys", secret: { secretName: "keys" } }],
                    containers: [
                        {
                            name: "app",
                            volumeMounts: [TOKEN_MOUNT, { name: "keys", mountPath: `${ENT}/custom.pem`, subPath: "custom.pem" }],
                        },
                    ],
                }),
            "MountConflict",
        ],
        [
            "a volume named like a reserved one",
            () => pod({ volumes: [TOKEN_VOLUME, { name: ENTITLEMENTS_VOLUME, emptyDir: {} }] }),
            "MountConflict",
        ],
    ])(
        "GIVEN a pod that asked for nothing with %s WHEN an always-inject Bundle (and, alone, a ClusterBundle) applies THEN it is admitted unchanged, the bundle left out with a warning and counted",
        (_case, make, reason) => {
            for (const [bundles, clusterBundles, kind, name] of [
                [[always], [], "Bundle", "local"],
                [[], [alwaysCluster], "ClusterBundle", "cluster"],
            ] as const) {
                const decision = admitted(
                    decideInjection(
                        input(make(), {
                            bundles: byName([...bundles]),
                            clusterBundles: byName([...clusterBundles]),
                            keys: teamKeys,
                            access: allow("cluster"),
                        }),
                    ),
                );
                expect(decision.patch).toEqual([]);
                expect(decision.injected).toEqual({ bundles: {}, clusterBundles: {} });
                expect(decision.warnings).toEqual([expect.stringMatching(new RegExp(`^always-inject ${kind} "${name}" not injected: `))]);
                expect(decision.skipped).toEqual([{ kind, bundle: kind === "Bundle" ? `team-a/${name}` : name, reason }]);
            }
        },
    );

    test("GIVEN a file of the pod's own under the entitlement directory WHEN two entitlement sources are injected (one file each) THEN they sit beside it: nothing collides", () => {
        const original = pod({
            volumes: [TOKEN_VOLUME, { name: "keys", secret: { secretName: "keys" } }],
            containers: [
                { name: "app", volumeMounts: [TOKEN_MOUNT, { name: "keys", mountPath: `${ENT}/custom.pem`, subPath: "custom.pem" }] },
            ],
        });
        const decision = admitted(
            decideInjection(
                input(original, {
                    bundles: byName([always]),
                    clusterBundles: byName([alwaysCluster]),
                    keys: teamKeys,
                    access: allow("cluster"),
                }),
            ),
        );
        expect(decision.injected).toEqual({ bundles: { local: 2 }, clusterBundles: { cluster: 4 } });
        expect(decision.skipped).toBeUndefined();
    });

    test("GIVEN the same pod naming the Bundle WHEN decided THEN it is refused naming the conflict (the pod asked)", () => {
        expect(
            denied(
                decideInjection(
                    input(withOwnMount({ [ANNOTATIONS.injectBundle]: "local" }), { bundles: byName([always]), keys: teamKeys }),
                ),
            ),
        ).toEqual({
            reason: "MountConflict",
            code: 409,
            message: `containers already mount where subscription content goes: containers "app": volume "own-entitlements" at "${ENT}" collides with ${ENT}`,
        });
    });

    test("GIVEN a requested Bundle and an always-inject one whose keys clash with it WHEN decided THEN the requested one is injected and the always-inject one left out with the overlap as its warning", () => {
        const clash = bundle("team-a", "clash", { alwaysInject: true, entitlements: ["clash-entitlement"] });
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const decision = admitted(decideInjection(input(original, { bundles: byName([local, clash]), keys: teamKeys })));
        expect(decision.injected).toEqual({ bundles: { local: 2 }, clusterBundles: {} });
        expect(decision.warnings).toEqual([
            'always-inject Bundle "clash" not injected: overlapping keys in the injected bundles: key "entitlement.pem" is in both Secret team-a/local-entitlement (Bundle "local") and Secret team-a/clash-entitlement (Bundle "clash")',
        ]);
        expect(decision.skipped).toEqual([{ kind: "Bundle", bundle: "team-a/clash", reason: "KeyOverlap" }]);
    });

    test("GIVEN an always-inject ClusterBundle the service account may not use WHEN a plain pod is decided THEN the warning is counted as AccessDenied", () => {
        const decision = admitted(
            decideInjection(
                input(pod(), {
                    clusterBundles: byName([alwaysCluster]),
                    keys: teamKeys,
                    access: new Map([["cluster", { allowed: false, reason: "use sharedsecrets/x not allowed" }]]),
                }),
            ),
        );
        expect(decision.patch).toEqual([]);
        expect(decision.skipped).toEqual([{ kind: "ClusterBundle", bundle: "cluster", reason: "AccessDenied" }]);
    });

    test("GIVEN a mirror pod WHEN it names a bundle or only always-inject ones apply THEN it is left alone, with a warning only when it asked", () => {
        const mirror = (annotations: Record<string, string>) =>
            pod({ annotations: { "kubernetes.io/config.mirror": "3f2a", ...annotations } });
        expect(
            decideInjection(input(mirror({ [ANNOTATIONS.injectBundle]: "local,absent" }), { bundles: byName([local]), keys: teamKeys })),
        ).toEqual({
            allowed: true,
            patch: [],
            warnings: [
                "subscription bundles not injected: the pod is a mirror pod (kubernetes.io/config.mirror), whose volumes come from its static pod's manifest on the node, and the ServiceAccount admission plugin refuses mirror pods that reference Secrets; mount entitlements in the static pod's manifest instead",
            ],
            injected: { bundles: {}, clusterBundles: {} },
        });
        expect(decideInjection(input(mirror({}), { bundles: byName([always]), keys: teamKeys }))).toEqual({
            allowed: true,
            patch: [],
            warnings: [],
            injected: { bundles: {}, clusterBundles: {} },
        });
    });
});

describe("Windows pods by required node affinity (issue 37 point 3)", () => {
    const requested = { [ANNOTATIONS.injectBundle]: "local" };
    const affinity = (...terms: object[]) => ({
        affinity: { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } } },
    });
    const os = (operator: string, ...values: string[]) => ({ key: "kubernetes.io/os", operator, ...(values.length > 0 ? { values } : {}) });
    const decide = (spec: object) => {
        const original = pod({ annotations: requested });
        Object.assign(original.spec, spec);
        return admitted(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })));
    };
    const windows =
        "subscription bundles not injected: the pod is for Windows nodes (required node affinity: no node selector term admits a Linux node)";

    test.each([
        ["kubernetes.io/os In [windows]", affinity({ matchExpressions: [os("In", "windows")] })],
        ["kubernetes.io/os NotIn [linux]", affinity({ matchExpressions: [os("NotIn", "linux")] })],
        [
            "two terms, both Windows-only",
            affinity(
                { matchExpressions: [os("In", "windows")] },
                { matchExpressions: [{ key: "node.kubernetes.io/windows-build", operator: "Exists" }] },
            ),
        ],
        [
            "beta.kubernetes.io/os In [windows] beside another label",
            affinity({
                matchExpressions: [
                    { key: "beta.kubernetes.io/os", operator: "In", values: ["windows"] },
                    { key: "zone", operator: "In", values: ["a"] },
                ],
            }),
        ],
    ])("GIVEN required node affinity %s WHEN decided THEN nothing is injected and the warning says why", (_case, spec) => {
        const decision = decide(spec);
        expect([decision.patch, decision.warnings[0]?.startsWith(windows)]).toEqual([[], true]);
    });

    test.each([
        ["kubernetes.io/os In [linux, windows]", affinity({ matchExpressions: [os("In", "linux", "windows")] })],
        [
            "one Windows term and one without an OS",
            affinity({ matchExpressions: [os("In", "windows")] }, { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }),
        ],
        ["kubernetes.io/os Exists", affinity({ matchExpressions: [os("Exists")] })],
        ["no terms", affinity()],
        [
            "only a toleration of the Windows taint",
            { tolerations: [{ key: "os", operator: "Equal", value: "Windows", effect: "NoSchedule" }] },
        ],
    ])("GIVEN %s WHEN decided THEN the pod may run on Linux and is injected", (_case, spec) => {
        expect(decide(spec).injected.bundles).toEqual({ local: 2 });
    });
});

describe("ephemeral containers only new ones (issue 37 point 3)", () => {
    test("GIVEN an earlier ephemeral container without the mounts WHEN kubectl debug adds another THEN only the new one is patched (Kubernetes forbids changing an existing one)", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const injected = patched(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })), original);
        injected.spec.ephemeralContainers = [{ name: "debugger-old", image: "busybox" }];
        const before = structuredClone(injected);
        injected.spec.ephemeralContainers.push({ name: "debugger-new", image: "busybox" });
        expect(admitted(decideEphemeralContainers(injected, new Set(["debugger-old"]))).patch).toEqual([
            {
                op: "add",
                path: "/spec/ephemeralContainers/1/volumeMounts",
                value: [{ name: ENTITLEMENTS_VOLUME, mountPath: ENT, readOnly: true }],
            },
        ]);
        expect(before.spec.ephemeralContainers).toHaveLength(1);
    });

    test("GIVEN an existing ephemeral container whose own mount collides WHEN another is added THEN the update is not refused for it", () => {
        const original = pod({ annotations: { [ANNOTATIONS.injectBundle]: "local" } });
        const injected = patched(decideInjection(input(original, { bundles: byName([local]), keys: teamKeys })), original);
        injected.spec.ephemeralContainers = [
            { name: "old", volumeMounts: [{ name: "kube-api-access-x1", mountPath: ENT }] },
            { name: "new", image: "busybox" },
        ];
        expect(admitted(decideEphemeralContainers(injected, new Set(["old"]))).patch.map((op) => op.path)).toEqual([
            "/spec/ephemeralContainers/1/volumeMounts",
        ]);
    });
});
