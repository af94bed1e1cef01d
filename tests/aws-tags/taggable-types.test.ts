import * as fs from "node:fs";
import { ASSET_TYPES } from "../../components/aws-assets/assets";
import { LIST_ITEM_FIELD_VALUES, listTagsToMap, mapToListTags, tagShapeOf, TAGGABLE_TYPES } from "../../components/aws-tags/taggable";
import { deriveTaggableTypes, OUTPUT_FILE, serialize } from "../../scripts/aws/taggable-types";

describe("the taggable types, derived from @pulumi/aws", () => {
    const derived = deriveTaggableTypes();

    test("GIVEN the installed @pulumi/aws WHEN the list is derived again THEN the committed file is identical (run npm run gen:taggable after upgrading it)", () => {
        expect(serialize(derived)).toBe(fs.readFileSync(OUTPUT_FILE, "utf8"));
    });

    test("GIVEN the derived list THEN map-shaped, list-shaped and other tags are told apart", () => {
        expect(tagShapeOf("aws:s3/bucket:Bucket")).toEqual({ kind: "map" });
        expect(tagShapeOf("aws:s3/bucketV2:BucketV2")).toEqual({ kind: "map" });
        expect(tagShapeOf("aws:autoscaling/group:Group")).toEqual({
            kind: "list",
            itemType: "autoscaling.GroupTag",
            keyField: "key",
            valueField: "value",
            requiredFields: { propagateAtLaunch: "boolean" },
        });
        // A tag *filter*, not tags: never tagged.
        expect(tagShapeOf("aws:devopsguru/resourceCollection:ResourceCollection")).toBeUndefined();
        // A string map whose doc says it selects EC2 instances, and no tagsAll: not its own tags, never tagged.
        expect(tagShapeOf("aws:inspector/resourceGroup:ResourceGroup")).toBeUndefined();
        expect(derived.other["aws:inspector/resourceGroup:ResourceGroup"]).toEqual(
            "{ [key: string]: pulumi.Input<string>; } without tagsAll: not the resource's own tags",
        );
        // Resources without a tags input.
        expect(tagShapeOf("aws:s3/bucketPolicy:BucketPolicy")).toBeUndefined();
        expect(tagShapeOf("aws:kms/alias:Alias")).toBeUndefined();
    });

    test("GIVEN every taggable type the stack creates THEN it is in the derived list with map-shaped tags", () => {
        for (const type of Object.values(ASSET_TYPES)) {
            expect([type, tagShapeOf(type)]).toEqual([type, { kind: "map" }]);
        }
        expect(TAGGABLE_TYPES).toContain("aws:ecr/repository:Repository");
    });

    test("GIVEN every list-shaped type THEN the tagger knows a value for each other required field of its items", () => {
        for (const shape of Object.values(derived.list)) {
            for (const field of Object.keys(shape.requiredFields)) {
                expect([field, field in LIST_ITEM_FIELD_VALUES]).toEqual([field, true]);
            }
        }
    });

    test("GIVEN list-shaped tags WHEN merged tags are written back THEN declared items keep their fields and new ones get the defaults, in key order", () => {
        const shape = {
            itemType: "autoscaling.GroupTag",
            keyField: "key",
            valueField: "value",
            requiredFields: { propagateAtLaunch: "boolean" },
        };
        const declared = [{ key: "team", value: "a", propagateAtLaunch: false }];
        expect(listTagsToMap(declared, shape)).toEqual({ team: "a" });
        expect(mapToListTags({ team: "b", cost: "1" }, shape, declared)).toEqual([
            { key: "cost", value: "1", propagateAtLaunch: true },
            { key: "team", value: "b", propagateAtLaunch: false },
        ]);
    });
});
