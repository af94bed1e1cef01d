import * as fs from "node:fs";
import * as path from "node:path";
import { WEBHOOK_CERT_MOUNT_PATHS } from "../../components/admission-webhook/contract";
import { WEBHOOK_INPUT_PATHS } from "../../components/webhook-image";
import { webhookClusterRules } from "../../webhook/access";
import { WEBHOOK_CERT_DIR } from "../../webhook/api";
import { ROOT } from "../helpers/root";

const packageJson = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as { dependencies: Record<string, string> };

/** Every module specifier imported (at run time, not `import type`) by the files reachable from main.ts. */
function importClosure(entry: string): { files: string[]; packages: Set<string> } {
    const files: string[] = [];
    const packages = new Set<string>();
    const pending = [entry];
    while (pending.length > 0) {
        const file = pending.pop() as string;
        if (files.includes(file)) continue;
        files.push(file);
        const source = fs.readFileSync(file, "utf8");
        for (const match of source.matchAll(/^(?:import|export)\s+(?!type\b)(?:[^'"]*?from\s+)?["']([^"']+)["'];?$/gm)) {
            const specifier = match[1];
            if (specifier.startsWith(".")) pending.push(path.resolve(path.dirname(file), `${specifier}.ts`));
            else if (!specifier.startsWith("node:"))
                packages.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]);
        }
    }
    return { files: files.map((file) => path.relative(ROOT, file)).sort(), packages };
}

describe("what the server image carries", () => {
    const { files, packages } = importClosure(path.join(ROOT, "webhook/main.ts"));

    test("GIVEN the entry point WHEN its imports are followed THEN every file is inside webhook/ but the neutral modules, which import nothing", () => {
        const outside = files.filter((file) => !file.startsWith("webhook/"));
        expect(outside).toEqual(["components/shared/k8s-names.ts", "components/shared/order.ts", "components/shared/records.ts"]);
        for (const file of outside) {
            expect({ file, imports: importClosure(path.join(ROOT, file)).files }).toEqual({ file, imports: [file] });
        }
    });

    test("GIVEN the image's source-tree inputs WHEN compared with the import closure THEN they name webhook/ and exactly the neutral modules it imports", () => {
        const outside = files.filter((file) => !file.startsWith("webhook/"));
        expect(WEBHOOK_INPUT_PATHS.filter((p) => p.startsWith("components/"))).toEqual(outside);
        expect(WEBHOOK_INPUT_PATHS).toContain("webhook");
    });

    test("GIVEN the entry point WHEN its imports are followed THEN the packages are exactly production dependencies, none of Pulumi", () => {
        expect([...packages].sort()).toEqual(["@kubernetes/client-node", "pino", "prom-client"]);
        for (const name of packages) expect(Object.keys(packageJson.dependencies)).toContain(name);
    });

    test("GIVEN @kubernetes/client-node as installed WHEN required as the compiled CommonJS server requires it THEN it is CommonJS with every class the server uses", () => {
        // 1.x is ESM-only: the image's CommonJS server would depend on require(esm) support.
        const manifest = JSON.parse(fs.readFileSync(require.resolve("@kubernetes/client-node/package.json"), "utf8")) as { type?: string };
        expect(manifest.type ?? "commonjs").toBe("commonjs");
        const clientNode = require("@kubernetes/client-node") as Record<string, unknown>;
        const used = ["AuthorizationV1Api", "CoreV1Api", "CustomObjectsApi", "KubeConfig", "ListWatch", "Watch"];
        expect(used.filter((name) => typeof clientNode[name] !== "function")).toEqual([]);
    });

    test("GIVEN the default certificate directory WHEN compared with the admission-webhook contract THEN it is OLM's first mount path", () => {
        expect(WEBHOOK_CERT_DIR).toBe(WEBHOOK_CERT_MOUNT_PATHS[0]);
    });

    test("GIVEN the server's cluster-wide access rules WHEN listed THEN they are list/watch on bundles, create on SubjectAccessReviews, and Secrets only by the teams' conventional name", () => {
        expect(webhookClusterRules()).toEqual([
            { apiGroups: ["subscription.openshift.io"], resources: ["bundles", "clusterbundles"], verbs: ["list", "watch"] },
            { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
            { apiGroups: [""], resources: ["secrets"], resourceNames: ["etc-pki-entitlement"], verbs: ["get", "list", "watch"] },
        ]);
    });
});
