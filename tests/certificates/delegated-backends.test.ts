/**
 * The delegated modes refuse a caInjection target whose backend is not served by a certificate
 * from the mode's injector. The cluster is a fake reader here: no service-ca or cert-manager
 * controller runs on the real tier (its API server has no OpenShift service-ca and no
 * cert-manager), so what they would issue is given as the objects they leave behind (an annotated
 * Service, a Certificate).
 */
import { delegatedBackendProblems } from "../../components/certificates/delegated-backends";
import type { CaInjectionEntry } from "../../components/certificates/rules";
import type { ObjectRead } from "../../components/shared/object-presence";
import type { ObjectRef } from "../../components/shared/object-refs";

type Obj = Record<string, unknown>;

/** A reader over fixed objects, keyed `Kind ns/name` (or `Kind name`), recording what it was asked. */
function fakeCluster(objects: Record<string, Obj | "unknown">) {
    const asked: string[] = [];
    const read = async (refs: readonly ObjectRef[]): Promise<ObjectRead[]> =>
        refs.map((ref) => {
            const key = `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
            asked.push(key);
            return objects[key] ?? "absent";
        });
    return { read, asked };
}

const webhookConfiguration = (webhooks: Obj[]): Obj => ({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: "team-hooks" },
    webhooks,
});
const serviceHook = (name: string, namespace: string, service: string) => ({
    name,
    clientConfig: { service: { namespace, name: service } },
});
const annotatedService = {
    metadata: { name: "hooks", namespace: "team", annotations: { "service.beta.openshift.io/serving-cert-secret-name": "hooks-tls" } },
};
const plainService = { metadata: { name: "legacy", namespace: "team", annotations: {} } };

/** service-ca mode, one entry: the APIService v1.metrics.example.io. */
const checkMetricsApiService = (read: ReturnType<typeof fakeCluster>["read"]) =>
    delegatedBackendProblems("service-ca", "openshift", [{ kind: "APIService", name: "v1.metrics.example.io" }], read);

const VWC: CaInjectionEntry = { kind: "ValidatingWebhookConfiguration", name: "team-hooks" };

describe("delegated modes: each caInjection target's backends are served by the injector's certificate", () => {
    test("GIVEN service-ca mode and a webhook configuration calling an annotated Service, an unannotated one and a URL WHEN checked THEN the unannotated Service and the URL are refused, each naming the webhook", async () => {
        const cluster = fakeCluster({
            "ValidatingWebhookConfiguration team-hooks": webhookConfiguration([
                serviceHook("a.example.io", "team", "hooks"),
                serviceHook("b.example.io", "team", "legacy"),
                { name: "c.example.io", clientConfig: { url: "https://hooks.example.io/validate" } },
            ]),
            "Service team/hooks": annotatedService,
            "Service team/legacy": plainService,
        });
        expect(await delegatedBackendProblems("service-ca", "openshift", [VWC], cluster.read)).toEqual([
            {
                path: "caInjection[0]",
                message:
                    'ValidatingWebhookConfiguration "team-hooks": webhook "b.example.io" is served by Service "team/legacy", which has no service.beta.openshift.io/serving-cert-secret-name annotation: its certificate is not issued by service-ca, so the service CA injected there would not verify it (have service-ca issue the backend\'s certificate, or remove the entry)',
            },
            {
                path: "caInjection[0]",
                message:
                    'ValidatingWebhookConfiguration "team-hooks": webhook "c.example.io" calls URL "https://hooks.example.io/validate"; service-ca certifies Services only, so the CA it injects cannot be the one that backend serves',
            },
        ]);
        // Only the target and the Services are read: never a Secret (the serving certificate's).
        expect(cluster.asked).toEqual(["ValidatingWebhookConfiguration team-hooks", "Service team/hooks", "Service team/legacy"]);
    });

    test("GIVEN service-ca mode and the alpha serving-cert annotation WHEN checked THEN the backend is accepted (service-ca reads both spellings)", async () => {
        const cluster = fakeCluster({
            "APIService v1.metrics.example.io": { spec: { service: { namespace: "team", name: "metrics" } } },
            "Service team/metrics": { metadata: { annotations: { "service.alpha.openshift.io/serving-cert-secret-name": "metrics-tls" } } },
        });
        expect(await checkMetricsApiService(cluster.read)).toEqual([]);
    });

    test("GIVEN service-ca mode and an APIService whose Service does not exist WHEN checked THEN it is refused naming the Service", async () => {
        const cluster = fakeCluster({ "APIService v1.metrics.example.io": { spec: { service: { namespace: "team", name: "metrics" } } } });
        expect(await checkMetricsApiService(cluster.read)).toEqual([
            {
                path: "caInjection[0]",
                message:
                    'APIService "v1.metrics.example.io": spec.service is served by Service "team/metrics", which does not exist, so service-ca issues it no certificate and the service CA injected there would verify nothing',
            },
        ]);
    });

    const CRD: CaInjectionEntry = { kind: "CustomResourceDefinition", name: "widgets.example.io", certificate: "team/widgets-tls" };
    const crd = {
        spec: { conversion: { strategy: "Webhook", webhook: { clientConfig: { service: { namespace: "team", name: "widgets" } } } } },
    };

    test("GIVEN cert-manager mode and a Certificate for the converting Service WHEN checked THEN nothing is refused", async () => {
        const cluster = fakeCluster({
            "CustomResourceDefinition widgets.example.io": crd,
            "Certificate team/widgets-tls": {
                spec: { secretName: "widgets-tls", dnsNames: ["widgets.team.svc", "widgets.team.svc.cluster.local"] },
            },
        });
        expect(await delegatedBackendProblems("cert-manager", "openshift", [CRD], cluster.read)).toEqual([]);
        expect(cluster.asked).toEqual(["CustomResourceDefinition widgets.example.io", "Certificate team/widgets-tls"]);
    });

    test("GIVEN cert-manager mode and a Certificate for another Service WHEN checked THEN it is refused naming the expected DNS name and the Certificate's", async () => {
        const cluster = fakeCluster({
            "CustomResourceDefinition widgets.example.io": crd,
            "Certificate team/widgets-tls": { spec: { secretName: "widgets-tls", dnsNames: ["gadgets.team.svc"] } },
        });
        expect(await delegatedBackendProblems("cert-manager", "openshift", [CRD], cluster.read)).toEqual([
            {
                path: "caInjection[0]",
                message:
                    'CustomResourceDefinition "widgets.example.io": spec.conversion.webhook.clientConfig is served by Service "team/widgets", but Certificate "team/widgets-tls" does not name "widgets.team.svc" in spec.dnsNames ("gadgets.team.svc"), the name the API server verifies: it is not that backend\'s certificate, so the CA cainjector injects from it would be the wrong one',
            },
        ]);
    });

    test("GIVEN cert-manager mode and a Certificate in another namespace than the Service WHEN checked THEN it is refused", async () => {
        const entry = { ...CRD, certificate: "ops/widgets-tls" };
        const cluster = fakeCluster({
            "CustomResourceDefinition widgets.example.io": crd,
            "Certificate ops/widgets-tls": { spec: { dnsNames: ["widgets.team.svc"] } },
        });
        expect(await delegatedBackendProblems("cert-manager", "openshift", [entry], cluster.read)).toEqual([
            {
                path: "caInjection[0]",
                message:
                    'CustomResourceDefinition "widgets.example.io": spec.conversion.webhook.clientConfig is served by Service "team/widgets", but Certificate "ops/widgets-tls" is in namespace "ops": its Secret cannot be mounted by that Service\'s pods, so the CA cainjector injects from it is not that backend\'s',
            },
        ]);
    });

    test("GIVEN cert-manager mode and a missing Certificate WHEN checked THEN it is refused once, at the entry's certificate field", async () => {
        const cluster = fakeCluster({ "CustomResourceDefinition widgets.example.io": crd });
        expect(await delegatedBackendProblems("cert-manager", "openshift", [CRD], cluster.read)).toEqual([
            {
                path: "caInjection[0].certificate",
                message:
                    'CustomResourceDefinition "widgets.example.io": Certificate "team/widgets-tls" does not exist, so cainjector has no CA to inject and no backend can be checked against it',
            },
        ]);
    });

    test("GIVEN self-signed mode, ConfigMap entries, absent targets or an offline reader WHEN checked THEN nothing is refused, and self-signed mode reads nothing", async () => {
        const cluster = fakeCluster({ "ValidatingWebhookConfiguration team-hooks": "unknown" });
        expect(await delegatedBackendProblems("self-signed", "openshift", [VWC], cluster.read)).toEqual([]);
        expect(cluster.asked).toEqual([]);
        const trustBundle: CaInjectionEntry = { kind: "ConfigMap", name: "trusted-ca", namespace: "team" };
        expect(
            await delegatedBackendProblems(
                "service-ca",
                "openshift",
                [trustBundle, VWC, { kind: "APIService", name: "gone" }],
                cluster.read,
            ),
        ).toEqual([]);
        expect(cluster.asked).toEqual(["ValidatingWebhookConfiguration team-hooks", "APIService gone"]);
    });

    test("GIVEN targets the injection writes nothing into (a CRD without webhook conversion, a target cainjector's rival already injects) WHEN checked THEN they are not judged", async () => {
        const cluster = fakeCluster({
            "CustomResourceDefinition notes.example.io": { spec: { conversion: { strategy: "None" } } },
            "ValidatingWebhookConfiguration team-hooks": {
                ...webhookConfiguration([serviceHook("b.example.io", "team", "legacy")]),
                metadata: { name: "team-hooks", annotations: { "service.beta.openshift.io/inject-cabundle": "true" } },
            },
        });
        const entries: CaInjectionEntry[] = [
            { kind: "CustomResourceDefinition", name: "notes.example.io", certificate: "team/notes-tls" },
            { ...VWC, certificate: "team/hooks-tls" },
        ];
        expect(await delegatedBackendProblems("cert-manager", "openshift", entries, cluster.read)).toEqual([]);
        expect(cluster.asked).toEqual(["CustomResourceDefinition notes.example.io", "ValidatingWebhookConfiguration team-hooks"]);
    });

    test("GIVEN two entries calling the same Service in service-ca mode WHEN checked THEN the Service is read once and each entry gets its own problem path", async () => {
        const cluster = fakeCluster({
            "ValidatingWebhookConfiguration team-hooks": webhookConfiguration([serviceHook("b.example.io", "team", "legacy")]),
            "APIService v1.legacy.example.io": { spec: { service: { namespace: "team", name: "legacy" } } },
            "Service team/legacy": plainService,
        });
        const problems = await delegatedBackendProblems(
            "service-ca",
            "openshift",
            [VWC, { kind: "APIService", name: "v1.legacy.example.io" }],
            cluster.read,
        );
        expect(problems.map((p) => p.path)).toEqual(["caInjection[0]", "caInjection[1]"]);
        expect(cluster.asked.filter((k) => k.startsWith("Service "))).toEqual(["Service team/legacy"]);
    });
});
