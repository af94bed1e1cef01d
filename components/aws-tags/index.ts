export { AwsTags, AwsTagsArgs, TAGGED_STORAGE_CLASS } from "./component";
export { EMPTY_TAG_KEY_STATE, parseTagKeyState, TAG_KEY_STATE_OUTPUT, TagKeyState } from "./day2";
export { propagateUserTags } from "./rules";
