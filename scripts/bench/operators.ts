/**
 * Benchmark of the operator pre-flight (`planOperators`): reading, parsing and validating every
 * CSV and deriving its install plan, which `pulumi preview` pays before it registers anything.
 * The floor, measured in the same run, is parsing the same files' YAML alone (the part no
 * implementation can skip); the ratio says what the checks and derivation add. Every round starts
 * with the parse cache empty, as a preview's process does (the cache serves repeated runs in one
 * process, which is not what a preview pays). The last line also gives `parses`, how many manifests
 * one more such round parsed: at least one per CSV when the round really starts cold, which a
 * test can check where a time ratio on a shared machine proves nothing.
 *
 *   npm run bench:operators [-- --rounds 20]
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
import type { OlmConfig, OperatorConfig } from "../../components/config/schema";
import { forgetParsedManifests, manifestParseCount } from "../../components/operator/bundle";
import { planOperators } from "../../components/operator/plan";

const ROOT = path.resolve(__dirname, "..", "..");
const SHARED_CSVS = path.resolve(ROOT, "..", "shared", "testdata", "csvs");
const NAMESPACED = new Set(["etcdoperator-0.9.4.clusterserviceversion.yaml", "prometheusoperator-0.22.2.clusterserviceversion.yaml"]);
const olm: OlmConfig = {
    disableOLMAggregateCRDRoles: false,
    disableAggregateCRDRoles: false,
    disableAllNamespacePermissionPromotion: false,
    manageOLMConfig: false,
};

function inputs(): { operators: OperatorConfig[]; files: string[] } {
    const examples = ["widget-operator", "backup-operator"].map((b) =>
        path.join(ROOT, "tests", "fixtures", "operators", b, "manifests", `${b}.clusterserviceversion.yaml`),
    );
    const shared = fs.existsSync(SHARED_CSVS)
        ? fs
              .readdirSync(SHARED_CSVS)
              .sort()
              .map((f) => path.join(SHARED_CSVS, f))
        : [];
    const files = [...shared, ...examples];
    const operators = files.map((file, i) => ({
        name: `op${i}`,
        csv: path.relative(ROOT, file),
        namespace: `ns${i}`,
        createNamespace: true,
        deleteCrdsOnRemoval: false,
        targetNamespaces: NAMESPACED.has(path.basename(file)) || file.includes("backup-operator") ? [`ns${i}`] : [],
    }));
    return { operators, files };
}

function time(rounds: number, run: () => void): number {
    run(); // warm-up: module loading and JIT
    const samples: number[] = [];
    for (let i = 0; i < rounds; i++) {
        const start = process.hrtime.bigint();
        run();
        samples.push(Number(process.hrtime.bigint() - start) / 1e6);
    }
    samples.sort((a, b) => a - b);
    return samples[Math.floor(samples.length / 2)];
}

const roundsArg = process.argv.indexOf("--rounds");
const rounds = roundsArg > 0 ? Number(process.argv[roundsArg + 1]) : 10;
const { operators, files } = inputs();
const bytes = files.reduce((n, f) => n + fs.statSync(f).size, 0);
const floor = time(rounds, () => files.forEach((f) => parseAllDocuments(fs.readFileSync(f, "utf8"))));
function planRound(): void {
    forgetParsedManifests();
    const result = planOperators(operators, olm, ROOT);
    if (result.problems.length > 0) {
        throw new Error(result.problems.map((p) => p.message).join("\n"));
    }
}
const plan = time(rounds, planRound);
const parsesBefore = manifestParseCount();
planRound();
const parses = manifestParseCount() - parsesBefore;
console.log(`operator pre-flight: ${operators.length} CSVs, ${(bytes / 1024).toFixed(0)} KiB, median of ${rounds} rounds`);
console.log(`  floor (YAML parse only): ${floor.toFixed(1)} ms`);
console.log(`  planOperators:           ${plan.toFixed(1)} ms`);
console.log(`  ratio: ${(plan / floor).toFixed(2)}x the floor`);
console.log(
    `bench:operators ratio=${(plan / floor).toFixed(2)} csvs=${operators.length} parses=${parses} floor_ms=${floor.toFixed(1)} plan_ms=${plan.toFixed(1)}`,
);
