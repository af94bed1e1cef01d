/**
 * The Pulumi CLI (engine) this program needs. `npm run docs:config` writes the range into
 * Pulumi.yaml as `requiredPulumiVersion`, which the CLI checks itself before up, preview,
 * refresh and destroy (pulumi/pulumi pkg/cmd/pulumi/operations/up.go, ValidatePulumiVersionRange;
 * the field exists since 3.219, older CLIs ignore it), and `npm start` checks it before running.
 * Facts from pulumi/pulumi CHANGELOG.md and sdk/go/common/workspace/project.json.
 */
export interface CliRequirement {
    /** The first CLI version with the feature. */
    version: string;
    /** What in this program needs it. */
    feature: string;
}

export const PULUMI_CLI_REQUIREMENTS: readonly CliRequirement[] = [
    {
        version: "3.187.0",
        feature: "`type: object` keys in Pulumi.yaml's `config:` block (pulumi/pulumi#20129, #20132); older CLIs reject the project file",
    },
    {
        version: "3.208.0",
        feature:
            "the `replacementTrigger` resource option: the self-signed CA's private key rotates with the CA; older engines ignore the option, so the key never rotates",
    },
    {
        version: "3.226.0",
        feature:
            "replacementTrigger compared by value (pulumi/pulumi#22119): the Node.js SDK sends the trigger as an output during preview, and older engines then show the CA key replaced on every preview",
    },
];

/** The newest of the requirements: every feature above is there. */
export const MINIMUM_PULUMI_CLI_VERSION = PULUMI_CLI_REQUIREMENTS[PULUMI_CLI_REQUIREMENTS.length - 1].version;

/** Pulumi.yaml's `requiredPulumiVersion`. */
export const PULUMI_CLI_VERSION_RANGE = `>=${MINIMUM_PULUMI_CLI_VERSION}`;
