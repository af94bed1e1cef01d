/**
 * One program load, the way the Pulumi Node.js language host does it, up to the program's first
 * registered resource; prints `{ms, rssMb, maxRssMb}` as JSON and exits. Started by
 * scripts/bench/load.ts, with the stack config in PULUMI_CONFIG and cwd the project.
 *
 * Modes:
 * - host: as @pulumi/pulumi cmd/run/run.js (v3.260, the lockfile's) does with PULUMI_NODEJS_TYPESCRIPT=true and
 *   PULUMI_NODEJS_TSCONFIG_PATH=<tsconfig> (what the Go host sets from Pulumi.yaml's runtime
 *   options `typescript` and `tsconfig`: pulumi/pulumi sdk/nodejs/cmd/pulumi-language-nodejs/main.go):
 *   ts-node (the one @pulumi/pulumi resolves, else its vendored 7.0.1) registered with
 *   transpileOnly = $PULUMI_NODEJS_TRANSPILE_ONLY, else the tsconfig's own `noCheck`, and the
 *   host's default compiler options under the tsconfig's own.
 * - compiled: the program tsc compiled to dist/, loaded by plain node: the floor.
 */
"use strict";

const fs = require("node:fs");
const path = require("node:path");
const { performance } = require("node:perf_hooks");

const [mode, tsconfig] = process.argv.slice(2);
const root = process.cwd();

function registerLikeTheHost(tsConfigPath) {
    const tsutils = require("@pulumi/pulumi/tsutils");
    const compilerOptions = tsutils.loadTypeScriptCompilerOptions(tsConfigPath);
    const env = process.env.PULUMI_NODEJS_TRANSPILE_ONLY;
    const transpileOnly = env ? env === "true" : compilerOptions.noCheck;
    const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
    require(tsnodeRequire).register({
        compiler: typescriptRequire,
        transpileOnly,
        project: tsConfigPath,
        skipProject: !fs.existsSync(tsConfigPath),
        compilerOptions: { target: "ES2020", module: "nodenext", moduleResolution: "nodenext", sourceMap: "true", ...compilerOptions },
    });
}

function report() {
    const result = {
        ms: Math.round(performance.now()),
        rssMb: Math.round(process.memoryUsage().rss / 2 ** 20),
        maxRssMb: Math.round(process.resourceUsage().maxRSS / 1024),
    };
    process.stdout.write(`${JSON.stringify(result)}\n`);
    process.exit(0);
}

async function main() {
    const pulumi = require("@pulumi/pulumi");
    let first = true;
    await pulumi.runtime.setMocks(
        {
            newResource(args) {
                if (first) {
                    first = false;
                    report();
                }
                return { id: `${args.name}-id`, state: args.inputs };
            },
            call() {
                return {};
            },
        },
        "cluster-platform",
        "bench",
        true,
        "organization",
    );
    if (mode === "host") {
        registerLikeTheHost(tsconfig);
    }
    // Registration is asynchronous: the first mock call ends the process (report). Until then the
    // program's promises keep it alive; an unref'd timer only reports a program that never registers.
    setTimeout(() => {
        process.stderr.write("the program registered no resource in 10 minutes\n");
        process.exit(1);
    }, 600_000).unref();
    // As run.js does: the program is required, and its exported function run, inside the root stack.
    await pulumi.runtime.runInPulumiStack(async () => {
        const program = require(mode === "host" ? path.join(root, "index.ts") : path.join(root, "dist", "index.js"));
        return typeof program === "function" ? program() : program;
    });
}

main().catch((error) => {
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    process.exit(1);
});
