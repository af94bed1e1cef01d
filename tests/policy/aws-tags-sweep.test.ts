/**
 * The schema sweep (issue 36, point 4): every resource type of both providers' schemas
 * (components/aws-tags/taggable-types.json, derived from @pulumi/aws and @pulumi/aws-native) goes
 * through the aws-tags policies untagged, tagged only by its provider's defaultTags, and tagged
 * with an ownership key of another cluster, in its own tag set and in every nested tag set the
 * schema records; each verdict is the one the schema implies for the type (taggable: judged;
 * untaggable: passes; nested sets that tag: judged; selectors: pass; unclassified sets and
 * containers: reported as not judged). The expected verdicts are computed here from the schema
 * entries, never by the pack's readers.
 */
import {
    containerOf,
    NestedTagSet,
    PROVIDERS,
    ProviderName,
    schemaTypes,
    TAG_SCHEMA,
    TagSetSpec,
    typeTagSpec,
} from "../../components/aws-tags/taggable";
import { ownershipKeyProblem } from "../../components/aws-tags/rules";
import { requiredTags, reservedTagKeys } from "../../policy-packs/aws-tags/tag-policies";
import { unjudgedContent } from "../../policy-packs/aws-tags/unjudged-types";
import { untaggedResources } from "../../policy-packs/aws-tags/untagged-resources";
import { resource, violations as reported } from "./support";

/** The violations one policy reports, each as its last line (an advisory one arrives after the policy's description). */
const violations = (...args: Parameters<typeof reported>) => reported(...args).map((v) => v.slice(v.lastIndexOf("\n") + 1));

const REQUIRED = "costCenter";
const FOREIGN = "openshiftClusterID";
const PROVIDER_TYPES: Record<ProviderName, string> = { aws: "pulumi:providers:aws", "aws-native": "pulumi:providers:aws-native" };

/** The provider of a type's package, with `defaultTags` JSON-encoded as the engine passes provider config. */
function provider(of: ProviderName, defaultTags?: Record<string, string>) {
    return {
        type: PROVIDER_TYPES[of],
        name: "explicit",
        urn: `urn:pulumi:test::cluster-platform::${PROVIDER_TYPES[of]}::explicit`,
        props: { region: "us-east-1", ...(defaultTags ? { defaultTags: JSON.stringify({ tags: defaultTags }) } : {}) },
    };
}

/** A tag set's value holding `tags`, in the set's own shape (a map, or items with the item's other required fields). */
function shaped(set: TagSetSpec, tags: Record<string, string>): unknown {
    if (set.shape !== "list") {
        return tags;
    }
    const extra = Object.fromEntries(
        Object.entries(set.requiredFields ?? {}).map(([field, type]) => [field, type === "boolean" ? true : "x"]),
    );
    return Object.entries(tags).map(([key, value]) => ({ ...extra, [set.keyField ?? "key"]: key, [set.valueField ?? "value"]: value }));
}

/** Props that hold `value` at a schema path (`a[].b.tags`): lists get one item. */
function at(path: string, value: unknown): Record<string, unknown> {
    const [segment, ...rest] = path.split(".");
    const list = segment.endsWith("[]");
    const name = list ? segment.slice(0, -2) : segment;
    const inner = rest.length === 0 ? value : at(rest.join("."), value);
    return { [name]: list ? [inner] : inner };
}

/** The concrete location messages name for a path with one item per list (`a[0].b.tags`). */
const located = (path: string) => path.replace(/\[\]/g, "[0]");

const label = (type: string) => `${type} "r"`;
const sweep = (of: ProviderName) => schemaTypes(of).filter((type) => !/\/tag:Tag$/.test(type));
/** Types whose own set the pack reads from somewhere else than the type's inputs. */
const DOCUMENT_TYPES = new Set(["aws:cloudcontrol/resource:Resource", "aws-native:index:ExtensionResource"]);

describe.each(PROVIDERS)("the schema sweep: every %s type through the aws-tags policies", (of) => {
    const types = sweep(of).filter((type) => !DOCUMENT_TYPES.has(type));
    const count = (predicate: (type: string) => boolean) => types.filter(predicate).length;
    const own = (type: string) => typeTagSpec(type)?.own;

    test("GIVEN every type of the schema THEN it is taggable, untaggable or a container, and the counts are printed", () => {
        const schema = TAG_SCHEMA.providers[of];
        const judged = count((t) => own(t) !== undefined || (typeTagSpec(t)?.nested ?? []).some((n) => n.role === "tags"));
        const untaggable = count((t) => own(t) === undefined && !(typeTagSpec(t)?.nested ?? []).some((n) => n.role === "tags"));
        const notJudged = count(
            (t) => containerOf(t) !== undefined || (typeTagSpec(t)?.nested ?? []).some((n) => n.role === "unclassified"),
        );
        console.log(
            `schema sweep ${schema.package}: ${types.length} types, ${judged} judged (${count((t) => own(t) !== undefined)} with own tags), ${untaggable} untaggable, ${notJudged} with content reported as not judged (${Object.keys(schema.containers).length} containers)`,
        );
        expect(judged + untaggable).toBe(types.length);
    });

    test("GIVEN each type with no tags at all WHEN judged THEN exactly the types with an own tag set are refused as untagged and lacking the required key", () => {
        for (const type of types) {
            const target = resource(type, "r", {}, { provider: provider(of) });
            const expected = own(type) === undefined ? [] : [`${label(type)} carries no tags`];
            expect([type, violations(untaggedResources, target)]).toEqual([type, expected]);
            const lacking = violations(requiredTags, target, { requiredTags: [REQUIRED] }).filter((v) =>
                v.startsWith(`${label(type)} lacks`),
            );
            expect([type, lacking]).toEqual([
                type,
                own(type) === undefined ? [] : [`${label(type)} lacks the required tag "${REQUIRED}" (it carries no tags)`],
            ]);
        }
    });

    test("GIVEN each type tagged only by its provider's defaultTags WHEN judged THEN it passes exactly when the schema says those defaults reach its own tag set", () => {
        for (const type of types) {
            const target = resource(type, "r", {}, { provider: provider(of, { [REQUIRED]: "7536" }) });
            const reached = own(type)?.defaults === true;
            const expected = own(type) === undefined || reached ? [] : [`${label(type)} carries no tags`];
            expect([type, violations(untaggedResources, target)]).toEqual([type, expected]);
            const lacking = violations(requiredTags, target, { requiredTags: [REQUIRED] }).filter((v) =>
                v.startsWith(`${label(type)} lacks`),
            );
            expect([type, lacking.length]).toEqual([type, own(type) === undefined || reached ? 0 : 1]);
        }
    });

    test("GIVEN each type with another cluster's ownership key in its own tags WHEN judged THEN exactly the taggable types are refused; untaggable ones have no tags to judge", () => {
        for (const type of types) {
            const set = own(type);
            const props = set ? at(set.path, shaped(set, { [REQUIRED]: "1", [FOREIGN]: "other-cluster" })) : { tags: { [FOREIGN]: "x" } };
            const expected = set ? [`${label(type)} tag "${FOREIGN}": ${ownershipKeyProblem(FOREIGN)}`] : [];
            expect([type, violations(reservedTagKeys, resource(type, "r", props, { provider: provider(of) }))]).toEqual([type, expected]);
        }
    });

    test("GIVEN each nested tag set of the schema holding another cluster's ownership key WHEN judged THEN sets that tag are refused at their path, selectors pass, unclassified sets are reported as not judged", () => {
        const nested: [string, NestedTagSet][] = types.flatMap((type) =>
            (typeTagSpec(type)?.nested ?? []).map((set) => [type, set] as [string, NestedTagSet]),
        );
        expect(nested.length).toBeGreaterThan(0);
        for (const [type, set] of nested) {
            // An instance's volume sets are judged together (volumeTags, else each device): see aws-tags.test.ts.
            if (/^(volumeTags|rootBlockDevice\.tags|ebsBlockDevices\[\]\.tags)$/.test(set.path)) {
                continue;
            }
            const target = resource(type, "r", at(set.path, shaped(set, { [FOREIGN]: "other-cluster" })), { provider: provider(of) });
            const reserved = violations(reservedTagKeys, target).filter((v) => v.includes(`tag "${FOREIGN}"`));
            const where = located(set.path);
            const refusedAt = reserved.filter((v) => v.startsWith(`${label(type)} ${where}`));
            expect([type, set.path, refusedAt.length]).toEqual([type, set.path, set.role === "tags" ? 1 : 0]);
            if (set.role !== "tags") {
                expect([type, set.path, reserved]).toEqual([type, set.path, []]);
            }
            const unjudged = violations(unjudgedContent, target).filter((v) => v.includes(`its ${where} holds tags`));
            expect([type, set.path, unjudged.length]).toEqual([type, set.path, set.role === "unclassified" ? 1 : 0]);
        }
    });

    test("GIVEN each nested tag set that tags, declared without the required key, under a provider whose defaultTags carry it WHEN judged THEN it lacks the key exactly when the schema says the defaults do not reach it", () => {
        const tagging: [string, NestedTagSet][] = types.flatMap((type) =>
            (typeTagSpec(type)?.nested ?? []).filter((set) => set.role === "tags").map((set) => [type, set] as [string, NestedTagSet]),
        );
        expect(tagging.length).toBeGreaterThan(0);
        for (const [type, set] of tagging) {
            // An instance's volume sets are judged together (volumeTags, else each device): see aws-tags.test.ts.
            if (/^(volumeTags|rootBlockDevice\.tags|ebsBlockDevices\[\]\.tags)$/.test(set.path)) {
                continue;
            }
            const target = resource(type, "r", at(set.path, shaped(set, { team: "platform" })), {
                provider: provider(of, { [REQUIRED]: "7536" }),
            });
            const lacking = violations(requiredTags, target, { requiredTags: [REQUIRED] }).filter(
                (v) => v.startsWith(`${label(type)} ${located(set.path)}`) && v.includes(`lacks the required tag "${REQUIRED}"`),
            );
            expect([type, set.path, lacking.length]).toEqual([type, set.path, set.defaults ? 0 : 1]);
        }
    });

    test("GIVEN each container type WHEN judged THEN what its template declares is reported as not judged", () => {
        for (const type of types.filter((t) => containerOf(t) === "cloudformation-template")) {
            expect([type, violations(unjudgedContent, resource(type, "r", {}, { provider: provider(of) }))]).toEqual([
                type,
                [`${label(type)} not judged: the resources its template declares are not judged: the pack cannot see their tags`],
            ]);
        }
    });
});
