import * as path from "node:path";
import { runTestFiles } from "./helpers/test-group";

runTestFiles(path.join(__dirname, "verify"));
