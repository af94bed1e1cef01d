import fc from "fast-check";
import { validateStackConfig } from "../../components/config";
import { TAG_CHARACTERS, tagKeyProblems, tagValueProblems, tagValueText, userTagProblems } from "../../components/aws-tags/rules";
import { formatProblem } from "../../components/shared/problems";

const cluster = { name: "prod-east", platform: "openshift", kubeContext: "test" };
const CHARSET_RULE = "allowed are letters, digits, spaces and _ . : / = + - @";
const at = (path: string, message: string) => `cluster-platform:aws.userTags${path}: ${message}`;

/** The problem lines and warnings of validating `aws` with the rest of a minimal config. */
function validateAws(aws: Record<string, unknown>): { problems: string[]; warnings: string[] } {
    const result = validateStackConfig({ cluster, aws });
    return { problems: result.ok ? [] : result.problems.map(formatProblem), warnings: result.warnings };
}

const numbered = (n: number, prefix = "k") => Object.fromEntries(Array.from({ length: n }, (_, i) => [`${prefix}${i}`, `v${i}`]));

/**
 * [case, aws.userTags, expected problem lines]. Sources: the seed (its examples, the reserved
 * namespaces, the 25-tag installer limit), the installer's validateTag rules, AWS's rules
 * (aws: prefix, lengths), and the deliberate fix of the API's `+-@` range.
 */
const cases: [string, Record<string, unknown>, string[]][] = [
    ["a plain tag (installer: valid userTags)", { app: "production" }, []],
    ["a value with spaces (installer)", { "test-key": "this test has spaces" }, []],
    ["a key with spaces (OpenShift API)", { "key with space": "value with space" }, []],
    ["every allowed special character in key and value (OpenShift API)", { "key:_./=+-@": "value:_./=+-@" }, []],
    ["the seed's Red Hat managed marker", { "red-hat-managed": "true" }, []],
    ["the seed's precedence example", { key_infra1: "value1" }, []],
    ["exactly 25 tags (the installer's limit)", numbered(25), []],
    ["26 tags", numbered(26), [at("", "Too many: 26: must have at most 25 items (the installer's limit on user tags)")]],
    [
        "the key Name (the installer sets it)",
        { Name: "test-cluster" },
        [at(".Name", '"Name" key is not allowed for user defined tags: each resource sets its own Name')],
    ],
    [
        "the key name, any letter case (the installer compares case-insensitively)",
        { name: "x", NAME: "y" },
        [
            // Problems in code-unit order of their paths (components/shared/order.ts): NAME before name.
            at(
                ".NAME",
                '"Name" key is not allowed for user defined tags ("NAME" matches it: the installer compares case-insensitively): each resource sets its own Name',
            ),
            at(
                ".name",
                '"Name" key is not allowed for user defined tags ("name" matches it: the installer compares case-insensitively): each resource sets its own Name',
            ),
        ],
    ],
    [
        "a key in kubernetes.io/ (the installer's cluster tag)",
        { "kubernetes.io/cluster/test-cluster": "shared" },
        [at('["kubernetes.io/cluster/test-cluster"]', "key is in the kubernetes.io namespace, which the platform reserves")],
    ],
    [
        "a key in openshift.io/",
        { "openshift.io/some-key": "v" },
        [at('["openshift.io/some-key"]', "key is in the openshift.io namespace, which the platform reserves")],
    ],
    [
        "a key in a subdomain of openshift.io",
        { "other.openshift.io/some-key": "v" },
        [at('["other.openshift.io/some-key"]', "key is in the openshift.io namespace, which the platform reserves")],
    ],
    [
        "a key in a subdomain of kubernetes.io (the issue's example)",
        { "x.kubernetes.io/a": "v" },
        [at('["x.kubernetes.io/a"]', "key is in the kubernetes.io namespace, which the platform reserves")],
    ],
    [
        "the bare namespace as a key",
        { "kubernetes.io": "v" },
        [at('["kubernetes.io"]', "key is in the kubernetes.io namespace, which the platform reserves")],
    ],
    [
        "the installer's ownership key (openshift/installer pkg/asset/cluster/aws/aws.go Metadata: destroy deletes what carries it)",
        { openshiftClusterID: "0d6f1b5e-2a6a-4d55-9f7b-2b1d5c3f7e10" },
        [
            at(
                ".openshiftClusterID",
                "key openshiftClusterID is the installer's cluster ownership tag: openshift-install destroy deletes every resource carrying a cluster's id under it (openshift/installer pkg/destroy/aws/aws.go)",
            ),
        ],
    ],
    [
        "Cluster API Provider AWS's ownership key (destroy's third filter) and its role key",
        { "sigs.k8s.io/cluster-api-provider-aws/cluster/prod-west-abcde": "owned", "sigs.k8s.io/cluster-api-provider-aws/role": "node" },
        [
            at(
                '["sigs.k8s.io/cluster-api-provider-aws/cluster/prod-west-abcde"]',
                "key is Cluster API Provider AWS's cluster ownership tag: openshift-install destroy deletes every resource carrying sigs.k8s.io/cluster-api-provider-aws/cluster/<infra id>=owned (openshift/installer pkg/asset/cluster/aws/aws.go)",
            ),
            at(
                '["sigs.k8s.io/cluster-api-provider-aws/role"]',
                "key is in Cluster API Provider AWS's namespace sigs.k8s.io/cluster-api-provider-aws/, by which the cluster's machinery finds its resources",
            ),
        ],
    ],
    [
        "a key that only looks like the ownership key (destroy matches keys exactly)",
        { OpenshiftClusterIDs: "x", "sigs.k8s.io/other": "v" },
        [],
    ],
    ["a look-alike domain (installer: valid)", { "otheropenshift.io/some-key": "v" }, []],
    ["openshift.io further down the path (installer: valid)", { "some-domain/openshift.io/some-key": "v" }, []],
    [
        "an aws: key (AWS reserves it)",
        { "aws:createdBy": "me" },
        [at('["aws:createdBy"]', 'key starts with "aws:": AWS reserves the prefix aws: for its own tags')],
    ],
    [
        "an AWS: key, any letter case",
        { "AWS:x": "me" },
        [at('["AWS:x"]', 'key starts with "AWS:": AWS reserves the prefix aws: for its own tags')],
    ],
    ["a key that only starts with aws", { awsome: "yes", "aws-account": "1" }, []],
    ["an empty key (installer)", { "": "test-value" }, [at('[""]', "key is empty: a key has 1 to 128 characters")]],
    [
        "an empty value (installer)",
        { "test-key": "" },
        [at('["test-key"]', "value is empty: a value has 1 to 256 characters (some AWS services reject empty values)")],
    ],
    ["a key of 128 characters", { ["k".repeat(128)]: "v" }, []],
    [
        "a key of 129 characters (installer)",
        { ["a".repeat(129)]: "v" },
        [at(`.${"a".repeat(129)}`, "key is too long: 129 characters, at most 128")],
    ],
    ["a value of 256 characters", { k: "v".repeat(256) }, []],
    [
        "a value of 257 characters (installer)",
        { "test-key": "a".repeat(257) },
        [at('["test-key"]', "value is too long: 257 characters, at most 256")],
    ],
    [
        "brackets in a value (installer: invalid characters)",
        { "usage-user": "cloud-team-rebase-bot[bot]" },
        [at('["usage-user"]', `value contains invalid characters "[", "]" in "cloud-team-rebase-bot[bot]"; ${CHARSET_RULE}`)],
    ],
    [
        "asterisks in a key (installer)",
        { "bad-key***": "test-value" },
        [at('["bad-key***"]', `key contains invalid characters "*"; ${CHARSET_RULE}`)],
    ],
    [
        "a comma (the API's +-@ range lets it through; the design does not)",
        { team: "a,b" },
        [at(".team", `value contains invalid characters "," in "a,b"; ${CHARSET_RULE}`)],
    ],
    [
        "; < > ? (the rest of the range)",
        { "k;<>?": "v" },
        [at('["k;<>?"]', `key contains invalid characters ";", "<", ">", "?"; ${CHARSET_RULE}`)],
    ],
    ["a letter outside ASCII", { owner: "josé" }, [at(".owner", `value contains invalid characters "é" in "josé"; ${CHARSET_RULE}`)]],
    [
        "a no-break space (the installer's \\p{Z} allows it; AWS tag tooling often does not)",
        { owner: "a\u00a0b" },
        [at(".owner", `value contains invalid characters "\u00a0" in "a\u00a0b"; ${CHARSET_RULE}`)],
    ],
    ["a tab", { owner: "a\tb" }, [at(".owner", `value contains invalid characters "\\t" in "a\\tb"; ${CHARSET_RULE}`)]],
    [
        "every problem of one key at once",
        { "kubernetes.io/*": "" },
        [
            at('["kubernetes.io/*"]', `key contains invalid characters "*"; ${CHARSET_RULE}`),
            at('["kubernetes.io/*"]', "key is in the kubernetes.io namespace, which the platform reserves"),
            at('["kubernetes.io/*"]', "value is empty: a value has 1 to 256 characters (some AWS services reject empty values)"),
        ],
    ],
    ["an unquoted YAML integer (the docs' costCenter: 7536)", { costCenter: 7536 }, []],
    ["an unquoted YAML boolean", { "red-hat-managed": true }, []],
    [
        "an unquoted YAML decimal",
        { ratio: 1.5 },
        [
            at(
                ".ratio",
                "the YAML number 1.5 is not an integer, so the text you wrote cannot be recovered from it (1.50 arrives as 1.5, 1e3 as 1000); quote the value",
            ),
        ],
    ],
    [
        "an integer beyond what JSON numbers hold exactly",
        { id: 2 ** 53 + 2 },
        [
            at(
                ".id",
                "the YAML number 9007199254740994 is not an integer, so the text you wrote cannot be recovered from it (1.50 arrives as 1.5, 1e3 as 1000); quote the value",
            ),
        ],
    ],
    ["a null value", { owner: null }, [at(".owner", "expected string, got null")]],
    ["a list value", { owner: ["a"] }, [at(".owner", 'expected string, got array ["a"]')]],
    [
        "problems in several tags at once, with a value that cannot be read",
        { Name: "x", ratio: 0.5, "openshift.io/a": "b" },
        [
            at(".Name", '"Name" key is not allowed for user defined tags: each resource sets its own Name'),
            at(
                ".ratio",
                "the YAML number 0.5 is not an integer, so the text you wrote cannot be recovered from it (1.50 arrives as 1.5, 1e3 as 1000); quote the value",
            ),
            at('["openshift.io/a"]', "key is in the openshift.io namespace, which the platform reserves"),
        ],
    ],
];

describe("aws.userTags validation", () => {
    test.each(cases)("GIVEN %s WHEN validated THEN exactly the listed problems are reported", (_name, userTags, expected) => {
        expect(validateAws({ userTags }).problems).toEqual(expected);
    });

    test("GIVEN an unquoted integer and boolean WHEN validated THEN they become their text, each with a warning saying how to quote it", () => {
        const result = validateStackConfig({ cluster, aws: { userTags: { costCenter: 7536, "red-hat-managed": true, owner: "jdoe" } } });
        expect(result.ok && result.config.aws.userTags).toEqual({ costCenter: "7536", "red-hat-managed": "true", owner: "jdoe" });
        expect(result.warnings).toEqual([
            'cluster-platform:aws.userTags.costCenter: the YAML number 7536 is used as the tag value "7536"; quote it in the stack file (or use pulumi config set --path --type string) so the value is exactly the text you wrote',
            'cluster-platform:aws.userTags["red-hat-managed"]: the YAML boolean true is used as the tag value "true"; quote it in the stack file (or use pulumi config set --path --type string) so the value is exactly the text you wrote',
        ]);
    });

    test("GIVEN propagation on WHEN a tag cannot be written as key=value for the consumers THEN it is refused; with propagation off it is fine", () => {
        const userTags = { "a=b": "c", team: "x=y", " lead": "v", trail: "v " };
        const expected = [
            at(
                ".team",
                'cannot be propagated to in-cluster consumers: value "x=y" contains "=", which the load balancer annotation would cut off; change the tag or set aws.propagateUserTags to false',
            ),
            at(
                ".trail",
                'cannot be propagated to in-cluster consumers: value "v " ends with a space, which the load balancer annotation trims; change the tag or set aws.propagateUserTags to false',
            ),
            at(
                '[" lead"]',
                'cannot be propagated to in-cluster consumers: key " lead" starts with a space, which the load balancer annotation trims; change the tag or set aws.propagateUserTags to false',
            ),
            at(
                '["a=b"]',
                'cannot be propagated to in-cluster consumers: key "a=b" contains "=", which the EBS CSI driver and the load balancer annotation use to separate key from value; change the tag or set aws.propagateUserTags to false',
            ),
        ];
        expect(validateAws({ enabled: true, region: "us-east-1", propagateUserTags: true, userTags }).problems).toEqual(expected);
        expect(validateAws({ enabled: true, region: "us-east-1", experimentalPropagateUserTags: true, userTags }).problems).toEqual(
            expected,
        );
        expect(validateAws({ enabled: true, region: "us-east-1", propagateUserTags: false, userTags }).problems).toEqual([]);
        // The seed: an omitted value means propagate.
        expect(validateAws({ enabled: true, region: "us-east-1", userTags }).problems).toEqual(expected);
    });

    test("GIVEN an aws key in another letter case THEN it is read as the key, with a warning; next to the key itself it is unknown", () => {
        const result = validateStackConfig({ cluster, aws: { UserTags: { a: "b" } } });
        expect(result.ok && result.config.aws.userTags).toEqual({ a: "b" });
        expect(result.warnings).toEqual([
            "cluster-platform:aws.UserTags: read as aws.userTags (keys are matched case-insensitively, as the installer reads install-config); spell it userTags",
        ]);
        expect(validateAws({ propagateUserTags: true, PropagateUserTags: false }).problems).toEqual([
            "cluster-platform:aws.PropagateUserTags: unknown key",
        ]);
    });

    test("GIVEN any tag map WHEN validated through the stack config THEN it reports exactly what the rules module finds", () => {
        // One rule, one place: the schema and the policy pack call userTagIssues.
        fc.assert(
            fc.property(fc.dictionary(fc.string({ maxLength: 6 }), fc.string({ maxLength: 6 }), { maxKeys: 4 }), (tags) => {
                // The same lines, as a multiset: the config report orders problems by path.
                const fromRules = userTagProblems(tags, ["aws", "userTags"]).map(formatProblem).sort();
                expect([...validateAws({ userTags: tags }).problems].sort()).toEqual(fromRules);
            }),
        );
    });
});

describe("tag values written as YAML scalars (tagValueText)", () => {
    test.each<[string, unknown, ReturnType<typeof tagValueText>]>([
        ["a string", "7536", { ok: true, text: "7536" }],
        ["null", null, { ok: false, problem: "expected a string tag value, got null" }],
        ["a list", ["a"], { ok: false, problem: 'expected a string tag value, got array ["a"]' }],
        ["a map", { a: 1 }, { ok: false, problem: 'expected a string tag value, got object {"a":1}' }],
    ])("GIVEN %s WHEN read as tag text THEN the answer names what arrived", (_name, value, expected) => {
        expect(tagValueText(value)).toEqual(expected);
    });
});

describe("the tag character set", () => {
    const allowed = [..."abcXYZ019 _.:/=+-@"];
    const keyOf = (s: string) => `t${s}`; // never empty, never Name, never in a reserved namespace or aws:

    test("GIVEN keys and values made only of allowed characters THEN no character problem is reported", () => {
        fc.assert(
            fc.property(
                fc.string({ unit: fc.constantFrom(...allowed), minLength: 0, maxLength: 120 }),
                fc.string({ unit: fc.constantFrom(...allowed), minLength: 1, maxLength: 256 }).filter((v) => v.trim() !== ""),
                (key, value) => {
                    expect(tagKeyProblems(keyOf(key))).toEqual([]);
                    expect(tagValueProblems(value)).toEqual([]);
                },
            ),
        );
    });

    test("GIVEN a value of spaces only THEN it is refused as blank, naming it", () => {
        expect(tagValueProblems("   ")).toEqual([
            'value "   " is only whitespace: it names nothing, and services that trim it see an empty value',
        ]);
    });

    test("GIVEN any character outside the set inserted anywhere THEN the key and the value name exactly that character", () => {
        const outside = fc.string({ unit: "binary", minLength: 1, maxLength: 1 }).filter((c) => !TAG_CHARACTERS.test(c));
        fc.assert(
            fc.property(fc.string({ unit: fc.constantFrom(...allowed), maxLength: 20 }), outside, fc.nat(20), (text, bad, at) => {
                const position = Math.min(at, text.length);
                const tainted = `${text.slice(0, position)}${bad}${text.slice(position)}`;
                expect(tagKeyProblems(keyOf(tainted))).toContain(`key contains invalid characters ${JSON.stringify(bad)}; ${CHARSET_RULE}`);
                expect(tagValueProblems(tainted)).toContain(
                    `value contains invalid characters ${JSON.stringify(bad)} in ${JSON.stringify(tainted)}; ${CHARSET_RULE}`,
                );
            }),
        );
    });

    test("GIVEN the OpenShift API's accidental range + to @ WHEN each of its extra characters is used THEN it is refused (a deliberate difference)", () => {
        const apiPattern = /^[0-9A-Za-z_.:/=+-@ ]+$/; // as written in the API: '+-@' is a range
        const range = Array.from({ length: "@".charCodeAt(0) - "+".charCodeAt(0) + 1 }, (_, i) =>
            String.fromCharCode("+".charCodeAt(0) + i),
        );
        const extra = range.filter((c) => apiPattern.test(c) && !TAG_CHARACTERS.test(c));
        expect(extra).toEqual([",", ";", "<", ">", "?"]);
        for (const c of extra) {
            expect(tagValueProblems(`a${c}b`)).toEqual([
                `value contains invalid characters ${JSON.stringify(c)} in ${JSON.stringify(`a${c}b`)}; ${CHARSET_RULE}`,
            ]);
        }
    });
});

describe("aws.imageRegistryStorage: whom the registry role trusts", () => {
    const OIDC = "arn:aws:iam::123456789012:oidc-provider/oidc.example.com/prod-east";
    const ROLE = "arn:aws:iam::123456789012:role/registry-admin";
    const on = (extra: Record<string, unknown>, storage: Record<string, unknown>) => ({
        enabled: true,
        region: "us-east-1",
        ...extra,
        imageRegistryStorage: { enabled: true, ...storage },
    });

    test.each<[string, Record<string, unknown>, string[]]>([
        ["the cluster's OIDC provider", on({ oidcProviderArn: OIDC }, {}), []],
        ["one named role", on({}, { trustedPrincipalArn: ROLE }), []],
        ["one named user", on({}, { trustedPrincipalArn: "arn:aws:iam::123456789012:user/ci" }), []],
        ["storage off, nothing named", { enabled: true, region: "us-east-1" }, []],
        [
            "neither",
            on({}, {}),
            [
                "cluster-platform:aws.imageRegistryStorage.enabled: true needs whom the registry role trusts: set aws.oidcProviderArn (STS clusters: the image registry's service accounts, through web identity) or aws.imageRegistryStorage.trustedPrincipalArn (one IAM role or user); the stack never lets a whole account assume it",
            ],
        ],
        [
            "both",
            on({ oidcProviderArn: OIDC }, { trustedPrincipalArn: ROLE }),
            [
                "cluster-platform:aws.imageRegistryStorage.trustedPrincipalArn: is set together with aws.oidcProviderArn: the registry role trusts exactly one of them; remove one",
            ],
        ],
        [
            "an account root",
            on({}, { trustedPrincipalArn: "arn:aws:iam::123456789012:root" }),
            [
                'cluster-platform:aws.imageRegistryStorage.trustedPrincipalArn: "arn:aws:iam::123456789012:root" is not an IAM role or user ARN such as "arn:aws:iam::123456789012:role/registry-admin" (an account root, "*" or another principal would let a whole account assume the role)',
            ],
        ],
        [
            "a wildcard",
            on({}, { trustedPrincipalArn: "*" }),
            [
                'cluster-platform:aws.imageRegistryStorage.trustedPrincipalArn: "*" is not an IAM role or user ARN such as "arn:aws:iam::123456789012:role/registry-admin" (an account root, "*" or another principal would let a whole account assume the role)',
            ],
        ],
    ])("GIVEN %s WHEN validated THEN exactly the listed problems are reported", (_name, aws, expected) => {
        expect(validateAws(aws).problems).toEqual(expected);
    });
});

describe("aws.ignoreTags: tags other tools manage", () => {
    test("GIVEN keys and prefixes no tag of the stack falls under THEN the config is valid and they reach the config as given", () => {
        const result = validateStackConfig({
            cluster,
            aws: {
                enabled: true,
                region: "us-east-1",
                userTags: { team: "a" },
                ignoreTags: { keys: ["scanner:last-run"], keyPrefixes: ["cost:"] },
            },
        });
        expect(result.ok && result.config.aws.ignoreTags).toEqual({ keys: ["scanner:last-run"], keyPrefixes: ["cost:"] });
    });

    const aws = (ignoreTags: Record<string, unknown>) => ({
        enabled: true,
        region: "us-east-1",
        userTags: { team: "a", "cost:center": "7" },
        imageRegistryStorage: { enabled: true, trustedPrincipalArn: "arn:aws:iam::123456789012:role/registry-admin" },
        ignoreTags,
    });

    test("GIVEN entries covering a user tag or a tag the stack's assets set THEN each is refused, naming the entry and what it covers", () => {
        expect(validateAws(aws({ keys: ["team"], keyPrefixes: ["cost:", "cluster-platform.io/"] })).problems).toEqual([
            'cluster-platform:aws.ignoreTags.keyPrefixes[0]: "cost:" covers aws.userTags "cost:center": the AWS provider would neither apply nor track a tag it ignores; ignoreTags is for tags other tools manage',
            'cluster-platform:aws.ignoreTags.keyPrefixes[1]: "cluster-platform.io/" covers the stack\'s own tag "cluster-platform.io/cluster", the stack\'s own tag "cluster-platform.io/capability": the AWS provider would neither apply nor track a tag it ignores; ignoreTags is for tags other tools manage',
            'cluster-platform:aws.ignoreTags.keys[0]: "team" covers aws.userTags "team": the AWS provider would neither apply nor track a tag it ignores; ignoreTags is for tags other tools manage',
        ]);
    });

    test("GIVEN a repeated key and an empty prefix THEN each is refused", () => {
        expect(validateAws(aws({ keys: ["scan", "scan"], keyPrefixes: [" "] })).problems).toEqual([
            'cluster-platform:aws.ignoreTags.keyPrefixes[0]: " " must not be empty',
            'cluster-platform:aws.ignoreTags.keys[1]: duplicate key "scan" (already at index 0)',
        ]);
    });
});
