import * as fs from "node:fs";
import * as path from "node:path";
import fc from "fast-check";
import { podOf, restrictedProfileViolations } from "../../components/shared/pod-security";
import { podSecurityRestricted } from "../../policy-packs/k8s-rbac/pod-security";
import { ROOT } from "../helpers/render";
import { PACKS_START } from "../helpers/policy-packs";
import { analyzed, k8s, UNKNOWN_VALUE, violations } from "./support";

/** Third-party AdmissionReviews (see ../shared/testdata/SOURCES.md): the pod of a review or of a bare request. */
function reviewedPod(file: string): Record<string, unknown> {
    const document = JSON.parse(fs.readFileSync(path.join(ROOT, "..", "shared", "testdata", "admission-reviews", file), "utf8"));
    return (document.request ?? document).object;
}

const RESTRICTED_CONTAINER = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
    seccompProfile: { type: "RuntimeDefault" },
};

/** A Deployment shaped like the subscription webhook's: restricted at pod and container level. */
function deployment(
    podSpec: Record<string, unknown> = {},
    container: Record<string, unknown> = {},
    annotations: unknown = { "cluster-platform.io/serving-cert-hash": "abc" },
) {
    return k8s({
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "webhook", namespace: "subscription-injection" },
        spec: {
            replicas: 3,
            selector: { matchLabels: { app: "webhook" } },
            template: {
                metadata: { labels: { app: "webhook" }, annotations },
                spec: {
                    securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
                    containers: [
                        { name: "webhook", image: "registry/webhook@sha256:00", securityContext: RESTRICTED_CONTAINER, ...container },
                    ],
                    volumes: [
                        { name: "tmp", emptyDir: {} },
                        { name: "cert", secret: { secretName: "webhook-tls" } },
                    ],
                    ...podSpec,
                },
            },
        },
    });
}

describe("the restricted profile (components/shared/pod-security.ts), on third-party admission payloads", () => {
    test("GIVEN kubewarden's pod with a privileged ephemeral container WHEN judged THEN every container misses the restricted settings and the ephemeral one is privileged", () => {
        const pod = reviewedPod("kubewarden-pod-privileged-policy-privileged_ephemeral_container.request.json") as {
            spec: Record<string, unknown>;
            metadata: { annotations: Record<string, unknown> };
        };
        expect(restrictedProfileViolations(pod.spec, pod.metadata.annotations).map((v) => `[${v.check}] ${v.message}`)).toEqual([
            '[Privileged Containers] ephemeral container "nginx" (ephemeralContainers[0]): securityContext.privileged is true; it must be false or unset',
            '[Privilege Escalation] container "sleeping-sidecar" (containers[0]): securityContext.allowPrivilegeEscalation must be false',
            '[Privilege Escalation] container "nginx" (containers[1]): securityContext.allowPrivilegeEscalation must be false',
            '[Privilege Escalation] ephemeral container "nginx" (ephemeralContainers[0]): securityContext.allowPrivilegeEscalation must be false',
            '[Running as Non-root] container "sleeping-sidecar" (containers[0]): runAsNonRoot must be true, on the container or the pod securityContext',
            '[Running as Non-root] container "nginx" (containers[1]): runAsNonRoot must be true, on the container or the pod securityContext',
            '[Running as Non-root] ephemeral container "nginx" (ephemeralContainers[0]): runAsNonRoot must be true, on the container or the pod securityContext',
            '[Seccomp] container "sleeping-sidecar" (containers[0]): seccompProfile.type must be RuntimeDefault or Localhost, on the container or the pod securityContext',
            '[Seccomp] container "nginx" (containers[1]): seccompProfile.type must be RuntimeDefault or Localhost, on the container or the pod securityContext',
            '[Seccomp] ephemeral container "nginx" (ephemeralContainers[0]): seccompProfile.type must be RuntimeDefault or Localhost, on the container or the pod securityContext',
            '[Capabilities] container "sleeping-sidecar" (containers[0]): securityContext.capabilities.drop must include "ALL"',
            '[Capabilities] container "nginx" (containers[1]): securityContext.capabilities.drop must include "ALL"',
            '[Capabilities] ephemeral container "nginx" (ephemeralContainers[0]): securityContext.capabilities.drop must include "ALL"',
        ]);
    });

    test("GIVEN kubewarden's pod whose init container allows privilege escalation, made restricted everywhere else WHEN judged THEN only that container is reported", () => {
        const pod = reviewedPod("kubewarden-allow-privilege-escalation-req_pod_with_init_container.request.json") as {
            spec: Record<string, unknown> & { initContainers: Record<string, unknown>[]; containers: Record<string, unknown>[] };
        };
        const spec = {
            ...pod.spec,
            securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
            initContainers: pod.spec.initContainers.map((c) => ({
                ...c,
                securityContext: { ...RESTRICTED_CONTAINER, allowPrivilegeEscalation: true },
            })),
            containers: pod.spec.containers.map((c) => ({ ...c, securityContext: RESTRICTED_CONTAINER })),
        };
        expect(restrictedProfileViolations(spec)).toEqual([
            {
                check: "Privilege Escalation",
                message: 'init container "init-myservice" (initContainers[0]): securityContext.allowPrivilegeEscalation must be false',
            },
        ]);
    });

    test("GIVEN host namespaces, a host port, hostPath, a root user, added capabilities, unsafe sysctls, SELinux and AppArmor overrides WHEN judged THEN each is named by its control", () => {
        const spec = {
            hostNetwork: true,
            hostPID: true,
            securityContext: {
                runAsNonRoot: true,
                runAsUser: 0,
                seccompProfile: { type: "Unconfined" },
                sysctls: [{ name: "kernel.msgmax", value: "1" }],
                seLinuxOptions: { type: "spc_t", user: "root" },
            },
            containers: [
                {
                    name: "app",
                    ports: [{ containerPort: 80, hostPort: 80 }],
                    securityContext: {
                        ...RESTRICTED_CONTAINER,
                        capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE", "SYS_ADMIN"] },
                        procMount: "Unmasked",
                        appArmorProfile: { type: "Unconfined" },
                    },
                },
            ],
            volumes: [{ name: "root", hostPath: { path: "/" } }],
        };
        const annotations = { "container.apparmor.security.beta.kubernetes.io/app": "unconfined", "other.io/hash": "x" };
        expect(restrictedProfileViolations(spec, annotations).map((v) => `[${v.check}] ${v.message}`)).toEqual([
            "[Host Namespaces] hostNetwork is true; it must be false or unset",
            "[Host Namespaces] hostPID is true; it must be false or unset",
            '[Host Ports] container "app" (containers[0].ports[0]): hostPort is 80; it must be 0 or unset',
            '[AppArmor] container "app" (containers[0]): securityContext.appArmorProfile.type is "Unconfined"; it must be RuntimeDefault, Localhost or unset',
            '[AppArmor] metadata.annotations["container.apparmor.security.beta.kubernetes.io/app"] is "unconfined"; it must be runtime/default or localhost/<profile>',
            '[SELinux] securityContext.seLinuxOptions.type is "spc_t"; it must be unset or one of container_t, container_init_t, container_kvm_t, container_engine_t',
            '[SELinux] securityContext.seLinuxOptions.user is "root"; it must be unset',
            '[/proc Mount Type] container "app" (containers[0]): securityContext.procMount is "Unmasked"; it must be Default or unset',
            '[Sysctls] securityContext.sysctls[0] sets "kernel.msgmax", which is not in the safe set (kernel.shm_rmid_forced, net.ipv4.ip_local_port_range, net.ipv4.ip_local_reserved_ports, net.ipv4.ip_unprivileged_port_start, net.ipv4.ping_group_range, net.ipv4.tcp_fin_timeout, net.ipv4.tcp_keepalive_intvl, net.ipv4.tcp_keepalive_probes, net.ipv4.tcp_keepalive_time, net.ipv4.tcp_syncookies)',
            '[Volume Types] volumes[0] ("root") is a hostPath volume; allowed types are configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected, secret',
            "[Running as Non-root user] securityContext.runAsUser is 0; it must be non-zero or unset",
            '[Seccomp] securityContext.seccompProfile.type is "Unconfined"; it must be RuntimeDefault or Localhost',
            '[Capabilities] container "app" (containers[0]): securityContext.capabilities.add has "SYS_ADMIN"; only NET_BIND_SERVICE may be added',
        ]);
    });

    test("GIVEN a Windows pod WHEN judged THEN the Linux-only controls (privilege escalation, seccomp, capabilities) are not required", () => {
        const spec = { os: { name: "windows" }, securityContext: { runAsNonRoot: true }, containers: [{ name: "win" }] };
        expect(restrictedProfileViolations(spec)).toEqual([]);
    });

    test("GIVEN any pod whose containers all set the restricted container settings WHEN judged THEN it passes, however many containers it has", () => {
        fc.assert(
            fc.property(
                fc.array(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 6 }),
                fc.boolean(),
                (names, podLevel) => {
                    const container = podLevel
                        ? { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } }
                        : RESTRICTED_CONTAINER;
                    const spec = {
                        ...(podLevel
                            ? { securityContext: { runAsNonRoot: true, seccompProfile: { type: "Localhost", localhostProfile: "p.json" } } }
                            : {}),
                        containers: names.map((name) => ({ name, securityContext: container })),
                    };
                    expect(restrictedProfileViolations(spec)).toEqual([]);
                },
            ),
        );
    });

    test("GIVEN each workload kind WHEN its pod is located THEN the template path is the kind's", () => {
        const template = { metadata: { labels: { a: "b" } }, spec: { containers: [] } };
        expect(podOf("Deployment", { spec: { template } })).toEqual({
            metadata: template.metadata,
            spec: template.spec,
            path: "spec.template.spec",
        });
        expect(podOf("CronJob", { spec: { jobTemplate: { spec: { template } } } })?.path).toEqual("spec.jobTemplate.spec.template.spec");
        expect(podOf("Pod", { metadata: { name: "p" }, spec: { containers: [] } })).toEqual({
            metadata: { name: "p" },
            spec: { containers: [] },
            path: "spec",
        });
        expect(podOf("Service", { spec: {} })).toBeUndefined();
    });
});

describe("k8s-pod-security-restricted", () => {
    test("GIVEN a Deployment shaped like the subscription webhook's WHEN analyzed THEN it passes", () => {
        expect(violations(podSecurityRestricted, deployment())).toEqual([]);
    });

    test("GIVEN a Deployment with a privileged sidecar WHEN analyzed THEN one violation lists every shortfall of that container", () => {
        const target = deployment({
            containers: [
                { name: "webhook", securityContext: RESTRICTED_CONTAINER },
                { name: "proxy", securityContext: { privileged: true, runAsNonRoot: false } },
            ],
        });
        expect(violations(podSecurityRestricted, target)).toEqual([
            [
                'Deployment "subscription-injection/webhook" (spec.template.spec) does not meet the restricted profile:',
                '  - [Privileged Containers] container "proxy" (containers[1]): securityContext.privileged is true; it must be false or unset',
                '  - [Privilege Escalation] container "proxy" (containers[1]): securityContext.allowPrivilegeEscalation must be false',
                '  - [Running as Non-root] container "proxy" (containers[1]): securityContext.runAsNonRoot is false; it must be true',
                '  - [Capabilities] container "proxy" (containers[1]): securityContext.capabilities.drop must include "ALL"',
            ].join("\n"),
        ]);
    });

    test("GIVEN pod annotations unknown during a preview (a certificate hash) WHEN analyzed THEN the pod is still judged", () => {
        expect(violations(podSecurityRestricted, deployment({}, {}, UNKNOWN_VALUE))).toEqual([]);
        expect(violations(podSecurityRestricted, deployment({ hostIPC: true }, {}, { hash: UNKNOWN_VALUE }))).toEqual([
            'Deployment "subscription-injection/webhook" (spec.template.spec) does not meet the restricted profile:\n  - [Host Namespaces] hostIPC is true; it must be false or unset',
        ]);
    });

    test(
        "GIVEN a pod template that is wholly unknown during a preview WHEN analyzed by the pack's analyzer THEN it reports that the policy cannot run yet (advisory)",
        async () => {
            const target = k8s({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "x", namespace: "y" }, spec: UNKNOWN_VALUE });
            expect(await analyzed(podSecurityRestricted, target)).toEqual([
                "advisory: can't run policy 'k8s-pod-security-restricted' from policy pack 'k8s-rbac@v0.1.0' during preview: string value at .spec can't be known during preview",
            ]);
        },
        PACKS_START,
    );

    test("GIVEN an exempt namespace, a DeploymentPatch or a CronJob that is restricted WHEN analyzed THEN nothing is reported", () => {
        const bad = deployment({ hostPID: true });
        expect(violations(podSecurityRestricted, bad, { exemptNamespaces: ["subscription-injection"] })).toEqual([]);
        expect(
            violations(
                podSecurityRestricted,
                k8s(
                    { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "webhook", namespace: "x" }, spec: { replicas: 1 } },
                    "DeploymentPatch",
                ),
            ),
        ).toEqual([]);
        const job = k8s({
            apiVersion: "batch/v1",
            kind: "CronJob",
            metadata: { name: "rotate", namespace: "ops" },
            spec: {
                schedule: "0 0 * * *",
                jobTemplate: {
                    spec: {
                        template: {
                            spec: {
                                securityContext: { runAsNonRoot: true, seccompProfile: { type: "RuntimeDefault" } },
                                containers: [{ name: "c", securityContext: RESTRICTED_CONTAINER }],
                            },
                        },
                    },
                },
            },
        });
        expect(violations(podSecurityRestricted, job)).toEqual([]);
    });
});
