/**
 * `npm run render -- --config <stack file or plain YAML> --out <dir> [--cluster <objects.yaml>]
 *   [--stack-outputs <outputs.json>] [--stack <name>] [--kube-version <gitVersion>]`
 *
 * Offline review of what `pulumi preview` would do (like `helm template` / `cdk synth`):
 * writes `<dir>/resources.json`, `<dir>/outputs.json` (the stack outputs, secrets as "[secret]")
 * and `<dir>/kubernetes/*.yaml`. Exit 0 on success; on
 * invalid config or any error, exit 1 with the report on stderr and no files written.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { stringify } from "yaml";
import { serverVersionOf } from "../../components/operator/min-kube-version";
import { formatReport } from "../../components/shared/problems";
import { ClusterState } from "./cluster-state";
import { readConfigFile } from "./config-file";
import { renderProgram, RenderResult } from "./render";

const USAGE =
    "usage: npm run render -- --config <Pulumi.<stack>.yaml | plain.yaml> --out <dir> [--cluster <objects.yaml>] [--stack-outputs <outputs.json>] [--stack <name>] [--kube-version <gitVersion>]";

/**
 * Why a `--kube-version` value cannot stand for the cluster's `gitVersion` (what `GET /version`
 * answers, and what CSVs' minKubeVersions are compared with: min-kube-version.ts), or undefined.
 */
export function kubeVersionProblem(value: string): string | undefined {
    const read = serverVersionOf(value);
    return "error" in read
        ? `--kube-version ${JSON.stringify(value)}: not a Kubernetes version as the API server's GET /version gives it (v<major>.<minor>.<patch>, e.g. v1.29.5 or v1.29.5-gke.100), so OLM could not read it either: ${read.error}`
        : undefined;
}

export function stackNameOf(configFile: string, explicit?: string): string {
    if (explicit) {
        return explicit;
    }
    const match = /^Pulumi\.(.+)\.ya?ml$/.exec(path.basename(configFile));
    return match ? match[1] : "render";
}

export function writeRender(result: RenderResult, outDir: string): void {
    const kubeDir = path.join(outDir, "kubernetes");
    fs.mkdirSync(outDir, { recursive: true });
    fs.rmSync(kubeDir, { recursive: true, force: true });
    fs.mkdirSync(path.join(kubeDir, "patches"), { recursive: true });
    fs.writeFileSync(path.join(outDir, "resources.json"), `${JSON.stringify(result.resources, null, 2)}\n`);
    // The stack outputs as `pulumi stack output --json` shows them after the update (certificate
    // expiry among them), so a review sees them too.
    fs.writeFileSync(path.join(outDir, "outputs.json"), `${JSON.stringify(result.stackOutputs, null, 2)}\n`);
    for (const manifest of result.manifests) {
        fs.writeFileSync(path.join(kubeDir, manifest.file), stringify(manifest.object, { lineWidth: 0 }));
    }
}

async function main(argv: string[]): Promise<number> {
    let args;
    try {
        args = parseArgs({
            args: argv,
            options: {
                config: { type: "string" },
                out: { type: "string" },
                cluster: { type: "string" },
                "stack-outputs": { type: "string" },
                stack: { type: "string" },
                "kube-version": { type: "string" },
            },
        }).values;
    } catch (error) {
        process.stderr.write(`${(error as Error).message}\n${USAGE}\n`);
        return 2;
    }
    if (!args.config || !args.out) {
        process.stderr.write(`${USAGE}\n`);
        return 2;
    }
    const kubeVersion = args["kube-version"];
    const badKubeVersion = kubeVersion === undefined ? undefined : kubeVersionProblem(kubeVersion);
    if (badKubeVersion !== undefined) {
        process.stderr.write(`${badKubeVersion}\n${USAGE}\n`);
        return 2;
    }
    const result = await renderProgram({
        config: readConfigFile(args.config),
        cluster: args.cluster ? ClusterState.fromFile(args.cluster) : undefined,
        stackOutputs: args["stack-outputs"] ? JSON.parse(fs.readFileSync(args["stack-outputs"], "utf8")) : undefined,
        stack: stackNameOf(args.config, args.stack),
        serverVersion: kubeVersion,
    });
    for (const info of result.infos) {
        process.stderr.write(`info: ${info}\n`);
    }
    for (const warning of result.warnings) {
        process.stderr.write(`warning: ${warning}\n`);
    }
    if (result.problems.length > 0) {
        process.stderr.write(`${formatReport(result.problems)}\n`);
        return 1;
    }
    if (!result.ok) {
        for (const error of result.errors) {
            process.stderr.write(`error: ${error}\n`);
        }
        return 1;
    }
    writeRender(result, args.out);
    process.stdout.write(
        `rendered ${result.resources.length} resources and ${result.manifests.length} Kubernetes objects to ${args.out}\n`,
    );
    return 0;
}

if (require.main === module) {
    main(process.argv.slice(2)).then(
        (code) => process.exit(code),
        (error) => {
            process.stderr.write(`error: ${(error as Error).stack ?? error}\n`);
            process.exit(1);
        },
    );
}
