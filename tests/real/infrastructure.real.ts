/**
 * Day 2 for the cluster's operators, against the real Infrastructure CRD (issue 29, point 1):
 * openshift/api's manifest (payload-manifests/crds/0000_10_config-operator_01_infrastructures-
 * Default.crd.yaml, built from the Go module tools/crds pins), installed by real:cluster and served
 * by the real API server. Which writes of `resourceTags` does the cluster accept, with which
 * messages? The answers decide what the stack writes (docs/aws-tags.md, *Day 2*).
 */
import { day2TagsField } from "../../components/aws-tags/infrastructure";
import { installTagsFromInfrastructure } from "../../components/aws-tags/install-tags";
import { kubectl, kubectlRun } from "./helpers/kubectl";

const INFRASTRUCTURE = "infrastructure.config.openshift.io/cluster";
const tags = (entries: { key: string; value: string }[]) =>
    JSON.stringify({ status: { platformStatus: { type: "AWS", aws: { resourceTags: entries } } } });
const patchStatus = (patch: string) => kubectlRun(["patch", INFRASTRUCTURE, "--subresource=status", "--type=merge", "-p", patch]);
const liveTags = () => JSON.parse(kubectl(["get", INFRASTRUCTURE, "-o", "json"])).status?.platformStatus?.aws?.resourceTags;
const ALLOWED = "The string can contain only the set of alphanumeric characters, space (' '), '_', '.', '/', '=', '+', '-', ':', '@'";

beforeAll(() => {
    kubectl(["create", "-f", "-"], {
        input: JSON.stringify({
            apiVersion: "config.openshift.io/v1",
            kind: "Infrastructure",
            metadata: { name: "cluster" },
            spec: { platformSpec: { type: "AWS", aws: {} } },
        }),
    });
});

afterAll(() => {
    kubectl(["delete", INFRASTRUCTURE, "--ignore-not-found"]);
});

describe("the served Infrastructure API: where day-2 tags can be written", () => {
    test("GIVEN the CRD the cluster serves WHEN the stack reads its schema THEN it has no spec.platformSpec.aws.resourceTags, and a server-side apply of it is refused", () => {
        const crd = JSON.parse(kubectl(["get", "crd", "infrastructures.config.openshift.io", "-o", "json"]));
        expect(day2TagsField(crd)).toEqual({ present: false });
        const apply = kubectlRun(["apply", "--server-side", "--field-manager=cluster-platform-aws-tags", "-f", "-"], {
            input: JSON.stringify({
                apiVersion: "config.openshift.io/v1",
                kind: "Infrastructure",
                metadata: { name: "cluster" },
                spec: { platformSpec: { aws: { resourceTags: [{ key: "team", value: "a" }] } } },
            }),
        });
        expect({ status: apply.status, stderr: apply.stderr.trim() }).toEqual({
            status: 1,
            stderr: "Error from server: failed to create typed patch object (/cluster; config.openshift.io/v1, Kind=Infrastructure): .spec.platformSpec.aws.resourceTags: field not declared in schema",
        });
    });

    test("GIVEN a write of status through the object itself WHEN patched THEN the status subresource drops it without an error", () => {
        const patch = kubectlRun(["patch", INFRASTRUCTURE, "--type=merge", "-p", tags([{ key: "team", value: "a" }])]);
        expect({ status: patch.status, stdout: patch.stdout.trim() }).toEqual({
            status: 0,
            stdout: "infrastructure.config.openshift.io/cluster patched (no change)",
        });
        expect(liveTags()).toBeUndefined();
    });

    test("GIVEN writes through the status subresource WHEN patched THEN valid tags are accepted (by anyone allowed to update infrastructures/status), and the schema and CEL rules refuse exactly these", () => {
        expect(patchStatus(tags([{ key: "team", value: "a" }])).status).toBe(0);
        expect(liveTags()).toEqual([{ key: "team", value: "a" }]);

        const refused = (entries: { key: string; value: string }[]) => patchStatus(tags(entries)).stderr.trim();
        expect(refused([{ key: "a*b", value: "a" }])).toBe(
            `The Infrastructure "cluster" is invalid: status.platformStatus.aws.resourceTags[0].key: Invalid value: "a*b": invalid AWS resource tag key. ${ALLOWED}`,
        );
        // AWS accepts Unicode letters; the Infrastructure API does not.
        expect(refused([{ key: "team", value: "é" }])).toBe(
            `The Infrastructure "cluster" is invalid: status.platformStatus.aws.resourceTags[0].value: Invalid value: "é": invalid AWS resource tag value. ${ALLOWED}`,
        );
        expect(refused([{ key: "team", value: "" }])).toBe(
            [
                'The Infrastructure "cluster" is invalid: ',
                '* status.platformStatus.aws.resourceTags[0].value: Invalid value: "": platformStatus.aws.resourceTags[0].value in body should be at least 1 chars long',
                `* status.platformStatus.aws.resourceTags[0].value: Invalid value: "": invalid AWS resource tag value. ${ALLOWED}`,
            ].join("\n"),
        );
        expect(refused(Array.from({ length: 26 }, (_, i) => ({ key: `k${i}`, value: "v" })))).toBe(
            [
                'The Infrastructure "cluster" is invalid: ',
                "* status.platformStatus.aws.resourceTags: Too many: 26: must have at most 25 items",
                "* <nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the existing errors to complete validation",
            ].join("\n"),
        );
        // What the list kept through the refusals: the last accepted write.
        expect(liveTags()).toEqual([{ key: "team", value: "a" }]);
    });

    test("GIVEN a value with a comma, and one of spaces only WHEN written to status THEN the API server accepts both (its pattern's +-@ is a range), and the stack's install-tag reader leaves them out, naming why", () => {
        expect(
            patchStatus(
                tags([
                    { key: "dept", value: "a,b" },
                    { key: "blank", value: " " },
                ]),
            ).status,
        ).toBe(0);
        const live = JSON.parse(kubectl(["get", INFRASTRUCTURE, "-o", "json"]));
        expect(live.status.platformStatus.aws.resourceTags).toEqual([
            { key: "dept", value: "a,b" },
            { key: "blank", value: " " },
        ]);
        expect(installTagsFromInfrastructure(live)).toEqual({
            tags: {},
            notes: [
                'Infrastructure/cluster status.platformStatus.aws.resourceTags "dept": value contains invalid characters "," in "a,b"; allowed are letters, digits, spaces and _ . : / = + - @; this tag is left out, the other install-time tags are applied',
                'Infrastructure/cluster status.platformStatus.aws.resourceTags "blank": value " " is only whitespace: it names nothing, and services that trim it see an empty value; this tag is left out, the other install-time tags are applied',
            ],
        });
    });
});
