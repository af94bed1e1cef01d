/** The repository root, for every test (the one definition is the real tier's toolchain's). */
export { REPO_ROOT as ROOT } from "../../scripts/real/toolchain";
