import type * as pulumi from "@pulumi/pulumi";
import fc from "fast-check";
import type { CaBundleInjection } from "../../components/certificates/contract";
import { injectCaBundle } from "../../components/certificates/declared";
import { ServiceCaIssuer } from "../../components/certificates/delegated";
import { bundleFieldPaths, LiveObject, planExistingInjection, withBundleFields } from "../../components/certificates/injection";
import { CaInjectionEntry } from "../../components/certificates/rules";

const BUNDLE = { pem: "PEM", base64: "B64" };
const webhookConfig = (kind: string, annotations: Record<string, string> = {}): LiveObject => ({
    metadata: { name: "policy", annotations },
    webhooks: [
        { name: "a.policy.example.io", clientConfig: { service: { name: "svc", namespace: "policy" } }, sideEffects: "None" },
        { name: "b.policy.example.io", clientConfig: { url: "https://policy.example.io/b" }, sideEffects: "None" },
    ],
    kind,
});

describe("where each kind keeps its CA bundle", () => {
    test("GIVEN each kind WHEN the bundle is set THEN exactly its field is written and the rest kept", () => {
        expect(withBundleFields("APIService", { spec: { group: "g", service: { name: "s" } } }, BUNDLE)).toEqual({
            spec: { group: "g", service: { name: "s" }, caBundle: "B64" },
        });
        expect(withBundleFields("ConfigMap", { data: { other: "kept" } }, BUNDLE)).toEqual({
            data: { other: "kept", "service-ca.crt": "PEM" },
        });
        expect(
            withBundleFields(
                "CustomResourceDefinition",
                { spec: { conversion: { strategy: "Webhook", webhook: { clientConfig: { service: { name: "s" } } } } } },
                BUNDLE,
            ),
        ).toEqual({
            spec: { conversion: { strategy: "Webhook", webhook: { clientConfig: { service: { name: "s" }, caBundle: "B64" } } } },
        });
        expect(withBundleFields("ValidatingWebhookConfiguration", webhookConfig("x"), BUNDLE).webhooks).toEqual([
            {
                name: "a.policy.example.io",
                clientConfig: { service: { name: "svc", namespace: "policy" }, caBundle: "B64" },
                sideEffects: "None",
            },
            { name: "b.policy.example.io", clientConfig: { url: "https://policy.example.io/b", caBundle: "B64" }, sideEffects: "None" },
        ]);
    });

    test("GIVEN a CRD whose conversion strategy is not Webhook WHEN the bundle is set THEN nothing is written", () => {
        const crd = { spec: { conversion: { strategy: "None" } } };
        expect(withBundleFields("CustomResourceDefinition", crd, BUNDLE)).toBe(crd);
        expect(withBundleFields("CustomResourceDefinition", { spec: {} }, BUNDLE)).toEqual({ spec: {} });
    });

    test("GIVEN each kind WHEN its bundle paths are listed for ignoreChanges THEN they name exactly the bundle fields, webhooks by wildcard", () => {
        expect(bundleFieldPaths("APIService")).toEqual(["spec.caBundle"]);
        expect(bundleFieldPaths("ConfigMap")).toEqual(['data["service-ca.crt"]']);
        expect(bundleFieldPaths("CustomResourceDefinition")).toEqual(["spec.conversion.webhook.clientConfig.caBundle"]);
        expect(bundleFieldPaths("MutatingWebhookConfiguration")).toEqual(["webhooks[*].clientConfig.caBundle"]);
        expect(bundleFieldPaths("ValidatingWebhookConfiguration")).toEqual(["webhooks[*].clientConfig.caBundle"]);
    });
});

describe("injection into an existing object (caInjection)", () => {
    const webhookEntry: CaInjectionEntry = { kind: "ValidatingWebhookConfiguration", name: "policy" };
    const configMapEntry: CaInjectionEntry = { kind: "ConfigMap", name: "trusted", namespace: "openshift-config" };
    const crdEntry: CaInjectionEntry = { kind: "CustomResourceDefinition", name: "rules.example.io" };
    const apiEntry: CaInjectionEntry = { kind: "APIService", name: "v1.metrics.example.io" };
    const selfSigned = { mode: "self-signed" as const, platform: "openshift" as const, bundle: BUNDLE };
    const serviceCa = { mode: "service-ca" as const, platform: "openshift" as const };
    /** A named CA: right for any backend, so the plan writes it. */
    const named = { caSource: { configMap: { name: "policy/policy-ca", key: "ca.crt" } } };
    const certManager = { mode: "cert-manager" as const, platform: "kubernetes" as const };

    test("GIVEN self-signed mode WHEN a webhook configuration is planned THEN the patch names every webhook and sets only its caBundle", () => {
        expect(planExistingInjection({ ...webhookEntry, ...named }, webhookConfig("ValidatingWebhookConfiguration"), selfSigned)).toEqual({
            writes: true,
            patch: {
                apiVersion: "admissionregistration.k8s.io/v1",
                kind: "ValidatingWebhookConfiguration",
                metadata: { name: "policy" },
                webhooks: [
                    { name: "a.policy.example.io", clientConfig: { caBundle: "B64" } },
                    { name: "b.policy.example.io", clientConfig: { caBundle: "B64" } },
                ],
            },
        });
    });

    test("GIVEN self-signed mode WHEN a ConfigMap with other keys is planned THEN only service-ca.crt is set", () => {
        const live = { metadata: { name: "trusted" }, data: { "corporate.crt": "X", "service-ca.crt": "OLD" } };
        expect(planExistingInjection(configMapEntry, live, selfSigned)).toEqual({
            writes: true,
            patch: {
                apiVersion: "v1",
                kind: "ConfigMap",
                metadata: { name: "trusted", namespace: "openshift-config" },
                data: { "service-ca.crt": "PEM" },
            },
        });
    });

    test("GIVEN service-ca mode WHEN objects are planned THEN only the beta annotation is set, and a ConfigMap with other keys gets the copied bundle instead", () => {
        expect(planExistingInjection(webhookEntry, webhookConfig("ValidatingWebhookConfiguration"), serviceCa)).toEqual({
            writes: true,
            patch: {
                apiVersion: "admissionregistration.k8s.io/v1",
                kind: "ValidatingWebhookConfiguration",
                metadata: { name: "policy", annotations: { "service.beta.openshift.io/inject-cabundle": "true" } },
            },
        });
        expect(planExistingInjection(configMapEntry, { metadata: { name: "trusted" } }, serviceCa).patch.metadata).toEqual({
            name: "trusted",
            namespace: "openshift-config",
            annotations: { "service.beta.openshift.io/inject-cabundle": "true" },
        });
        expect(() =>
            planExistingInjection(configMapEntry, { metadata: { name: "trusted" }, data: { "corporate.crt": "X" } }, serviceCa),
        ).toThrow(
            'caInjection: ConfigMap "openshift-config/trusted" holds other keys (corporate.crt), which service-ca\'s injection would delete (it replaces the whole data), and a copy made by the stack would go stale when service-ca rotates its CA; give the bundle a ConfigMap of its own, or point its consumers at openshift-config/openshift-service-ca.crt, which OpenShift keeps current',
        );
    });

    test("GIVEN self-signed mode and an object whose backends are not the stack's WHEN planned without a caSource THEN it is refused, naming every backend", () => {
        expect(() => planExistingInjection(webhookEntry, webhookConfig("ValidatingWebhookConfiguration"), selfSigned)).toThrow(
            'caInjection: ValidatingWebhookConfiguration "policy": webhook "a.policy.example.io" is served by Service policy/svc, webhook "b.policy.example.io" is served by URL https://policy.example.io/b, and caInjection[].caSource does not say where its CA comes from',
        );
    });

    test("GIVEN caSource.issue WHEN one webhook calls a URL THEN it is refused, naming that webhook's URL; WHEN all call the Service THEN the bundle is written", () => {
        const issued = { ...webhookEntry, caSource: { issue: { service: "policy/svc", secretName: "svc-tls" } } };
        expect(() => planExistingInjection(issued, webhookConfig("ValidatingWebhookConfiguration"), selfSigned)).toThrow(
            'caInjection: ValidatingWebhookConfiguration "policy": webhook "b.policy.example.io" is served by URL https://policy.example.io/b, not by caSource.issue.service "policy/svc"',
        );
        const served = {
            metadata: { name: "policy" },
            webhooks: [{ name: "a.policy.example.io", clientConfig: { service: { name: "svc", namespace: "policy" } } }],
        };
        expect(planExistingInjection(issued, served, selfSigned).writes).toBe(true);
    });

    test("GIVEN cert-manager mode WHEN an object is planned THEN only inject-ca-from is set, naming the entry's Certificate", () => {
        expect(
            planExistingInjection(
                { ...apiEntry, certificate: "monitoring/metrics-cert" },
                { metadata: {}, spec: { service: { name: "m" } } },
                certManager,
            ),
        ).toEqual({
            writes: true,
            patch: {
                apiVersion: "apiregistration.k8s.io/v1",
                kind: "APIService",
                metadata: { name: "v1.metrics.example.io", annotations: { "cert-manager.io/inject-ca-from": "monitoring/metrics-cert" } },
            },
        });
    });

    test.each([
        [
            "a CRD without webhook conversion",
            crdEntry,
            { metadata: {}, spec: { conversion: { strategy: "None" } } },
            'caInjection: CustomResourceDefinition "rules.example.io" has spec.conversion.strategy "None", not "Webhook": it calls no conversion webhook, so there is no caBundle to set; nothing written',
        ],
        [
            "a CRD with no conversion at all",
            crdEntry,
            { metadata: {}, spec: {} },
            'caInjection: CustomResourceDefinition "rules.example.io" has spec.conversion.strategy "None", not "Webhook": it calls no conversion webhook, so there is no caBundle to set; nothing written',
        ],
        [
            "a local APIService",
            apiEntry,
            { metadata: {}, spec: { group: "metrics.example.io" } },
            'caInjection: APIService "v1.metrics.example.io" is served locally by the API server (no spec.service): there is no caBundle to set; nothing written',
        ],
        [
            "an APIService that skips TLS verification",
            apiEntry,
            { metadata: {}, spec: { service: { name: "m" }, insecureSkipTLSVerify: true } },
            'caInjection: APIService "v1.metrics.example.io" sets spec.insecureSkipTLSVerify, which the API server refuses together with a caBundle; unset it to have the bundle injected; nothing written',
        ],
        [
            "a webhook configuration without webhooks",
            webhookEntry,
            { metadata: {} },
            'caInjection: ValidatingWebhookConfiguration "policy" has no webhooks: there is no caBundle to set; nothing written',
        ],
        [
            "an object service-ca injects into (beta, any casing)",
            webhookEntry,
            webhookConfig("ValidatingWebhookConfiguration", { "service.beta.openshift.io/inject-cabundle": "True" }),
            'caInjection: ValidatingWebhookConfiguration "policy": it carries service.beta.openshift.io/inject-cabundle="True", so OpenShift\'s service-ca writes its bundle; writing the self-signed bundle too would make the two overwrite each other, so nothing is written (remove the annotation, or the entry)',
        ],
        [
            "a ConfigMap service-ca injects into (alpha)",
            configMapEntry,
            { metadata: { annotations: { "service.alpha.openshift.io/inject-cabundle": "true" } } },
            'caInjection: ConfigMap "openshift-config/trusted": it carries service.alpha.openshift.io/inject-cabundle="true", so OpenShift\'s service-ca writes its bundle; writing the self-signed bundle too would make the two overwrite each other, so nothing is written (remove the annotation, or the entry)',
        ],
        [
            "an object cainjector injects into",
            crdEntry,
            {
                metadata: { annotations: { "cert-manager.io/inject-ca-from-secret": "cert-manager/ca" } },
                spec: { conversion: { strategy: "Webhook" } },
            },
            'caInjection: CustomResourceDefinition "rules.example.io": it carries cert-manager.io/inject-ca-from-secret="cert-manager/ca", so cert-manager\'s cainjector writes its bundle; writing the self-signed bundle too would make the two overwrite each other, so nothing is written (remove the annotation, or the entry)',
        ],
    ])(
        "GIVEN %s in self-signed mode WHEN planned THEN the patch owns no field and a warning names the object",
        (_case, entry, live, warning) => {
            const plan = planExistingInjection(entry, live as LiveObject, selfSigned);
            expect(plan).toEqual({
                writes: false,
                warning,
                patch: expect.objectContaining({
                    metadata: entry.namespace ? { name: entry.name, namespace: entry.namespace } : { name: entry.name },
                }),
            });
            expect(Object.keys(plan.patch).sort()).toEqual(["apiVersion", "kind", "metadata"]);
        },
    );

    test("GIVEN an alpha request on a CRD (not honoured) on OpenShift WHEN planned in self-signed mode THEN the bundle is written", () => {
        const live = {
            metadata: { annotations: { "service.alpha.openshift.io/inject-cabundle": "true" } },
            spec: { conversion: { strategy: "Webhook" } },
        };
        expect(planExistingInjection({ ...crdEntry, ...named }, live, selfSigned).patch.spec).toEqual({
            conversion: { webhook: { clientConfig: { caBundle: "B64" } } },
        });
    });

    test("GIVEN a service-ca request on plain Kubernetes WHEN planned in self-signed mode THEN the bundle is written (no service-ca there)", () => {
        const live = webhookConfig("ValidatingWebhookConfiguration", { "service.beta.openshift.io/inject-cabundle": "true" });
        expect(planExistingInjection({ ...webhookEntry, ...named }, live, { ...selfSigned, platform: "kubernetes" }).writes).toBe(true);
    });
});

describe("injection into an object the stack declares", () => {
    const owned = { annotations: {}, caBundle: "B64", caBundlePem: "PEM", ignoreChanges: () => [] } as unknown as CaBundleInjection;
    const delegated = (annotations: Record<string, string>): CaBundleInjection => ({
        annotations,
        caBundle: undefined,
        caBundlePem: undefined,
        ignoreChanges: (kind) => bundleFieldPaths(kind),
    });

    test("GIVEN self-signed mode WHEN a requested object is injected THEN the bundle is written and the request annotation dropped", () => {
        expect(
            injectCaBundle(
                "APIService",
                {
                    metadata: { name: "v1.x.io", annotations: { "service.beta.openshift.io/inject-cabundle": "true", keep: "me" } },
                    spec: { service: {} },
                },
                owned,
            ),
        ).toEqual({
            object: { metadata: { name: "v1.x.io", annotations: { keep: "me" } }, spec: { service: {}, caBundle: "B64" } },
            ignoreChanges: [],
        });
    });

    test("GIVEN service-ca mode WHEN a webhook configuration is injected THEN it carries the beta annotation, no caBundle, and ignores the injected paths", () => {
        const result = injectCaBundle(
            "MutatingWebhookConfiguration",
            { metadata: { name: "m" }, webhooks: [{ name: "a.x.io" }, { name: "b.x.io" }] },
            delegated({ "service.beta.openshift.io/inject-cabundle": "true" }),
        );
        expect(result).toEqual({
            object: {
                metadata: { name: "m", annotations: { "service.beta.openshift.io/inject-cabundle": "true" } },
                webhooks: [{ name: "a.x.io" }, { name: "b.x.io" }],
            },
            ignoreChanges: ["webhooks[*].clientConfig.caBundle"],
        });
    });

    test("GIVEN service-ca mode with service-ca's current bundle read WHEN each kind is injected THEN webhook configurations carry it in every caBundle (base64 of the PEM) with the annotation and ignore nothing, while CRDs and APIServices keep the annotation only", () => {
        const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
        const injection = new ServiceCaIssuer(pem).caBundleFor({} as never);
        const annotated = { "service.beta.openshift.io/inject-cabundle": "true" };
        expect(
            injectCaBundle(
                "ValidatingWebhookConfiguration",
                {
                    metadata: { name: "v" },
                    webhooks: [
                        { name: "a.x.io", clientConfig: { service: { name: "s" } } },
                        { name: "b.x.io", clientConfig: { url: "https://b" } },
                    ],
                },
                injection,
            ),
        ).toEqual({
            object: {
                metadata: { name: "v", annotations: annotated },
                webhooks: [
                    {
                        name: "a.x.io",
                        clientConfig: {
                            service: { name: "s" },
                            caBundle: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
                        },
                    },
                    {
                        name: "b.x.io",
                        clientConfig: {
                            url: "https://b",
                            caBundle: "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUIKLS0tLS1FTkQgQ0VSVElGSUNBVEUtLS0tLQo=",
                        },
                    },
                ],
            },
            ignoreChanges: [],
        });
        expect(injectCaBundle("APIService", { metadata: { name: "v1.x.io" }, spec: { service: {} } }, injection)).toEqual({
            object: { metadata: { name: "v1.x.io", annotations: annotated }, spec: { service: {} } },
            ignoreChanges: ["spec.caBundle"],
        });
        expect(new ServiceCaIssuer(undefined).caBundleFor({} as never).ignoreChanges("MutatingWebhookConfiguration")).toEqual([
            "webhooks[*].clientConfig.caBundle",
        ]);
    });

    test("GIVEN any webhook list WHEN reordered or extended THEN the ignored paths stay the same (by name, never by index)", () => {
        const injection = delegated({ "service.beta.openshift.io/inject-cabundle": "true" });
        const names = fc.uniqueArray(fc.stringMatching(/^[a-z]{1,8}\.x\.io$/), { minLength: 1, maxLength: 6 });
        fc.assert(
            fc.property(names, fc.nat(), (list, seed) => {
                const webhooks = list.map((name) => ({ name }));
                const rotated = [...webhooks.slice(seed % webhooks.length), ...webhooks.slice(0, seed % webhooks.length)];
                const before = injectCaBundle(
                    "ValidatingWebhookConfiguration",
                    { metadata: { name: "v" }, webhooks },
                    injection,
                ).ignoreChanges;
                const after = injectCaBundle(
                    "ValidatingWebhookConfiguration",
                    { metadata: { name: "v" }, webhooks: [...rotated, { name: "added.x.io" }] },
                    injection,
                ).ignoreChanges;
                expect(after).toEqual(before);
                expect(before).toEqual(["webhooks[*].clientConfig.caBundle"]);
            }),
        );
    });

    test("GIVEN cert-manager mode WHEN a ConfigMap asks for the bundle THEN it is refused, naming the ConfigMap", () => {
        expect(() =>
            injectCaBundle(
                "ConfigMap",
                { metadata: { name: "ca", namespace: "a" } },
                delegated({ "cert-manager.io/inject-ca-from": "a/cert" }),
            ),
        ).toThrow('ConfigMap "a/ca": cert-manager\'s cainjector does not inject ConfigMaps; declare it in self-signed or service-ca mode');
    });

    test("GIVEN service-ca mode WHEN a ConfigMap with other keys asks for the bundle THEN it is refused, naming the keys service-ca would delete", () => {
        expect(() =>
            injectCaBundle(
                "ConfigMap",
                { metadata: { name: "ca", namespace: "a" }, data: { "extra.pem": "x" } },
                delegated({ "service.beta.openshift.io/inject-cabundle": "true" }),
            ),
        ).toThrow(
            'ConfigMap "a/ca": asks for the service CA bundle but also holds extra.pem, which service-ca would delete (it replaces the whole data); keep the bundle in a ConfigMap of its own',
        );
    });

    test("GIVEN a CRD without webhook conversion WHEN injected THEN it is unchanged and a warning names it", () => {
        const crd = { metadata: { name: "rules.x.io" }, spec: { conversion: { strategy: "None" } } };
        expect(injectCaBundle("CustomResourceDefinition", crd, owned as CaBundleInjection & { caBundle: pulumi.Output<string> })).toEqual({
            object: crd,
            ignoreChanges: [],
            warning:
                'CustomResourceDefinition "rules.x.io": spec.conversion.strategy is "None", not "Webhook": there is no conversion webhook to trust; no CA bundle injected',
        });
    });
});
