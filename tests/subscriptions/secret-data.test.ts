/**
 * No Secret's data enters what the program records or prints: every Secret in the cluster holds a
 * recognisable payload (in `data` and in kubectl's last-applied annotation), and neither the
 * render (every resource's inputs as the engine receives them, reads, checks, warnings, infos,
 * errors, stack outputs) nor the CLI's files, stdout or stderr hold it, plain or base64.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseAllDocuments, stringify } from "yaml";
import { ClusterState, KubeObject } from "../../scripts/render/cluster-state";
import { renderFile, ROOT } from "../helpers/render";
import { tsxCommand } from "../helpers/tsx";

const EXAMPLE = "examples/openshift-aws.yaml";
const CLUSTER_FILE = path.join(ROOT, "tests/fixtures/certificates/openshift-aws.cluster.yaml");
const PAYLOAD = "RECOGNISABLE-ENTITLEMENT-PAYLOAD-5f1d0c";
const b64 = (text: string) => Buffer.from(text, "utf8").toString("base64");

/** The example's cluster with every Secret's values replaced by the payload, plus Secrets in the namespaces the stack uses. */
function seededCluster(): KubeObject[] {
    const objects = parseAllDocuments(fs.readFileSync(CLUSTER_FILE, "utf8")).map((d) => d.toJS() as KubeObject);
    const extra: KubeObject[] = [
        { apiVersion: "v1", kind: "Secret", metadata: { name: "pull-secret", namespace: "openshift-config" }, data: {} },
        {
            apiVersion: "v1",
            kind: "Secret",
            metadata: { name: "subscription-injection-webhook-tls", namespace: "subscription-injection" },
            data: {},
        },
    ];
    return [...objects, ...extra].map((object) => {
        if (object.kind !== "Secret") {
            return object;
        }
        const data = { "entitlement.pem": b64(`${PAYLOAD}-cert`), "entitlement-key.pem": b64(`${PAYLOAD}-key`) };
        const lastApplied = JSON.stringify({ apiVersion: "v1", kind: "Secret", metadata: object.metadata, data });
        return {
            ...object,
            metadata: { ...object.metadata, annotations: { "kubectl.kubernetes.io/last-applied-configuration": lastApplied } },
            data,
        };
    });
}

/** Every spelling of the payload a leak could take. */
const SPELLINGS = [PAYLOAD, b64(`${PAYLOAD}-cert`), b64(`${PAYLOAD}-key`), b64(PAYLOAD).slice(0, 24)];

function expectNoPayload(text: string): void {
    for (const spelling of SPELLINGS) {
        expect(text).not.toContain(spelling);
    }
}

describe("no Secret data in what the program records or prints", () => {
    test("GIVEN every Secret holding a recognisable payload WHEN the example is rendered THEN the payload is nowhere in the render, and no Secret was read", async () => {
        const result = await renderFile(EXAMPLE, { cluster: new ClusterState(seededCluster()) });
        expect(result.errors).toEqual([]);
        expectNoPayload(JSON.stringify(result));
        expect(result.reads.filter((r) => r.type === "kubernetes:core/v1:Secret")).toEqual([]);
        expect(result.lookups).toContainEqual({
            type: "kubernetes:core/v1:Secret",
            id: "openshift-config/etc-pki-entitlement",
            presence: "present",
        });
    });

    test("GIVEN the same cluster WHEN the render CLI runs THEN neither its files nor its stdout or stderr hold the payload", () => {
        const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "secret-data-"));
        try {
            const cluster = path.join(tmp, "cluster.yaml");
            fs.writeFileSync(
                cluster,
                seededCluster()
                    .map((o) => stringify(o))
                    .join("---\n"),
            );
            const out = path.join(tmp, "out");
            const run = spawnSync(
                ...tsxCommand(path.join(ROOT, "scripts", "render", "cli.ts"), ["--config", EXAMPLE, "--cluster", cluster, "--out", out]),
                {
                    cwd: ROOT,
                    encoding: "utf8",
                },
            );
            expect(run.status).toBe(0);
            expectNoPayload(run.stdout);
            expectNoPayload(run.stderr);
            const files = fs.readdirSync(out, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
            expect(files.length).toBeGreaterThan(1);
            for (const file of files) {
                expectNoPayload(fs.readFileSync(path.join(file.parentPath, file.name), "utf8"));
            }
        } finally {
            fs.rmSync(tmp, { recursive: true, force: true });
        }
    });
});
