export { AwsTags, AwsTagsArgs, TAGGED_STORAGE_CLASS } from "./component";
export {
    EMPTY_TAG_KEY_STATE,
    INSTALL_TAG_KEYS_OUTPUT,
    parseInstallTagKeys,
    parseTagKeyState,
    TAG_KEY_STATE_OUTPUT,
    TagKeyState,
} from "./day2";
export { propagateUserTags } from "./rules";
