/**
 * The Pod Security Standards' "restricted" profile (which includes "baseline"), as pure checks
 * on a pod spec: what the API server's Pod Security admission enforces on a namespace labelled
 * `pod-security.kubernetes.io/enforce: restricted`. Components that build pod templates and
 * the k8s-rbac policy pack both judge pods with these functions. No Pulumi imports.
 *
 * Checks are named as in the standard (kubernetes.io/docs/concepts/security/pod-security-standards)
 * so a message can be looked up there. Only the fields a check needs are read: the policy pack
 * passes objects whose other fields may be unknown during a preview.
 */
import { asRecord } from "./records";

type Obj = Record<string, unknown>;

/** Volume types the restricted profile allows; every other one (hostPath first) is refused. */
export const RESTRICTED_VOLUME_TYPES = [
    "configMap",
    "csi",
    "downwardAPI",
    "emptyDir",
    "ephemeral",
    "persistentVolumeClaim",
    "projected",
    "secret",
] as const;

/**
 * Volume types OpenShift's restricted-v2 SCC allows: the restricted profile's without csi and
 * ephemeral (openshift/cluster-kube-apiserver-operator
 * bindata/bootkube/scc-manifests/0000_20_kube-apiserver-operator_00_scc-restricted-v2.yaml).
 */
export const RESTRICTED_V2_VOLUME_TYPES = ["configMap", "downwardAPI", "emptyDir", "persistentVolumeClaim", "projected", "secret"] as const;

/**
 * What the pods are judged against. `kubernetes`: the restricted Pod Security Standard, every
 * control set on the pod (kubernetes/pod-security-admission policy/check_*.go). `openshift`:
 * the restricted-v2 SCC that admits an OperatorHub-style operator's pods. It *assigns* what the
 * standard asks the pod to set: a UID from the namespace's range (`runAsUser: MustRunAsRange`,
 * so the pod runs non-root without `runAsNonRoot`), an fsGroup (`MustRunAs`),
 * `allowPrivilegeEscalation: false` (`allowPrivilegeEscalation: false`), the seccomp profile
 * `runtime/default` ("default the seccomp profile to runtime/default if unset") and dropping
 * ALL capabilities (`requiredDropCapabilities: [ALL]`). So an unset field passes there, while a
 * field set against it (privileged, host namespaces and ports, root, added capabilities,
 * `allowPrivilegeEscalation: true`, an unconfined profile, a volume type the SCC lacks) is
 * still a violation.
 */
export type PodSecurityPlatform = "kubernetes" | "openshift";

export interface ProfileOptions {
    platform?: PodSecurityPlatform;
    /**
     * Judge only the fields the spec sets (a server-side-apply patch of a workload the stack
     * does not own: what it leaves out is not its to set).
     */
    setFieldsOnly?: boolean;
}

/** The only capability a restricted container may add. */
export const RESTRICTED_ADDABLE_CAPABILITIES = ["NET_BIND_SERVICE"] as const;

/** Sysctls the baseline profile allows (the "safe" set, as of Kubernetes 1.29). */
export const SAFE_SYSCTLS = [
    "kernel.shm_rmid_forced",
    "net.ipv4.ip_local_port_range",
    "net.ipv4.ip_local_reserved_ports",
    "net.ipv4.ip_unprivileged_port_start",
    "net.ipv4.ping_group_range",
    "net.ipv4.tcp_fin_timeout",
    "net.ipv4.tcp_keepalive_intvl",
    "net.ipv4.tcp_keepalive_probes",
    "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_syncookies",
] as const;

/** SELinux types the baseline profile allows (besides unset). */
export const ALLOWED_SELINUX_TYPES = ["container_t", "container_init_t", "container_kvm_t", "container_engine_t"] as const;

const SECCOMP_CONFINED = ["RuntimeDefault", "Localhost"];
const APPARMOR_ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";
const CONTAINER_LISTS = ["initContainers", "containers", "ephemeralContainers"] as const;

/** One way a pod falls short of the profile: the standard's check name and what is wrong. */
export interface PodSecurityViolation {
    /** The standard's control, e.g. "Privilege Escalation". */
    check: string;
    /** Which field, relative to the pod spec (or `metadata.annotations[...]`), and what is wrong. */
    message: string;
}

const obj: (value: unknown) => Obj | undefined = asRecord;

function list(value: unknown): unknown[] {
    return Array.isArray(value) ? value : [];
}

function text(value: unknown): string {
    return JSON.stringify(value);
}

interface ContainerRef {
    /** `containers[0]`, for paths. */
    at: string;
    /** `container "webhook"`, for messages. */
    who: string;
    spec: Obj;
}

function containersOf(spec: Obj): ContainerRef[] {
    const out: ContainerRef[] = [];
    for (const field of CONTAINER_LISTS) {
        list(spec[field]).forEach((entry, index) => {
            const container = obj(entry) ?? {};
            const kind = field === "containers" ? "container" : field === "initContainers" ? "init container" : "ephemeral container";
            out.push({ at: `${field}[${index}]`, who: `${kind} ${text(container.name)}`, spec: container });
        });
    }
    return out;
}

/**
 * Every way `podSpec` (with the pod's `annotations`) falls short of the restricted profile, in
 * the standard's order. Windows pods (`spec.os.name: windows`) are exempt from the Linux-only
 * controls (privilege escalation, seccomp, capabilities), as the standard says.
 */
export function restrictedProfileViolations(
    podSpec: Obj,
    annotations: Record<string, unknown> = {},
    options: ProfileOptions = {},
): PodSecurityViolation[] {
    const violations: PodSecurityViolation[] = [];
    const openshift = options.platform === "openshift";
    // Unset fields fall short only where nothing assigns them: on plain Kubernetes, in a whole object.
    const judgeUnset = !openshift && options.setFieldsOnly !== true;
    const volumeTypes: readonly string[] = openshift ? RESTRICTED_V2_VOLUME_TYPES : RESTRICTED_VOLUME_TYPES;
    const add = (check: string, message: string) => violations.push({ check, message });
    const pod = obj(podSpec.securityContext) ?? {};
    const containers = containersOf(podSpec);
    const windows = obj(podSpec.os)?.name === "windows";

    // ---- baseline
    if (obj(pod.windowsOptions)?.hostProcess === true) {
        add("HostProcess", "securityContext.windowsOptions.hostProcess is true; it must be false or unset");
    }
    for (const c of containers) {
        if (obj(obj(c.spec.securityContext)?.windowsOptions)?.hostProcess === true) {
            add("HostProcess", `${c.who} (${c.at}): securityContext.windowsOptions.hostProcess is true; it must be false or unset`);
        }
    }
    for (const field of ["hostNetwork", "hostPID", "hostIPC"]) {
        if (podSpec[field] === true) {
            add("Host Namespaces", `${field} is true; it must be false or unset`);
        }
    }
    for (const c of containers) {
        if (obj(c.spec.securityContext)?.privileged === true) {
            add("Privileged Containers", `${c.who} (${c.at}): securityContext.privileged is true; it must be false or unset`);
        }
    }
    for (const c of containers) {
        list(c.spec.ports).forEach((port, index) => {
            const hostPort = obj(port)?.hostPort;
            if (hostPort !== undefined && hostPort !== 0) {
                add("Host Ports", `${c.who} (${c.at}.ports[${index}]): hostPort is ${text(hostPort)}; it must be 0 or unset`);
            }
        });
    }
    const appArmor = (where: string, profile: unknown) => {
        const type = obj(profile)?.type;
        if (type !== undefined && type !== "RuntimeDefault" && type !== "Localhost") {
            add("AppArmor", `${where}.appArmorProfile.type is ${text(type)}; it must be RuntimeDefault, Localhost or unset`);
        }
    };
    appArmor("securityContext", pod.appArmorProfile);
    for (const c of containers) {
        appArmor(`${c.who} (${c.at}): securityContext`, obj(c.spec.securityContext)?.appArmorProfile);
    }
    // Only AppArmor annotations are read: others (a certificate hash, say) may be unknown in a preview.
    for (const key of Object.keys(annotations).filter((k) => k.startsWith(APPARMOR_ANNOTATION_PREFIX))) {
        const value = annotations[key];
        if (!(value === "runtime/default" || (typeof value === "string" && value.startsWith("localhost/")))) {
            add("AppArmor", `metadata.annotations[${text(key)}] is ${text(value)}; it must be runtime/default or localhost/<profile>`);
        }
    }
    const seLinux = (where: string, options: unknown) => {
        const o = obj(options);
        if (!o) {
            return;
        }
        if (o.type !== undefined && o.type !== "" && !(ALLOWED_SELINUX_TYPES as readonly unknown[]).includes(o.type)) {
            add(
                "SELinux",
                `${where}.seLinuxOptions.type is ${text(o.type)}; it must be unset or one of ${ALLOWED_SELINUX_TYPES.join(", ")}`,
            );
        }
        for (const field of ["user", "role"]) {
            if (o[field] !== undefined && o[field] !== "") {
                add("SELinux", `${where}.seLinuxOptions.${field} is ${text(o[field])}; it must be unset`);
            }
        }
    };
    seLinux("securityContext", pod.seLinuxOptions);
    for (const c of containers) {
        seLinux(`${c.who} (${c.at}): securityContext`, obj(c.spec.securityContext)?.seLinuxOptions);
    }
    for (const c of containers) {
        const procMount = obj(c.spec.securityContext)?.procMount;
        if (procMount !== undefined && procMount !== "Default") {
            add("/proc Mount Type", `${c.who} (${c.at}): securityContext.procMount is ${text(procMount)}; it must be Default or unset`);
        }
    }
    list(pod.sysctls).forEach((sysctl, index) => {
        const name = obj(sysctl)?.name;
        if (!(SAFE_SYSCTLS as readonly unknown[]).includes(name)) {
            add(
                "Sysctls",
                `securityContext.sysctls[${index}] sets ${text(name)}, which is not in the safe set (${SAFE_SYSCTLS.join(", ")})`,
            );
        }
    });

    // ---- restricted
    list(podSpec.volumes).forEach((entry, index) => {
        const volume = obj(entry) ?? {};
        const types = Object.keys(volume).filter((k) => k !== "name");
        for (const type of types.filter((t) => !volumeTypes.includes(t))) {
            add(
                "Volume Types",
                `volumes[${index}] (${text(volume.name)}) is a ${type} volume; allowed types are ${volumeTypes.join(", ")}${openshift ? " (restricted-v2)" : ""}`,
            );
        }
    });
    if (!windows) {
        for (const c of containers) {
            const escalation = obj(c.spec.securityContext)?.allowPrivilegeEscalation;
            if (escalation !== false && (judgeUnset || escalation !== undefined)) {
                add("Privilege Escalation", `${c.who} (${c.at}): securityContext.allowPrivilegeEscalation must be false`);
            }
        }
    }
    const podNonRoot = pod.runAsNonRoot === true;
    if (pod.runAsNonRoot === false) {
        add("Running as Non-root", "securityContext.runAsNonRoot is false; it must be true");
    }
    for (const c of containers) {
        const own = obj(c.spec.securityContext)?.runAsNonRoot;
        if (own === false) {
            add("Running as Non-root", `${c.who} (${c.at}): securityContext.runAsNonRoot is false; it must be true`);
        } else if (own !== true && !podNonRoot && judgeUnset) {
            add("Running as Non-root", `${c.who} (${c.at}): runAsNonRoot must be true, on the container or the pod securityContext`);
        }
    }
    if (pod.runAsUser === 0) {
        add("Running as Non-root user", "securityContext.runAsUser is 0; it must be non-zero or unset");
    }
    for (const c of containers) {
        if (obj(c.spec.securityContext)?.runAsUser === 0) {
            add("Running as Non-root user", `${c.who} (${c.at}): securityContext.runAsUser is 0; it must be non-zero or unset`);
        }
    }
    if (!windows) {
        const podSeccomp = obj(pod.seccompProfile)?.type;
        if (podSeccomp !== undefined && !SECCOMP_CONFINED.includes(podSeccomp as string)) {
            add("Seccomp", `securityContext.seccompProfile.type is ${text(podSeccomp)}; it must be RuntimeDefault or Localhost`);
        }
        for (const c of containers) {
            const own = obj(obj(c.spec.securityContext)?.seccompProfile)?.type;
            if (own !== undefined && !SECCOMP_CONFINED.includes(own as string)) {
                add(
                    "Seccomp",
                    `${c.who} (${c.at}): securityContext.seccompProfile.type is ${text(own)}; it must be RuntimeDefault or Localhost`,
                );
            } else if (own === undefined && podSeccomp === undefined && judgeUnset) {
                add(
                    "Seccomp",
                    `${c.who} (${c.at}): seccompProfile.type must be RuntimeDefault or Localhost, on the container or the pod securityContext`,
                );
            }
        }
        for (const c of containers) {
            const capabilities = obj(obj(c.spec.securityContext)?.capabilities) ?? {};
            if (!list(capabilities.drop).includes("ALL") && judgeUnset) {
                add("Capabilities", `${c.who} (${c.at}): securityContext.capabilities.drop must include "ALL"`);
            }
            for (const capability of list(capabilities.add)) {
                if (!(RESTRICTED_ADDABLE_CAPABILITIES as readonly unknown[]).includes(capability)) {
                    add(
                        "Capabilities",
                        `${c.who} (${c.at}): securityContext.capabilities.add has ${text(capability)}; only ${RESTRICTED_ADDABLE_CAPABILITIES.join(", ")} may be added`,
                    );
                }
            }
        }
    }
    return violations;
}

/** Where a workload kind keeps its pod template (`spec.template` for most; a CronJob nests it in its job template). */
export const POD_TEMPLATE_PATHS: Readonly<Record<string, readonly string[]>> = {
    Pod: [],
    Deployment: ["spec", "template"],
    ReplicaSet: ["spec", "template"],
    StatefulSet: ["spec", "template"],
    DaemonSet: ["spec", "template"],
    ReplicationController: ["spec", "template"],
    Job: ["spec", "template"],
    CronJob: ["spec", "jobTemplate", "spec", "template"],
};

/** The pod (its `metadata` and `spec`) of a workload object, or undefined for kinds that run no pods. */
export function podOf(kind: string, object: Obj): { metadata: Obj; spec: Obj; path: string } | undefined {
    const path = POD_TEMPLATE_PATHS[kind];
    if (!path) {
        return undefined;
    }
    let template: Obj | undefined = object;
    for (const key of path) {
        template = obj(template?.[key]);
    }
    if (!template) {
        return undefined;
    }
    return { metadata: obj(template.metadata) ?? {}, spec: obj(template.spec) ?? {}, path: [...path, "spec"].join(".") };
}
