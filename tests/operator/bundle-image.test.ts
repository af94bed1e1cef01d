/**
 * docs/operators.md, *A bundle pinned by digest*: how an admin takes an operator from its bundle
 * image, run here with the same commands against a real registry (the CNCF distribution registry)
 * instead of quay.io. The bundle pushed is the sample widget operator's folder as a `FROM scratch`
 * bundle image holds it (`/manifests`).
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { promisify } from "node:util";
import { SAMPLE_CSVS } from "../helpers/operators";
import { LocalRegistry, startRegistry } from "../helpers/registry";
import { requireTools } from "../helpers/system-tools";
import { manifestNamed, renderConfig, ROOT } from "../helpers/render";

requireTools("docker-registry", "skopeo", "umoci");

const run = promisify(execFile);
const SAMPLE_BUNDLE = path.dirname(path.join(ROOT, SAMPLE_CSVS.widgets));

describe("an operator from its bundle image, pinned by digest", () => {
    let registry: LocalRegistry;
    let work: string;
    let reference: string;
    let digest: string;

    beforeAll(async () => {
        registry = await startRegistry();
        work = mkdtempSync(path.join(os.tmpdir(), "bundle-image-"));
        const build = path.join(work, "build");
        await run("umoci", ["init", "--layout", build]);
        await run("umoci", ["new", "--image", `${build}:v1.0.0`]);
        await run("umoci", ["insert", "--rootless", "--image", `${build}:v1.0.0`, SAMPLE_BUNDLE, "/manifests"]);
        reference = `${registry.host}/operators/widget-operator-bundle`;
        await run("skopeo", ["copy", "--dest-tls-verify=false", `oci:${build}:v1.0.0`, `docker://${reference}:v1.0.0`]);
        digest = (
            await run("skopeo", ["inspect", "--tls-verify=false", "--format", "{{.Digest}}", `docker://${reference}:v1.0.0`])
        ).stdout.trim();
    }, 60_000);

    afterAll(async () => {
        await registry?.stop();
        rmSync(work, { recursive: true, force: true });
    });

    test("GIVEN the bundle's digest WHEN the documented two commands extract it into the project THEN its CSV installs the operator, CRD included", async () => {
        const bundles = path.join(work, "project", "bundles", "widget-operator");
        mkdirSync(bundles, { recursive: true });
        await run("skopeo", ["copy", "--src-tls-verify=false", `docker://${reference}@${digest}`, `oci:${bundles}/image:v1.0.0`]);
        await run("umoci", ["raw", "unpack", "--rootless", "--image", `${bundles}/image:v1.0.0`, `${bundles}/v1.0.0`]);
        expect(readdirSync(path.join(bundles, "v1.0.0", "manifests")).sort()).toEqual(readdirSync(SAMPLE_BUNDLE).sort());

        const result = await renderConfig({
            cluster: { name: "test", platform: "kubernetes", kubeContext: "test" },
            operators: [
                {
                    name: "widgets",
                    csv: path.join(bundles, "v1.0.0", "manifests", "widget-operator.clusterserviceversion.yaml"),
                    namespace: "widget-operator",
                    targetNamespaces: [],
                },
            ],
        });
        expect(result.errors).toEqual([]);
        expect(manifestNamed(result, "CustomResourceDefinition", "widgets.samples.cluster-platform.io")).toBeDefined();
        expect(manifestNamed(result, "Deployment", "widget-webhook")).toBeDefined();
    });

    test("GIVEN a digest the registry does not hold WHEN it is copied THEN skopeo fails and no image is copied", async () => {
        const other = `sha256:${"0".repeat(64)}`;
        const target = path.join(work, "other");
        await expect(
            run("skopeo", ["copy", "--src-tls-verify=false", `docker://${reference}@${other}`, `oci:${target}:v1.0.0`]),
        ).rejects.toThrow(/manifest unknown/);
        // skopeo may have started the OCI layout, but it has no index: no image to unpack.
        expect(readdirSync(target)).not.toContain("index.json");
    });
});
