/**
 * The pods the stack runs (webhook servers, operators) meet the Pod Security Standards'
 * "restricted" profile, so they run unchanged in namespaces that enforce it and on OpenShift's
 * restricted-v2 SCC.
 */
import { podOf, restrictedProfileViolations } from "../../components/shared/pod-security";
import { describeObject, identityOf, k8sTypeOf } from "../shared/k8s";
import { resourcePolicy, stringList } from "../shared/policy";
import { asObject, known, Obj, UNKNOWN } from "../shared/values";

interface PodSecurityConfig {
    exemptNamespaces: string[];
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

export const podSecurityRestricted = resourcePolicy<PodSecurityConfig>(
    {
        name: "k8s-pod-security-restricted",
        description: "Pods and pod templates meet the Pod Security Standards' restricted profile.",
        severity: "high",
        remediationSteps:
            "In the pod template set securityContext.runAsNonRoot: true and seccompProfile.type: RuntimeDefault; in every container set securityContext.allowPrivilegeEscalation: false and capabilities.drop: [ALL]; use only configMap, csi, downwardAPI, emptyDir, ephemeral, persistentVolumeClaim, projected and secret volumes; no host namespaces, host ports or privileged containers. See https://kubernetes.io/docs/concepts/security/pod-security-standards/#restricted.",
        config: {
            exemptNamespaces: stringList("Namespaces whose workloads are not judged (as Pod Security admission's exemptions)."),
        },
    },
    (args, config, report) => {
        const type = k8sTypeOf(args.type);
        // Patches change workloads this stack does not own; they are not judged.
        if (!type || type.patch || WORKLOAD_GROUPS[type.kind] !== type.group) {
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
        const violations = restrictedProfileViolations(pod.spec, annotations === UNKNOWN ? {} : annotations ?? {});
        if (violations.length > 0) {
            report(
                [
                    `${describeObject(type.kind, identity)} (${pod.path}) does not meet the restricted profile:`,
                    ...violations.map((v) => `  - [${v.check}] ${v.message}`),
                ].join("\n"),
            );
        }
    },
);
