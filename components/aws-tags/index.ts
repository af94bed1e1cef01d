export { AwsTags, AwsTagsArgs, TAGGED_STORAGE_CLASS } from "./component";
export { EMPTY_TAG_KEY_STATE, previousInstallTagKeys, previousTagKeyState, TagKeyState } from "./day2";
export { awsTagsOutputs, installAwsTags } from "./install";
export { propagateUserTags } from "./rules";
