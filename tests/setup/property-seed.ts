/** Every property test runs from the one seed (tests/helpers/property-seed.ts). */
import fc from "fast-check";
import { PROPERTY_SEED } from "../helpers/property-seed";

fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: PROPERTY_SEED });
