import { runTestPart } from "./helpers/test-group";

runTestPart(7);
