export { AwsAssetPlan, awsAssetPlan } from "./assets";
export { AwsTags, AwsTagsArgs, TAGGED_STORAGE_CLASS } from "./component";
export { registryTrustOf } from "./config";
export { EMPTY_TAG_KEY_STATE, previousInstallTagKeys, previousTagKeyState, TagKeyState } from "./day2";
export { awsTagsOutputs, installAwsTags } from "./install";
export { propagateUserTags } from "./rules";
