export { AwsAssetPlan, awsAssetPlan, NO_AWS_ASSETS, RegistryTrust } from "./assets";
export { ImageRegistryStorage, ImageRegistryStorageArgs } from "./registry-storage";
export { AssetTagger, TaggedAssetArgs } from "./tagged-asset";
export { registryTrustOf, RegistryTrustConfig, registryTrustProblems } from "./rules";
export { WebhookImageRepository, WebhookImageRepositoryArgs } from "./webhook-repository";
