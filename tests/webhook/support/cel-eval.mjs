// Evaluates CEL expressions for the stand-in API's ValidatingAdmissionPolicies. The evaluator
// (@marcbachmann/cel-js) is ESM-only and Jest runs CommonJS, so the stand-in runs this script as a
// child process: stdin {expressions: string[], context}, stdout the results in order.
import { evaluate } from "@marcbachmann/cel-js";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (input += chunk));
process.stdin.on("end", () => {
    const { expressions, context } = JSON.parse(input);
    const results = expressions.map((expression) => {
        try {
            return { value: evaluate(expression, context) };
        } catch (error) {
            return { error: String(error && error.message ? error.message : error) };
        }
    });
    process.stdout.write(JSON.stringify(results));
});
