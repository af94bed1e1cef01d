/**
 * Third-party cases (../shared/testdata/aws-tags/, see SOURCES.md there), file by file. Every
 * case behaves as its source lists it; where the stack deliberately differs (the OpenShift
 * API's `+-@` range, the installer's Unicode spaces, the wording of messages), the case's
 * verdict below says so.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";
import {
    MAX_TAG_KEY_LENGTH,
    MAX_TAG_VALUE_LENGTH,
    MAX_USER_TAGS,
    propagateUserTags,
    TAG_CHARACTERS,
} from "../../components/aws-tags/rules";
import { validateStackConfig } from "../../components/config";
import { Problem } from "../../components/shared/problems";
import { renderConfig, resourcesOfType, ROOT } from "../helpers/render";

const TESTDATA = path.resolve(ROOT, "..", "shared", "testdata", "aws-tags");
const read = (file: string) => fs.readFileSync(path.join(TESTDATA, file), "utf8");
const cluster = { name: "test-cluster", platform: "openshift", kubeContext: "test" };

function validateTags(userTags: Record<string, unknown>, propagate?: boolean) {
    return validateStackConfig({ cluster, aws: { userTags, ...(propagate === undefined ? {} : { propagateUserTags: propagate }) } });
}
const problemsOf = (result: ReturnType<typeof validateStackConfig>): Problem[] => (result.ok ? [] : result.problems);

interface InstallerCase {
    name: string;
    validator?: string;
    tags: Record<string, string>;
    propagateUserTags?: boolean;
    expectValid: boolean;
    expectedErrorSubstring: string | null;
}

describe("installer-usertags-validation-cases.json (openshift/installer platform_test.go)", () => {
    const data = JSON.parse(read("installer-usertags-validation-cases.json")) as {
        rules: { maxTags: number; tagRegex: string };
        cases: InstallerCase[];
        legacyCases: { cases: InstallerCase[] };
    };

    test("GIVEN the file THEN it holds the 19 current cases judged below, each with the same verdict and the installer's words", () => {
        expect(data.cases).toHaveLength(19);
    });

    test.each(data.cases.map((c) => [c.name, c] as const))(
        "GIVEN the case %s THEN the stack reaches the same verdict, in the installer's words",
        (_name, c) => {
            const problems = problemsOf(validateTags(c.tags, c.propagateUserTags));
            expect(problems.length === 0).toBe(c.expectValid);
            if (c.expectedErrorSubstring !== null) {
                // The report line names the key path the stack's way (aws.userTags.Name, not test-path.userTags[Name]).
                expect(problems.map((p) => p.message).some((m) => m.includes(c.expectedErrorSubstring as string))).toBe(true);
            }
        },
    );

    /** The older generation: same verdicts; two messages were reworded since, and the stack uses the current words. */
    const legacy: Record<string, string> = {
        "invalid userTags, Name key": 'differs in wording only: the current installer (and the stack) say "\\"Name\\" key is not allowed"',
        "invalid userTags, key with kubernetes.io/cluster/":
            "differs in wording only: the current installer (and the stack) say the key is in the kubernetes.io namespace",
        "valid userTags": "same",
        "too many userTags": "same",
    };
    test.each(data.legacyCases.cases.map((c) => [c.name, c] as const))(
        "GIVEN the legacy case %s THEN the verdict is the same (see its note for the wording)",
        (name, c) => {
            const problems = problemsOf(validateTags(c.tags, c.propagateUserTags));
            expect(problems.length === 0).toBe(c.expectValid);
            const wordingSame =
                c.expectedErrorSubstring === null || problems.some((p) => p.message.includes(c.expectedErrorSubstring as string));
            expect(wordingSame).toBe(legacy[name] === "same");
        },
    );

    test("GIVEN the installer's rules THEN the limit is the same, and its tag regex accepts exactly , ; < > ? and Unicode spaces beyond the stack's set (deliberate differences)", () => {
        expect(data.rules.maxTags).toBe(MAX_USER_TAGS);
        const installer = new RegExp(data.rules.tagRegex, "u");
        const probes = [..."!\"#$%&'()*,;<>?[\\]^`{|}~\t"].concat(["\u00a0", "\u2003", "\u3000"]);
        const acceptedOnlyByInstaller = probes.filter((c) => installer.test(c) && !TAG_CHARACTERS.test(c));
        expect(acceptedOnlyByInstaller).toEqual([",", ";", "<", ">", "?", "\u00a0", "\u2003", "\u3000"]);
        expect(probes.filter((c) => TAG_CHARACTERS.test(c) && !installer.test(c))).toEqual([]);
    });
});

describe("openshift-api-aws-resourcetags-cases.json (openshift/api Infrastructure CRD tests)", () => {
    const data = JSON.parse(read("openshift-api-aws-resourcetags-cases.json")) as {
        rules: {
            maxItems: number;
            key: { minLength: number; maxLength: number; celRule: string };
            value: { minLength: number; maxLength: number };
        };
        cases: { name: string; resourceTags: { key: string; value: string }[]; tags: Record<string, string>; expectValid: boolean }[];
    };

    const CHARSET = "allowed are letters, digits, spaces and _ . : / = + - @";
    /** Each case's stack messages: the same verdict; an invalid one names "*" instead of repeating the whole set. */
    const expected: Record<string, string[]> = {
        "Should be able to create an aws resourcetag with spaces": [],
        "Should be able to create an aws resourcetag with characters '_', '.', '/', '=', '+', '-', ':', '@'": [],
        "Should not be able to create an aws resourcetag with character * in key": [`key contains invalid characters "*"; ${CHARSET}`],
        "Should not be able to create an aws resourcetag with character * in value": [
            `value contains invalid characters "*" in "value*"; ${CHARSET}`,
        ],
    };

    test.each(data.cases.map((c) => [c.name, c] as const))(
        "GIVEN the case %s THEN user tags and install-time tags get the API's verdict",
        (name, c) => {
            // As aws.userTags in stack config.
            const configProblems = problemsOf(validateTags(c.tags));
            expect(configProblems.length === 0).toBe(c.expectValid);
            expect(configProblems.map((p) => p.message)).toEqual(expected[name]);
            // As Infrastructure/cluster status.platformStatus.aws.resourceTags, read from the cluster.
            const install = installTagsFromInfrastructure({
                status: { platformStatus: { type: "AWS", aws: { resourceTags: c.resourceTags } } },
            });
            // An install-time tag the stack would reject is left out with a warning naming it; the rest still apply.
            const key = JSON.stringify(Object.keys(c.tags)[0]);
            expect(install.notes).toEqual(
                expected[name].map(
                    (m) =>
                        `Infrastructure/cluster status.platformStatus.aws.resourceTags ${key}: ${m}; this tag is left out, the other install-time tags are applied`,
                ),
            );
            expect(install.tags).toEqual(c.expectValid ? c.tags : {});
        },
    );

    test("GIVEN the API's rules THEN the limits are the same, and its CEL pattern accepts exactly , ; < > ? beyond the stack's set (the range bug the issue refuses to copy)", () => {
        expect([data.rules.maxItems, data.rules.key.maxLength, data.rules.value.maxLength]).toEqual([
            MAX_USER_TAGS,
            MAX_TAG_KEY_LENGTH,
            MAX_TAG_VALUE_LENGTH,
        ]);
        expect([data.rules.key.minLength, data.rules.value.minLength]).toEqual([1, 1]);
        const api = new RegExp(/self\.matches\('(.*)'\)/.exec(data.rules.key.celRule)?.[1] ?? "");
        const printable = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
        expect(printable.filter((c) => api.test(c) && !TAG_CHARACTERS.test(c))).toEqual([",", ";", "<", ">", "?"]);
        expect(printable.filter((c) => TAG_CHARACTERS.test(c) && !api.test(c))).toEqual([]);
    });
});

describe("installer-propagateusertags-installconfig-cases.json (openshift/installer installconfig_test.go)", () => {
    const data = JSON.parse(read("installer-propagateusertags-installconfig-cases.json")) as {
        cases: {
            name: string;
            installConfigYAML: string;
            expected: { experimentalPropagateUserTags: boolean | null; propagateUserTags: boolean };
        }[];
    };
    const deprecated = (value: boolean, extra: string) =>
        `cluster-platform:aws.experimentalPropagateUserTags: deprecated: use aws.propagateUserTags instead; experimentalPropagateUserTags (${value}) still applies${extra}`;
    const warnings: Record<string, string[]> = {
        "experimentalPropagateUserTags takes precedence": [
            deprecated(false, " and wins over propagateUserTags (true): propagation is off"),
        ],
        "missing experimentalPropagateUserTags": [],
        "support only experimental - backport test": [
            "cluster-platform:aws.experimentalPropagateUsertags: read as aws.experimentalPropagateUserTags (keys are matched case-insensitively, as the installer reads install-config); spell it experimentalPropagateUserTags",
            deprecated(true, ""),
        ],
    };

    test.each(data.cases.map((c) => [c.name, c] as const))(
        "GIVEN the install-config case %s WHEN its platform.aws is the stack's aws config THEN propagation is what the installer decides",
        (name, c) => {
            const aws = (parse(c.installConfigYAML) as { platform: { aws: Record<string, unknown> } }).platform.aws;
            const result = validateStackConfig({ cluster, aws });
            expect(result.ok).toBe(true);
            if (!result.ok) {
                return;
            }
            expect(propagateUserTags(result.config.aws)).toBe(c.expected.propagateUserTags);
            expect(result.config.aws.experimentalPropagateUserTags ?? null).toBe(c.expected.experimentalPropagateUserTags);
            expect(result.warnings).toEqual(warnings[name]);
        },
    );
});

describe("the documentation's install-config samples (openshift-docs installation-aws-config-yaml)", () => {
    const samples = ["install-config-aws-usertags.openshift-docs.yaml", "install-config-aws-usertags-private.openshift-docs.yaml"];
    const awsOf = (file: string) => {
        const platform = (
            parse(read(file)) as { platform: { aws: { region: string; userTags: Record<string, unknown>; propagateUserTags: boolean } } }
        ).platform.aws;
        // Only these keys are stack config; subnets, hostedZone, amiID and the rest are the installer's.
        return { enabled: true, region: platform.region, userTags: platform.userTags, propagateUserTags: platform.propagateUserTags };
    };

    test.each(samples)(
        'GIVEN %s, whose costCenter: 7536 is an unquoted YAML integer, THEN it is accepted as the text "7536" with one warning',
        (file) => {
            const aws = awsOf(file);
            expect(aws.userTags).toEqual({ adminContact: "jdoe", costCenter: 7536 });
            const result = validateStackConfig({ cluster, aws });
            expect(result.ok && result.config.aws).toEqual({
                enabled: true,
                region: "us-west-2",
                userTags: { adminContact: "jdoe", costCenter: "7536" },
                propagateUserTags: true,
                imageRegistryStorage: { enabled: false },
                ignoreTags: { keys: [], keyPrefixes: [] },
            });
            expect(result.warnings).toEqual([
                'cluster-platform:aws.userTags.costCenter: the YAML number 7536 is used as the tag value "7536"; quote it in the stack file (or use pulumi config set --path --type string) so the value is exactly the text you wrote',
            ]);
        },
    );

    test("GIVEN the sample's tags in a stack on plain Kubernetes WHEN rendered THEN every tagged resource and the EBS StorageClass carry costCenter=7536", async () => {
        const storage = { enabled: true, trustedPrincipalArn: "arn:aws:iam::123456789012:role/registry-admin" };
        const result = await renderConfig({
            cluster: { name: "test-cluster", platform: "kubernetes", kubeContext: "test" },
            aws: { ...awsOf(samples[0]), imageRegistryStorage: storage },
        });
        expect(result.errors).toEqual([]);
        const tagged = result.resources.filter((r) => r.type.startsWith("aws:") && r.inputs.tags !== undefined);
        expect(tagged.map((r) => (r.inputs.tags as Record<string, string>).costCenter)).toEqual(["7536", "7536", "7536", "7536"]);
        const [storageClass] = resourcesOfType(result, "kubernetes:storage.k8s.io/v1:StorageClass");
        expect(storageClass.inputs.parameters).toMatchObject({
            tagSpecification_1: "adminContact=jdoe",
            tagSpecification_2: "costCenter=7536",
        });
    });
});
