/**
 * cluster-platform: the Pulumi program an admin runs once per cluster.
 *
 * Reads and validates the whole stack config (every problem reported at once, nothing
 * registered while any remains), then composes one component per capability.
 */
import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { Certificates } from "./components/certificates";
import { sectionsFromPulumiConfig, StackConfig, validateStackConfig } from "./components/config";
import { Operators, OperatorsPlan, planOperators } from "./components/operator";
import { ClusterTarget } from "./components/shared/cluster";
import { formatReport, Problem } from "./components/shared/problems";

/** The validated stack config, or a RunError listing every problem (no stack trace, no resources). */
function readStackConfig(): StackConfig {
    const result = validateStackConfig(sectionsFromPulumiConfig(pulumi.runtime.allConfig()));
    for (const warning of result.warnings) {
        pulumi.log.warn(warning);
    }
    if (!result.ok) {
        throw new pulumi.RunError(formatReport(result.problems));
    }
    return result.config;
}

interface Preflight {
    operators: OperatorsPlan;
}

/** Every capability's pure pre-flight checks, run before any resource is registered. */
function preflight(config: StackConfig): Preflight {
    const operators = planOperators(config.operators, config.olm, __dirname);
    const problems: Problem[] = [...operators.problems];
    for (const warning of operators.warnings) {
        pulumi.log.warn(warning);
    }
    if (problems.length > 0) {
        throw new pulumi.RunError(formatReport(problems));
    }
    return { operators };
}

export = async function clusterPlatform(): Promise<Record<string, unknown>> {
    const config = readStackConfig();
    const checked = preflight(config);

    const cluster: ClusterTarget = {
        name: config.cluster.name,
        platform: config.cluster.platform,
        live: config.cluster.renderYamlToDirectory === undefined,
    };
    const kubernetes = new k8s.Provider("kubernetes", {
        renderYamlToDirectory: config.cluster.renderYamlToDirectory,
        context: config.cluster.kubeContext,
        enableServerSideApply: true,
    });
    // Adopts objects that already exist instead of failing on them; used only for OLM's own
    // aggregate roles, which every cluster running OLM already has.
    const adoptingKubernetes = new k8s.Provider("kubernetes-adopting", {
        renderYamlToDirectory: config.cluster.renderYamlToDirectory,
        context: config.cluster.kubeContext,
        enableServerSideApply: true,
        upsertExistingObjects: true,
    });
    const awsProvider = config.aws.enabled ? new aws.Provider("aws", { region: config.aws.region as aws.Region }) : undefined;
    void awsProvider;

    // The stack's issuer (`certificates.issuer`) and, per operator override,
    // `certificates.issuerFor(operator.certificates)`; CA bundles for `caInjection` objects.
    const certificates = new Certificates(
        "certificates",
        { settings: config.certificates, caInjection: config.caInjection, cluster },
        { providers: { kubernetes } },
    );

    new Operators(
        "operators",
        {
            plans: checked.operators.plans,
            olm: config.olm,
            cluster,
            issuerFor: (operator) => certificates.issuerFor(operator.certificates),
            adoptingProvider: adoptingKubernetes,
        },
        { providers: { kubernetes } },
    );

    return {
        clusterName: cluster.name,
        platform: cluster.platform,
        clusterAccess: cluster.live ? "live" : "render-to-directory",
        // Last, once every component has issued its certificates: read back by the next update.
        ...certificates.stackOutputs(),
    };
};
