/**
 * What OLM gives an operator at runtime besides its Deployment, decided purely: the
 * OperatorCondition OLM generates for every CSV (operator-framework/operator-lifecycle-manager
 * `pkg/controller/operators/operatorconditiongenerator_controller.go`), which operator-lib finds
 * through OPERATOR_CONDITION_NAME, and on OpenShift the cluster-wide proxy (`config.openshift.io/v1`
 * Proxy `cluster`, read by `pkg/lib/proxy/syncer.go`). The pre-flight reads the proxy and the
 * component the OperatorCondition CRD; this module says what to read and what to declare.
 */
import type { ClusterTarget } from "../shared/cluster";
import type { ObjectReader } from "../shared/object-presence";
import { OPERATOR_LABEL, platformLabels } from "../shared/labels";
import type { ClusterServiceVersion } from "./csv";
import { type EnvVar, proxyEnvOf, type ProxyStatus } from "./deployments";

export const OPERATOR_CONDITION_API_VERSION = "operators.coreos.com/v2";
/** The CRD whose pre-flight read proves the cluster serves OperatorConditions. */
export const OPERATOR_CONDITION_CRD = "operatorconditions.operators.coreos.com";
/** OpenShift's cluster-wide proxy configuration. */
export const PROXY_API_VERSION = "config.openshift.io/v1";
export const PROXY_NAME = "cluster";
/** Its resource, as its CRD names it (openshift/api `config/v1` `proxies.config.openshift.io`, which the real tier installs). */
export const PROXY_PLURAL = "proxies";

/**
 * OLM's proxy variables on this cluster, from Proxy `cluster` read whole by the pre-flight like
 * every other live object it checks (never a Pulumi read, so no read lands in the state, and a
 * Proxy without `status` leaves nothing unknown to a preview); none when there is no such Proxy or
 * nothing can be asked (an offline render without `--cluster`).
 */
export async function clusterProxyEnv(read: ObjectReader): Promise<EnvVar[]> {
    const [proxy] = await read([{ apiVersion: PROXY_API_VERSION, kind: "Proxy", plural: PROXY_PLURAL, name: PROXY_NAME }]);
    return typeof proxy === "object" ? proxyEnvOf(proxy.status as ProxyStatus | undefined) : [];
}

export interface OperatorConditionObject {
    apiVersion: typeof OPERATOR_CONDITION_API_VERSION;
    kind: "OperatorCondition";
    metadata: { name: string; namespace: string; labels: Record<string, string> };
    spec: { serviceAccounts: string[]; deployments: string[] };
}

/**
 * The OperatorCondition OLM generates for a CSV: named after the CSV, in its namespace, listing the
 * ServiceAccounts of clusterPermissions then permissions (`default` when there are none; OLM does
 * not remove repeats) and the deployments. OLM's OperatorCondition controller then grants those
 * ServiceAccounts get/update/patch on it (`operatorcondition_controller.go`).
 */
export function operatorConditionFor(csv: ClusterServiceVersion, namespace: string, operator: string): OperatorConditionObject {
    const strategy = csv.spec.install.spec;
    const serviceAccounts = [...(strategy.clusterPermissions ?? []), ...(strategy.permissions ?? [])]
        .map((p) => p.serviceAccountName)
        .filter((name) => name !== "");
    return {
        apiVersion: OPERATOR_CONDITION_API_VERSION,
        kind: "OperatorCondition",
        metadata: { name: csv.metadata.name, namespace, labels: platformLabels("operator", { [OPERATOR_LABEL]: operator }) },
        spec: {
            serviceAccounts: serviceAccounts.length > 0 ? serviceAccounts : ["default"],
            deployments: strategy.deployments.map((d) => d.name).filter((name) => name !== ""),
        },
    };
}

/** What the operator capability reads and declares for OLM's environment on this cluster. */
export interface OlmEnvironmentDecision {
    /** Read Proxy `cluster` in the pre-flight and inject its variables (OpenShift with a live API server). */
    readProxy: boolean;
    /** Read the OperatorCondition CRD and declare one OperatorCondition per install. */
    declareOperatorConditions: boolean;
    /** Preview notes for what is not done, and why. */
    warnings: string[];
}

/**
 * On OpenShift OLM is part of the platform: it serves OperatorCondition v2 and the Proxy API, so
 * both are read before anything is declared (a missing one fails the preview, naming it). A plain
 * Kubernetes cluster may run no OLM at all, and a read of a missing object fails a preview, so
 * there the stack declares no OperatorCondition and says so; its proxy is not a cluster object.
 */
export function olmEnvironmentDecision(
    cluster: ClusterTarget,
    installs: number,
    skipped: (what: string) => string,
): OlmEnvironmentDecision {
    if (installs === 0) {
        return { readProxy: false, declareOperatorConditions: false, warnings: [] };
    }
    if (cluster.platform === "openshift" && cluster.live) {
        return { readProxy: true, declareOperatorConditions: true, warnings: [] };
    }
    if (cluster.platform === "openshift") {
        return {
            readProxy: false,
            declareOperatorConditions: false,
            warnings: [
                `operators: ${skipped(`the reads of Proxy ${PROXY_NAME} and CRD ${OPERATOR_CONDITION_CRD}`)}; the rendered Deployments carry no proxy variables and no OperatorCondition is rendered`,
            ],
        };
    }
    return {
        readProxy: false,
        declareOperatorConditions: false,
        warnings: [
            `operators: no OperatorCondition (${OPERATOR_CONDITION_API_VERSION}) is declared on a kubernetes cluster, where OLM, which serves that API, may not run; operators still get OPERATOR_CONDITION_NAME, and operator-lib's condition calls fail until an OperatorCondition of that name exists`,
        ],
    };
}
