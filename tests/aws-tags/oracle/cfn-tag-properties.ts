/**
 * Computes `cfn-tag-properties.json`, the oracle the aws-native half of the tag schema is checked
 * against: for every CloudFormation resource schema the aws-native provider is generated from,
 * the property that holds the resource's own tags, by the provider's own rule (pulumi/pulumi-aws-native
 * provider/pkg/schema/gen_tags.go `GetTagsProperty`: the schema's `tagging.tagProperty`, else
 * `Tags`), when the schema declares that property at the top level; null when it declares none
 * (or names one below the top level, `TagSpecifications/*\/Tags`). It reads the provider's
 * checked-in schemas, not this project's code.
 *
 * How it was computed (the Go module proxy does not serve the provider, and the npm package holds
 * no CloudFormation schemas, so the schemas come from the provider's repository at the release
 * tag v1.74.1, the newest one the stored mirror has; the pinned SDK is 1.79.0):
 *
 *   git -C <pulumi-aws-native checkout> archive v1.74.1 aws-cloudformation-schema | tar -x -C <dir>
 *   npx tsx tests/aws-tags/oracle/cfn-tag-properties.ts <dir>/aws-cloudformation-schema
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { byEntryKey } from "../../../components/shared/order";

export const ORACLE_FILE = path.join(__dirname, "cfn-tag-properties.json");

export interface CfnTagOracle {
    source: string;
    rule: string;
    /** CloudFormation type name → its own tags property (CloudFormation's name), or null. */
    types: Record<string, string | null>;
}

interface CfnSchema {
    typeName: string;
    properties?: Record<string, unknown>;
    tagging?: { tagProperty?: string };
}

export function tagPropertyOf(schema: CfnSchema): string | null {
    const declared = schema.tagging?.tagProperty;
    const name = declared === undefined ? "Tags" : declared.replace(/^#/, "").replace(/^\/properties\//, "");
    return !name.includes("/") && schema.properties?.[name] !== undefined ? name : null;
}

if (require.main === module) {
    const dir = process.argv[2];
    if (!dir) {
        console.error("usage: npx tsx tests/aws-tags/oracle/cfn-tag-properties.ts <aws-cloudformation-schema directory>");
        process.exit(2);
    }
    const types: Record<string, string | null> = {};
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".json"))) {
        const schema = JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")) as CfnSchema;
        types[schema.typeName] = tagPropertyOf(schema);
    }
    const oracle: CfnTagOracle = {
        source: "pulumi/pulumi-aws-native v1.74.1 (7dbe9edbfd9301f41a90881c9aa632991fab26f2) aws-cloudformation-schema",
        rule: "tagging.tagProperty, else Tags (provider/pkg/schema/gen_tags.go GetTagsProperty), when declared as a top-level property; else null",
        types: Object.fromEntries(Object.entries(types).sort(byEntryKey)),
    };
    fs.writeFileSync(ORACLE_FILE, `${JSON.stringify(oracle, null, 1)}\n`);
    console.log(`${ORACLE_FILE}: ${Object.keys(types).length} CloudFormation types`);
}
