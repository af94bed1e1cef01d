/**
 * The aws-assets room's rules that stack config checks (pure: no Pulumi imports), the only module
 * of the room config imports (tests/toolchain/import-rules.test.ts):
 * - whom the image registry role trusts, from the `aws` section: `registryTrustProblems` runs
 *   inside the section's schema; `registryTrustOf` gives the trust of valid config to the
 *   `ImageRegistryStorage`;
 * - the planned assets (./assets.ts), whose tags config's cross-section rules check against
 *   each resource's limit before anything is created.
 */
import { RegistryTrust } from "./assets";

export { awsAssetPlan, plannedAssetResources } from "./assets";

/** The parts of the parsed `aws` section that decide whom the registry role trusts. */
export interface RegistryTrustConfig {
    enabled: boolean;
    oidcProviderArn?: string;
    imageRegistryStorage: { enabled: boolean; trustedPrincipalArn?: string };
}

/**
 * The registry role trusts exactly one thing: the cluster's OIDC provider (the registry's
 * service accounts, through web identity) or one IAM role or user the config names; never a
 * whole account. Paths are relative to the `aws` section.
 */
export function registryTrustProblems(aws: RegistryTrustConfig): { path: PropertyKey[]; message: string }[] {
    const storage = aws.imageRegistryStorage;
    if (!aws.enabled || !storage.enabled) {
        return [];
    }
    if (aws.oidcProviderArn === undefined && storage.trustedPrincipalArn === undefined) {
        return [
            {
                path: ["imageRegistryStorage", "enabled"],
                message:
                    "true needs whom the registry role trusts: set aws.oidcProviderArn (STS clusters: the image registry's service accounts, through web identity) or aws.imageRegistryStorage.trustedPrincipalArn (one IAM role or user); the stack never lets a whole account assume it",
            },
        ];
    }
    if (aws.oidcProviderArn !== undefined && storage.trustedPrincipalArn !== undefined) {
        return [
            {
                path: ["imageRegistryStorage", "trustedPrincipalArn"],
                message: "is set together with aws.oidcProviderArn: the registry role trusts exactly one of them; remove one",
            },
        ];
    }
    return [];
}

/** The registry role's trust from valid config (see `registryTrustProblems`); undefined without storage. */
export function registryTrustOf(aws: RegistryTrustConfig): RegistryTrust | undefined {
    if (!aws.imageRegistryStorage.enabled) {
        return undefined;
    }
    if (aws.oidcProviderArn !== undefined) {
        return { oidcProviderArn: aws.oidcProviderArn };
    }
    return aws.imageRegistryStorage.trustedPrincipalArn === undefined
        ? undefined
        : { principalArn: aws.imageRegistryStorage.trustedPrincipalArn };
}
