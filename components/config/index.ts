export * from "./schema";
export { validateStackConfig, sectionsFromPulumiConfig, ValidationResult } from "./load";
