import fc from "fast-check";
import {
    ADMISSION_POLICY_RULE_MESSAGE,
    coversWebhookConfigurations,
    FORBIDDEN_RULE_MESSAGES,
    forbiddenRuleViolations,
    WebhookContext,
    WebhookDescriptionInput,
    webhookDescriptionProblems,
} from "../../components/admission-webhook/rules";
import { servicePortOf } from "../../components/operator/webhooks";

const context: WebhookContext = {
    operator: "widgets",
    deployments: [
        { name: "widget-webhook", portNames: ["https", "metrics"] },
        { name: "widget-controller", portNames: [] },
    ],
    ownedCrds: ["widgets.example.io"],
    allNamespacesOnly: true,
};

const validating = (overrides: Partial<WebhookDescriptionInput> = {}): WebhookDescriptionInput => ({
    generateName: "vwidget.example.io",
    type: "ValidatingAdmissionWebhook",
    deploymentName: "widget-webhook",
    containerPort: 443,
    targetPort: 9443,
    rules: [{ apiGroups: ["example.io"], resources: ["widgets"] }],
    sideEffects: "None",
    admissionReviewVersions: ["v1"],
    ...overrides,
});

const messages = (webhooks: WebhookDescriptionInput[], ctx: WebhookContext = context) =>
    webhookDescriptionProblems(webhooks, ctx).map((p) => p.message);

describe("OLM's forbidden webhook rules", () => {
    test.each([
        [
            "all groups",
            { apiGroups: ["*"], resources: ["pods"] },
            [{ field: "apiGroups", message: "Webhook rules cannot include all groups" }],
        ],
        [
            "the OLM group",
            { apiGroups: ["operators.coreos.com"], resources: ["clusterserviceversions"] },
            [{ field: "apiGroups", message: "Webhook rules cannot include the OLM group" }],
        ],
        [
            "admissionregistration with *",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["*"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "the plural mutatingwebhookconfigurations OLM misses",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["mutatingwebhookconfigurations"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "the plural validatingwebhookconfigurations",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["validatingwebhookconfigurations"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "the Kind spelling MutatingWebhookConfiguration",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["MutatingWebhookConfiguration"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "the Kind spelling ValidatingWebhookConfiguration",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["ValidatingWebhookConfiguration"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "a subresource of the configurations",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["validatingwebhookconfigurations/status"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "*/* on admissionregistration",
            { apiGroups: ["admissionregistration.k8s.io"], resources: ["*/*"] },
            [{ field: "resources", message: FORBIDDEN_RULE_MESSAGES.webhookConfigurations }],
        ],
        [
            "both all groups and the OLM group",
            { apiGroups: ["*", "operators.coreos.com"], resources: ["*"] },
            [
                { field: "apiGroups", message: "Webhook rules cannot include all groups" },
                { field: "apiGroups", message: "Webhook rules cannot include the OLM group" },
            ],
        ],
    ])("GIVEN a rule on %s WHEN checked THEN OLM's message is reported for the field", (_case, rule, expected) => {
        expect(forbiddenRuleViolations(rule)).toEqual(expected);
    });

    test.each([
        ["validatingadmissionpolicies", ["validatingadmissionpolicies"]],
        ["the Kind ValidatingAdmissionPolicyBinding", ["ValidatingAdmissionPolicyBinding"]],
        ["mutatingadmissionpolicybindings/status", ["mutatingadmissionpolicybindings/status"]],
    ])(
        "GIVEN a rule on admissionregistration's %s WHEN checked THEN the platform's admission-policy lock-out rule is reported",
        (_case, resources) => {
            expect(forbiddenRuleViolations({ apiGroups: ["admissionregistration.k8s.io"], resources })).toEqual([
                { field: "resources", message: ADMISSION_POLICY_RULE_MESSAGE },
            ]);
        },
    );

    test.each([
        [
            "another group's */*, as cert-manager's webhook has",
            { apiGroups: ["cert-manager.io", "acme.cert-manager.io"], resources: ["*/*"] },
        ],
        ["the core group's pods", { apiGroups: [""], resources: ["pods"] }],
        ["a look-alike group", { apiGroups: ["operators.coreos.com.example.io"], resources: ["widgets"] }],
    ])("GIVEN a rule on %s WHEN checked THEN nothing is reported", (_case, rule) => {
        expect(forbiddenRuleViolations(rule)).toEqual([]);
    });

    test("GIVEN any spelling of a webhook configuration resource WHEN matched THEN it is covered, whatever the case or subresource", () => {
        const names = [
            "mutatingwebhookconfiguration",
            "mutatingwebhookconfigurations",
            "validatingwebhookconfiguration",
            "validatingwebhookconfigurations",
        ];
        fc.assert(
            fc.property(
                fc.constantFrom(...names),
                fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
                fc.option(fc.constantFrom("status", "*", "scale")),
                (name, upper, sub) => {
                    const spelled = [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join("");
                    const resource = sub === null ? spelled : `${spelled}/${sub}`;
                    expect(coversWebhookConfigurations(resource)).toBe(true);
                    expect(
                        forbiddenRuleViolations({ apiGroups: ["admissionregistration.k8s.io"], resources: ["pods", resource] }),
                    ).toHaveLength(1);
                },
            ),
        );
    });

    test("GIVEN any rule whose groups include * WHEN checked THEN all groups is reported, whatever else it lists", () => {
        fc.assert(
            fc.property(
                fc.array(fc.stringMatching(/^[a-z.]{0,20}$/)),
                fc.array(fc.stringMatching(/^[a-z*/]{1,20}$/)),
                (groups, resources) => {
                    const violations = forbiddenRuleViolations({ apiGroups: [...groups, "*"], resources });
                    expect(violations).toContainEqual({ field: "apiGroups", message: FORBIDDEN_RULE_MESSAGES.allGroups });
                },
            ),
        );
    });
});

describe("webhook descriptions in a CSV", () => {
    test("GIVEN well-formed validating, mutating and conversion webhooks WHEN checked THEN nothing is reported", () => {
        expect(
            messages([
                validating(),
                validating({
                    generateName: "mwidget.example.io",
                    type: "MutatingAdmissionWebhook",
                    reinvocationPolicy: "IfNeeded",
                    targetPort: "https",
                }),
                {
                    generateName: "cwidgets.example.io",
                    type: "ConversionWebhook",
                    deploymentName: "widget-webhook",
                    containerPort: 443,
                    targetPort: 9443,
                    admissionReviewVersions: ["v1"],
                    conversionCRDs: ["widgets.example.io"],
                },
            ]),
        ).toEqual([]);
    });

    // OLM copies targetPort into the Service as given; the API server defaults 0 and "" to the port
    // (kubernetes pkg/apis/core/v1/defaults.go, SetDefaults_Service), so such a Service is valid.
    test.each<[string, number | string | undefined, number | string]>([
        ["0", 0, 8443],
        ['""', "", 8443],
        ["absent", undefined, 8443],
        ["9443", 9443, 9443],
        ['"https"', "https", "https"],
    ])(
        "GIVEN a targetPort of %s WHEN checked and served THEN nothing is reported and the Service forwards where the API server would",
        (_case, targetPort, expected) => {
            expect(messages([validating({ containerPort: 8443, targetPort })])).toEqual([]);
            expect(servicePortOf({ containerPort: 8443, targetPort })).toEqual({ servicePort: 8443, targetPort: expected });
        },
    );

    test.each([
        [
            "a forbidden rule in the second rule of a webhook",
            [
                validating({
                    rules: [
                        { apiGroups: ["example.io"], resources: ["widgets"] },
                        { apiGroups: ["operators.coreos.com"], resources: ["subscriptions"] },
                    ],
                }),
            ],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].rules[1].apiGroups): Webhook rules cannot include the OLM group',
            ],
        ],
        [
            "a repeated generateName of the same type",
            [validating(), validating({ rules: [] })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[1].generateName): repeated webhook name "vwidget.example.io" (already at spec.webhookdefinitions[0], type "ValidatingAdmissionWebhook"): OLM fails such a CSV ("CSV contains repeated WebhookDescription name"), whatever the types',
            ],
        ],
        [
            "a generateName repeated across types (OLM refuses it too)",
            [validating(), validating({ type: "MutatingAdmissionWebhook" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[1].generateName): repeated webhook name "vwidget.example.io" (already at spec.webhookdefinitions[0], type "ValidatingAdmissionWebhook"): OLM fails such a CSV ("CSV contains repeated WebhookDescription name"), whatever the types',
            ],
        ],
        [
            "a deploymentName that is not in the CSV",
            [validating({ deploymentName: "widget-server" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].deploymentName): references non-existent deployment "widget-server" (the CSV\'s deployments: widget-webhook, widget-controller)',
            ],
        ],
        [
            "no deploymentName",
            [validating({ deploymentName: undefined })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].deploymentName): is required: it names the CSV deployment that serves the webhook',
            ],
        ],
        [
            "a containerPort above 65535",
            [validating({ containerPort: 70000 })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].containerPort): 70000 is out of range: a Service port must be 1-65535',
            ],
        ],
        [
            "a containerPort of 0",
            [validating({ containerPort: 0 })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].containerPort): 0 is out of range: a Service port must be 1-65535',
            ],
        ],
        [
            "a numeric targetPort out of range",
            [validating({ targetPort: 65536 })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].targetPort): 65536 is out of range: a container port must be 1-65535',
            ],
        ],
        [
            "a named targetPort the deployment does not declare",
            [validating({ targetPort: "webhook" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].targetPort): "webhook" is not a port name of deployment "widget-webhook" (its named ports: https, metrics)',
            ],
        ],
        [
            "an invalid port name",
            [validating({ targetPort: "Web_Hook" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].targetPort): "Web_Hook" is not a valid port name: at most 15 lowercase letters, digits or \'-\', with at least one letter',
            ],
        ],
        [
            "a missing sideEffects",
            [validating({ sideEffects: undefined })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].sideEffects): is unset; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
            ],
        ],
        [
            "a v1beta1-only sideEffects",
            [validating({ sideEffects: "Unknown" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].sideEffects): is "Unknown"; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
            ],
        ],
        [
            "missing admissionReviewVersions",
            [validating({ admissionReviewVersions: undefined })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].admissionReviewVersions): is required: list the review versions the webhook understands (v1, v1beta1)',
            ],
        ],
        [
            "admissionReviewVersions the API server cannot send",
            [validating({ admissionReviewVersions: ["v2"] })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].admissionReviewVersions): ["v2"] must include at least one of v1, v1beta1',
            ],
        ],
        [
            "a timeout above 30 seconds",
            [validating({ timeoutSeconds: 31 })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].timeoutSeconds): 31 must be an integer from 1 to 30, so a slow webhook cannot stall every request it intercepts',
            ],
        ],
        [
            "a reinvocationPolicy on a validating webhook",
            [validating({ reinvocationPolicy: "IfNeeded" })],
            [
                'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].reinvocationPolicy): is only valid for MutatingAdmissionWebhook',
            ],
        ],
        [
            "a name with fewer than three segments",
            [validating({ generateName: "vwidget.io" })],
            [
                'operator "widgets": webhook "vwidget.io" (spec.webhookdefinitions[0].generateName): "vwidget.io" must be a domain with at least three segments separated by dots (admissionregistration.k8s.io/v1)',
            ],
        ],
        [
            "a conversion webhook without CRDs",
            [
                {
                    generateName: "cwidgets.example.io",
                    type: "ConversionWebhook" as const,
                    deploymentName: "widget-webhook",
                    admissionReviewVersions: ["v1"],
                },
            ],
            [
                'operator "widgets": webhook "cwidgets.example.io" (spec.webhookdefinitions[0].conversionCRDs): is required: a ConversionWebhook must name at least one owned CRD',
            ],
        ],
        [
            "a conversion webhook for a CRD the CSV does not own",
            [
                {
                    generateName: "cwidgets.example.io",
                    type: "ConversionWebhook" as const,
                    deploymentName: "widget-webhook",
                    admissionReviewVersions: ["v1"],
                    conversionCRDs: ["gadgets.example.io"],
                },
            ],
            [
                'operator "widgets": webhook "cwidgets.example.io" (spec.webhookdefinitions[0].conversionCRDs[0]): references custom resource definition "gadgets.example.io" not owned by the CSV (spec.customresourcedefinitions.owned)',
            ],
        ],
        [
            "two conversion webhooks for one CRD",
            [
                {
                    generateName: "cwidgets.example.io",
                    type: "ConversionWebhook" as const,
                    deploymentName: "widget-webhook",
                    admissionReviewVersions: ["v1"],
                    conversionCRDs: ["widgets.example.io"],
                },
                {
                    generateName: "cwidgets2.example.io",
                    type: "ConversionWebhook" as const,
                    deploymentName: "widget-webhook",
                    admissionReviewVersions: ["v1"],
                    conversionCRDs: ["widgets.example.io"],
                },
            ],
            [
                'operator "widgets": webhook "cwidgets2.example.io" (spec.webhookdefinitions[1].conversionCRDs[0]): custom resource definition "widgets.example.io" is already converted by webhook "cwidgets.example.io"',
            ],
        ],
    ])("GIVEN %s WHEN checked THEN the message names operator, webhook and field", (_case, webhooks, expected) => {
        expect(messages(webhooks)).toEqual(expected);
    });

    test("GIVEN a conversion webhook in a CSV that supports more than AllNamespaces WHEN checked THEN OLM's constraint is reported", () => {
        const conversion: WebhookDescriptionInput = {
            generateName: "cwidgets.example.io",
            type: "ConversionWebhook",
            deploymentName: "widget-webhook",
            admissionReviewVersions: ["v1"],
            conversionCRDs: ["widgets.example.io"],
        };
        expect(messages([conversion], { ...context, allNamespacesOnly: false })).toEqual([
            'operator "widgets": webhook "cwidgets.example.io" (spec.webhookdefinitions[0].type): only AllNamespaces InstallModeType is supported when conversionCRDs is present: a conversion webhook serves every namespace, so the CSV\'s installModes must support AllNamespaces and nothing else',
        ]);
    });

    test("GIVEN a webhook with several mistakes WHEN checked THEN every one is reported at once", () => {
        expect(
            messages([
                validating({
                    containerPort: 99999,
                    sideEffects: undefined,
                    admissionReviewVersions: [],
                    rules: [{ apiGroups: ["*"], resources: ["*"] }],
                }),
            ]),
        ).toEqual([
            'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].containerPort): 99999 is out of range: a Service port must be 1-65535',
            'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].admissionReviewVersions): is required: list the review versions the webhook understands (v1, v1beta1)',
            'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].sideEffects): is unset; it must be None or NoneOnDryRun (admissionregistration.k8s.io/v1), so dry runs (pulumi preview, kubectl --dry-run=server) never change anything',
            'operator "widgets": webhook "vwidget.example.io" (spec.webhookdefinitions[0].rules[0].apiGroups): Webhook rules cannot include all groups',
        ]);
    });
});
