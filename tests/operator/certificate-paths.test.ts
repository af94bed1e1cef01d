/**
 * Every certificate file an operator reads exists in its rendered pod, for every real CSV and
 * every certificate mode. A path counts when a container names it in `command`, `args` or an env
 * value under one of OLM's certificate directories (cert-manager's webhook names
 * `/apiserver.local.config/certificates/apiserver.crt`), and for the defaults servers use when
 * they name none: a Kubernetes generic API server (an APIService backend) reads
 * `apiserver.crt`/`apiserver.key` from `apiserver.local.config/certificates`
 * (kubernetes `staging/src/k8s.io/apiserver/pkg/server/options/serving.go`), a controller-runtime
 * webhook server `tls.crt`/`tls.key` from `/tmp/k8s-webhook-server/serving-certs`
 * (kubernetes-sigs/controller-runtime `pkg/webhook/server.go`). Each path must resolve to a mount,
 * a Secret volume item, and a key the Secret holds in that mode.
 */
import type { RenderResult } from "../../scripts/render/render";
import {
    CSV_DIR,
    CSV_FILES,
    KubeObject,
    objectNamed,
    objectsOf,
    OPERATOR_CONDITION_CRD,
    readCsv,
    renderOperators,
    Yaml,
} from "../helpers/operators";
import { renderConfig } from "../helpers/render";

const APISERVICE_DIR = "/apiserver.local.config/certificates";
const WEBHOOK_DIR = "/tmp/k8s-webhook-server/serving-certs";
const NAMED_PATH = /(?:\/apiserver\.local\.config\/certificates|\/tmp\/k8s-webhook-server\/serving-certs)\/[A-Za-z0-9._-]+/g;

/**
 * The keys the Secret holds in each mode. Self-signed: the stack's own Secret, whose data the
 * render shows only as a secret, but whose type `kubernetes.io/tls` the API server admits only
 * with `tls.crt` and `tls.key` (kubernetes `pkg/apis/core/validation/validation.go`,
 * `ValidateSecret`). service-ca writes `tls.crt`/`tls.key` (openshift/service-ca-operator
 * `pkg/controller/servingcert/controller/secret_creating_controller.go`); cert-manager
 * `tls.crt`/`tls.key`/`ca.crt` (cert-manager `pkg/apis/meta/v1/types.go`).
 */
const MODE_KEYS: Record<string, string[]> = {
    "self-signed": ["tls.crt", "tls.key"],
    "service-ca": ["tls.crt", "tls.key"],
    "cert-manager": ["ca.crt", "tls.crt", "tls.key"],
};

/** What an OpenShift cluster holds for the pre-flight reads of operator installs (no proxy configured). */
const OPENSHIFT_OBJECTS = [
    { apiVersion: "config.openshift.io/v1", kind: "Proxy", metadata: { name: "cluster" }, spec: {}, status: {} },
    OPERATOR_CONDITION_CRD,
    // The PriorityClass kubevirt-hyperconverged's Deployments name, which its own hco-operator
    // creates once it runs (the bundle does not ship it): present on a cluster running HCO.
    { apiVersion: "scheduling.k8s.io/v1", kind: "PriorityClass", metadata: { name: "kubevirt-cluster-critical" }, value: 1000000000 },
] as unknown as KubeObject[];

const MODES = [
    { mode: "self-signed", config: { cluster: { name: "test", platform: "kubernetes", kubeContext: "test" } } },
    {
        mode: "service-ca",
        config: { cluster: { name: "test", platform: "openshift", kubeContext: "test" }, certificates: { mode: "service-ca" } },
        cluster: OPENSHIFT_OBJECTS,
    },
    {
        mode: "cert-manager",
        config: {
            cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
            certificates: { mode: "cert-manager", issuer: { kind: "ClusterIssuer", name: "platform-ca" } },
        },
    },
];

function allNamespaces(csv: Yaml): boolean {
    return (csv.spec.installModes ?? []).some((m: Yaml) => m.type === "AllNamespaces" && m.supported);
}

/** The paths a container names itself. */
function namedPaths(container: Yaml): string[] {
    const texts = [...(container.command ?? []), ...(container.args ?? []), ...(container.env ?? []).map((e: Yaml) => e.value ?? "")];
    return texts.flatMap((text: string) => text.match(NAMED_PATH) ?? []);
}

/** Where `path` comes from in `pod`, or why it does not exist. */
function resolve(pod: Yaml, container: Yaml, path: string): { secretName: string; key: string } | string {
    const mount = (container.volumeMounts ?? []).find((m: Yaml) => path.startsWith(`${m.mountPath}/`));
    if (!mount) {
        return `container ${container.name}: no volume is mounted above ${path}`;
    }
    const volume = (pod.volumes ?? []).find((v: Yaml) => v.name === mount.name);
    if (!volume?.secret) {
        return `container ${container.name}: mount ${mount.name} at ${mount.mountPath} is not a Secret volume`;
    }
    const file = path.slice(mount.mountPath.length + 1);
    const items: Yaml[] | undefined = volume.secret.items;
    const key = items === undefined ? file : items.find((item) => item.path === file)?.key;
    if (key === undefined) {
        return `container ${container.name}: volume ${volume.name} has no item at ${file} (items ${JSON.stringify(items)})`;
    }
    return { secretName: volume.secret.secretName, key };
}

/** The keys Secret `name` holds in the rendered stack, and proof that the mode makes that Secret. */
function secretKeys(result: RenderResult, mode: string, name: string): string[] {
    if (mode === "self-signed") {
        expect(objectNamed(result, "Secret", name, "ops").type).toBe("kubernetes.io/tls");
    } else if (mode === "service-ca") {
        const services = objectsOf(result, "Service").filter(
            (s) => s.metadata.annotations?.["service.beta.openshift.io/serving-cert-secret-name"] === name,
        );
        expect(services).toHaveLength(1);
    } else {
        expect(
            objectsOf(result, "Certificate").filter((c: KubeObject) => c.spec.secretName === name && c.metadata.namespace === "ops"),
        ).toHaveLength(1);
    }
    return MODE_KEYS[mode];
}

describe("certificate files where operators read them", () => {
    const cases = CSV_FILES.flatMap((file) => MODES.map(({ mode, config, cluster }) => [file, mode, config, cluster] as const));

    test.each(cases)(
        "GIVEN %s in %s mode WHEN rendered THEN every certificate path a container names, and every default path of what it serves, is a key of its serving Secret",
        async (file, mode, config, cluster) => {
            const csv = readCsv(file);
            const operators = [
                { name: "op", csv: `${CSV_DIR}/${file}`, namespace: "ops", targetNamespaces: allNamespaces(csv) ? [] : ["ops"] },
            ];
            const result = await renderConfig({ ...config, operators }, cluster ? { cluster } : {});
            expect(result.errors).toEqual([]);
            expect(result.ok).toBe(true);

            const servesApi = new Set((csv.spec.apiservicedefinitions?.owned ?? []).map((a: Yaml) => a.deploymentName));
            const servesWebhooks = new Set((csv.spec.webhookdefinitions ?? []).map((w: Yaml) => w.deploymentName));
            const failures: string[] = [];
            let checked = 0;
            for (const deployment of csv.spec.install.spec.deployments as Yaml[]) {
                const pod = objectNamed(result, "Deployment", deployment.name, "ops").spec.template.spec;
                for (const container of pod.containers) {
                    const defaults = [
                        ...(servesApi.has(deployment.name) ? [`${APISERVICE_DIR}/apiserver.crt`, `${APISERVICE_DIR}/apiserver.key`] : []),
                        ...(servesWebhooks.has(deployment.name) ? [`${WEBHOOK_DIR}/tls.crt`, `${WEBHOOK_DIR}/tls.key`] : []),
                    ];
                    for (const path of new Set([...namedPaths(container), ...defaults])) {
                        checked++;
                        const found = resolve(pod, container, path);
                        if (typeof found === "string") {
                            failures.push(`${deployment.name}: ${found}`);
                        } else if (found.secretName !== `${deployment.name}-service-cert`) {
                            failures.push(
                                `${deployment.name}: ${path} comes from Secret ${found.secretName}, not the serving Secret ${deployment.name}-service-cert`,
                            );
                        } else if (!secretKeys(result, mode, found.secretName).includes(found.key)) {
                            failures.push(
                                `${deployment.name}: ${path} is key ${found.key}, which Secret ${found.secretName} does not hold in ${mode} mode`,
                            );
                        }
                    }
                }
            }
            expect(failures).toEqual([]);
            expect(checked > 0).toBe(servesApi.size + servesWebhooks.size > 0);
        },
    );

    test("GIVEN cert-manager 1.16.1 WHEN rendered THEN its webhook's --tls-cert-file and --tls-private-key-file are OLM's apiserver.crt and apiserver.key of the serving Secret", async () => {
        const result = await renderOperators([
            { name: "op", csv: `${CSV_DIR}/cert-manager-1.16.1.clusterserviceversion.yaml`, namespace: "ops", targetNamespaces: [] },
        ]);
        const pod = objectNamed(result, "Deployment", "cert-manager-webhook", "ops").spec.template.spec;
        const [container] = pod.containers;
        expect(namedPaths(container)).toEqual([`${APISERVICE_DIR}/apiserver.crt`, `${APISERVICE_DIR}/apiserver.key`]);
        expect(namedPaths(container).map((path) => resolve(pod, container, path))).toEqual([
            { secretName: "cert-manager-webhook-service-cert", key: "tls.crt" },
            { secretName: "cert-manager-webhook-service-cert", key: "tls.key" },
        ]);
    });
});
