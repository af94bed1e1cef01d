import { validateManifests } from "../../scripts/render/validate-k8s";

const crd = (node: Record<string, unknown>) => ({
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: { name: "things.x.io" },
    spec: {
        group: "x.io",
        scope: "Namespaced",
        names: { plural: "things", singular: "thing", kind: "Thing", listKind: "ThingList" },
        versions: [
            {
                name: "v1",
                served: true,
                storage: true,
                schema: { openAPIV3Schema: { type: "object", properties: { spec: { type: "object", properties: { ini: node } } } } },
            },
        ],
    },
});

describe("render validation of built-in kinds", () => {
    test("GIVEN a CRD whose schema has additionalProperties or additionalItems of true or false WHEN validated THEN no problem (the API server's JSONSchemaPropsOrBool reads a boolean), while another wrong type still is one", () => {
        // stackgres-community 1.19.0-rc1's sgpoolconfigs.stackgres.io: `type: object, additionalProperties: true`.
        const booleans = [true, false].flatMap((b) => [
            crd({ type: "object", additionalProperties: b }),
            crd({ type: "array", items: { type: "string" }, additionalItems: b }),
        ]);
        expect(booleans.map((c) => validateManifests([c]).problems)).toEqual([[], [], [], []]);
        expect(validateManifests([crd({ type: "object", additionalProperties: "yes" })]).problems).toEqual([
            {
                object: "CustomResourceDefinition things.x.io",
                message: "spec.versions[0].schema.openAPIV3Schema.properties.spec.properties.ini.additionalProperties: must be object",
            },
        ]);
    });
});
