/**
 * The pods the stack runs (webhook servers, operators) meet the profile of the platform the
 * stack targets: the Pod Security Standards' "restricted" profile on Kubernetes, OpenShift's
 * restricted-v2 SCC on OpenShift (which assigns the UID, fsGroup, seccomp profile and dropped
 * capabilities the standard asks a pod to set). `npm run policy:config` passes the stack's
 * cluster.platform.
 */
import { podOf, PodSecurityPlatform, restrictedProfileViolations } from "../../components/shared/pod-security";
import { describeObject, identityOf, k8sTypeOf, objectPolicy } from "../shared/k8s";
import { stringList } from "../shared/policy";
import { asObject, known, Obj, UNKNOWN } from "../shared/values";

interface PodSecurityConfig {
    exemptNamespaces: string[];
    platform: PodSecurityPlatform;
}

/** The groups of the workload kinds `podOf` knows. */
const WORKLOAD_GROUPS: Readonly<Record<string, string>> = {
    Pod: "",
    ReplicationController: "",
    Deployment: "apps",
    ReplicaSet: "apps",
    StatefulSet: "apps",
    DaemonSet: "apps",
    Job: "batch",
    CronJob: "batch",
};

export const podSecurityRestricted = objectPolicy<PodSecurityConfig>(
    {
        name: "k8s-pod-security-restricted",
        description: "Pods and pod templates meet the Pod Security Standards' restricted profile (on OpenShift: the restricted-v2 SCC).",
        severity: "high",
        remediationSteps:
            "In the pod template set securityContext.runAsNonRoot: true and seccompProfile.type: RuntimeDefault; in every container set securityContext.allowPrivilegeEscalation: false and capabilities.drop: [ALL]; use only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret volumes; no host namespaces, host ports or privileged containers. On OpenShift (platform: openshift) leave runAsUser, fsGroup, seccompProfile, allowPrivilegeEscalation and capabilities.drop to the restricted-v2 SCC, which assigns them, and use only configMap, downwardAPI, emptyDir, persistentVolumeClaim, projected and secret volumes. See https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted.",
        config: {
            exemptNamespaces: stringList("Namespaces whose workloads are not judged (as Pod Security admission's exemptions)."),
            platform: {
                type: "string",
                enum: ["kubernetes", "openshift"],
                default: "kubernetes",
                description:
                    "The stack's cluster.platform: kubernetes judges the restricted Pod Security Standard, openshift the restricted-v2 SCC (npm run policy:config passes it).",
            },
        },
    },
    (args, config, report) => {
        const type = k8sTypeOf(args.type);
        if (!type || WORKLOAD_GROUPS[type.kind] !== type.group) {
            return;
        }
        const identity = identityOf(args.props, args.name);
        if (identity.namespace !== undefined && config.exemptNamespaces.includes(identity.namespace)) {
            return;
        }
        const pod = podOf(type.kind, args.props as Obj);
        if (!pod) {
            return;
        }
        // Annotations often carry values computed from other resources (a certificate hash): only AppArmor's are read.
        const annotations = known(() => asObject(pod.metadata.annotations));
        // A patch of a workload the stack does not own is judged on the fields it sets.
        const violations = restrictedProfileViolations(pod.spec, annotations === UNKNOWN ? {} : (annotations ?? {}), {
            platform: config.platform,
            setFieldsOnly: type.patch,
        });
        if (violations.length > 0) {
            report(
                [
                    `${describeObject(type.kind, identity)} (${pod.path}) does not meet the ${config.platform === "openshift" ? "restricted-v2 SCC" : "restricted profile"}:`,
                    ...violations.map((v) => `  - [${v.check}] ${v.message}`),
                ].join("\n"),
            );
        }
    },
);
