import { runTestPart } from "./helpers/test-group";

runTestPart(5);
