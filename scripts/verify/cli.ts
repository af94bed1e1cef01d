/**
 * `npm run verify -- [--stack <name>] [--cwd <project>] [--context <kube context>] [--canary <ns>/<sa>]... [--json]`
 *
 * Post-deploy verification of a stack on its live cluster, changing nothing that lasts: what the
 * stack declares comes from `pulumi stack export` and `pulumi config --json` (validated by the
 * program's config module); the cluster is only read, sent server-side dry-run creates and asked
 * SubjectAccessReviews (docs/operations.md, Verify). Exit 0 when nothing failed, 1 when a check
 * failed, 2 on a usage error or a cluster that is not the stack's.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { installedCli } from "../pulumi-cli";
import { type Canary, runChecks } from "./checks";
import { liveApi } from "./cluster";
import { declared } from "./declared";
import { exitCode, formatTable, toJson } from "./report";
import { checkIdentity, contextFor, identityObjects } from "./target";

const USAGE =
    "usage: npm run verify -- [--stack <name>] [--cwd <project>] [--context <kube context>] [--canary <namespace>/<serviceaccount>]... [--json]";

function pulumi(cli: string, args: string[], cwd: string): string {
    const r = spawnSync(cli, [...args, "--non-interactive"], { cwd, encoding: "utf8", maxBuffer: 512 << 20, env: process.env });
    if (r.status !== 0) throw new Error(`pulumi ${args.join(" ")} failed (exit ${r.status}): ${(r.stderr || r.stdout).trim()}`);
    return r.stdout;
}

/** `--canary team-a/builder` as a namespace and service account, or an error naming the value and the rule. */
export function parseCanary(value: string): Canary {
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?)\/([a-z0-9]([-.a-z0-9]*[a-z0-9])?)$/.exec(value);
    if (!m) throw new Error(`--canary ${JSON.stringify(value)}: expected <namespace>/<serviceaccount> (DNS-1123 names)`);
    return { namespace: m[1], serviceAccount: m[3] };
}

async function main(): Promise<number> {
    const { values } = parseArgs({
        options: {
            stack: { type: "string" },
            cwd: { type: "string" },
            context: { type: "string" },
            canary: { type: "string", multiple: true },
            json: { type: "boolean" },
            help: { type: "boolean" },
        },
    });
    if (values.help) {
        console.log(USAGE);
        return 0;
    }
    const canaries = (values.canary ?? []).map(parseCanary);
    const project = path.resolve(values.cwd ?? process.cwd());
    const cli = installedCli(process.env);
    if (!cli) throw new Error("no pulumi CLI on PATH (npm's launcher is not used): install it, https://www.pulumi.com/docs/install/");
    const stack = values.stack ?? pulumi(cli, ["stack", "--show-name"], project).trim();
    const d = declared(
        stack,
        JSON.parse(pulumi(cli, ["stack", "export", "--stack", stack], project)),
        JSON.parse(pulumi(cli, ["config", "--stack", stack, "--json"], project)),
    );

    const { KubeConfig } = await import("@kubernetes/client-node");
    const kc = new KubeConfig();
    const cluster = d.config.cluster;
    if (cluster.inCluster) kc.loadFromCluster();
    else if (cluster.kubeconfig) kc.loadFromFile(path.resolve(project, cluster.kubeconfig));
    else kc.loadFromDefault();
    const context = contextFor(stack, cluster, values.context, kc.getCurrentContext() || undefined);
    if (context) {
        if (!kc.getContextObject(context))
            throw new Error(`kube context "${context}" is not in the kubeconfig (${process.env.KUBECONFIG ?? "~/.kube/config"})`);
        kc.setCurrentContext(context);
    }
    const api = await liveApi(kc);
    const recorded = identityObjects(d.objects);
    const live = new Map<string, string | undefined>();
    for (const o of recorded) {
        const plural = o.kind === "Namespace" ? "/api/v1/namespaces" : "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";
        live.set(`${o.kind} ${o.name}`, (await api.get(`${plural}/${o.name}`))?.metadata?.uid);
    }
    checkIdentity(stack, kc.getCurrentContext(), recorded, live);

    const rows = await runChecks(d, api, canaries);
    console.log(values.json ? toJson(stack, kc.getCurrentContext(), rows) : formatTable(stack, kc.getCurrentContext(), rows));
    return exitCode(rows);
}

if (require.main === module) {
    main().then(
        (code) => process.exit(code),
        (error: Error) => {
            console.error(`verify: ${error.message}`);
            process.exit(2);
        },
    );
}
