/**
 * The aws-native half of the tag schema against an oracle that is not this project's code: the
 * own tags property CloudFormation's resource schemas give each type, by the aws-native provider's
 * own rule (tests/aws-tags/oracle/cfn-tag-properties.json, computed from pulumi/pulumi-aws-native
 * v1.74.1's schemas: see cfn-tag-properties.ts). The schema is derived from the 1.79.0 SDK's
 * declarations, generated from newer CloudFormation schemas; the types where the two differ are
 * listed with why, and any other difference fails.
 */
import { nativeTokenOfCfnType, typeTagSpec } from "../../components/aws-tags/taggable";
import type { CfnTagOracle } from "./oracle/cfn-tag-properties";
import oracleFile from "./oracle/cfn-tag-properties.json";

const oracle = oracleFile as CfnTagOracle;
const sdkName = (cfn: string) => `${cfn[0].toLowerCase()}${cfn.slice(1)}`;

/** Differences between the 1.79.0 SDK's schema and v1.74.1's CloudFormation schemas, each explained. */
const KNOWN_DIFFERENCES: Readonly<Record<string, string>> = {
    // Tags added to the CloudFormation schema after v1.74.1: the 1.79.0 SDK's `tags` input can only come from one.
    "AWS::Glue::Connection": "tags",
    "AWS::Personalize::Dataset": "tags",
    "AWS::Personalize::DatasetGroup": "tags",
    "AWS::Personalize::Schema": "tags",
    "AWS::Personalize::Solution": "tags",
    // No tagging metadata and no Tags: the SDK's one `…Tags` property is taken for the type's own (the
    // derivation cannot tell it from Cost Explorer's `resourceTags`, which CloudFormation names as own).
    "AWS::DataZone::Project": "resourceTags",
    "AWS::DataZone::ProjectProfile": "projectResourceTags",
    "AWS::ECR::RepositoryCreationTemplate": "resourceTags",
    // `ResourceGroupTags` is named after the type, as Route 53's `HostedZoneTags` is; CloudFormation declares no tagging for it.
    "AWS::Inspector::ResourceGroup": "resourceGroupTags",
};

describe("the aws-native tag schema against CloudFormation's own schemas", () => {
    const compared = Object.entries(oracle.types)
        .map(([cfn, property]) => ({ cfn, property, token: nativeTokenOfCfnType(cfn) }))
        .filter((entry): entry is { cfn: string; property: string | null; token: string } => entry.token !== undefined);

    test("GIVEN every CloudFormation type the pinned SDK also has WHEN its own tags property is compared THEN they agree but for the listed differences", () => {
        const differences: Record<string, string> = {};
        for (const { cfn, property, token } of compared) {
            const derived = typeTagSpec(token)?.own?.path ?? null;
            if (derived !== (property === null ? null : sdkName(property))) {
                differences[cfn] = `${derived}`;
            }
        }
        console.log(
            `aws-native own tags vs ${oracle.source}: ${compared.length} types compared, ${compared.length - Object.keys(differences).length} agree, ${Object.keys(differences).length} listed differences`,
        );
        expect(differences).toEqual(KNOWN_DIFFERENCES);
        expect(compared.length).toBeGreaterThan(1400);
    });
});
