/** What stack config validation says of a raw config, as the CLI prints each problem: the one helper config tests assert on. */
import { validateStackConfig } from "../../components/config";
import { formatProblem } from "../../components/shared/problems";

/** Every problem `validateStackConfig` reports for `raw`, each formatted as the CLI prints it; empty when the config is valid. */
export function configProblemLines(raw: Record<string, unknown>): string[] {
    const result = validateStackConfig(raw);
    return result.ok ? [] : result.problems.map(formatProblem);
}
