/** Removes, after each test file, the temporary directories its tests made (tests/helpers/temporary.ts). */
import { removeTemporaryDirectories } from "../helpers/temporary";

afterAll(removeTemporaryDirectories);
