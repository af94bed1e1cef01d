import * as fs from "node:fs";
import * as path from "node:path";
import { parse } from "yaml";
import { SECTION_NAMES } from "../../components/config";
import { PULUMI_CLI_VERSION_RANGE } from "../../components/config/cli-version";
import { configReferenceRows } from "../../components/config/reference";
import { renderPulumiYaml, renderReference } from "../../scripts/docs/config-docs";
import { ROOT } from "../helpers/render";

const read = (file: string) => fs.readFileSync(path.join(ROOT, file), "utf8");

describe("config documentation agrees with the schema", () => {
    test("GIVEN the schema WHEN Pulumi.yaml is regenerated THEN it is unchanged (run npm run docs:config after schema edits)", () => {
        expect(renderPulumiYaml(read("Pulumi.yaml"))).toBe(read("Pulumi.yaml"));
    });

    test("GIVEN the schema WHEN docs/config-reference.md is regenerated THEN it is unchanged (run npm run docs:config after schema edits)", () => {
        expect(renderReference(read("docs/config-reference.md"))).toBe(read("docs/config-reference.md"));
    });

    test("GIVEN Pulumi.yaml THEN it declares exactly the schema's top-level keys, each typed and described, and the CLI versions the program needs", () => {
        const project = parse(read("Pulumi.yaml"));
        expect(project.name).toBe("cluster-platform");
        expect(project.requiredPulumiVersion).toBe(PULUMI_CLI_VERSION_RANGE);
        expect(Object.keys(project.config)).toEqual(SECTION_NAMES);
        for (const key of SECTION_NAMES) {
            expect(["type", "items", "default", "description"]).toEqual(expect.arrayContaining(Object.keys(project.config[key])));
            expect(project.config[key].description.length).toBeGreaterThan(20);
        }
    });

    test("GIVEN the reference rows THEN every key and nested field has a description", () => {
        const undocumented = configReferenceRows()
            .filter((row) => row.description.trim() === "")
            .map((row) => row.key);
        expect(undocumented).toEqual([]);
    });
});
