/**
 * `npm run test:real [-- --cluster existing] [jest arguments]`: the real tier (jest.real.config.js).
 *
 * By default it builds or reuses the tools and starts the hermetic cluster (tests/real/setup).
 * `--cluster existing` runs the same suite against the cluster of $KUBECONFIG with the `pulumi` on
 * PATH: it creates and deletes only its own stacks' objects and the fixtures listed in
 * docs/real-tier.md.
 */
import { spawnSync } from "node:child_process";
import * as path from "node:path";

const args = process.argv.slice(2);
const env = { ...process.env };
const at = args.indexOf("--cluster");
if (at >= 0) {
    const mode = args[at + 1];
    if (mode !== "existing" && mode !== "hermetic") {
        console.error(`test:real: --cluster takes "existing" or "hermetic", got ${JSON.stringify(mode)}`);
        process.exit(2);
    }
    env.REAL_CLUSTER = mode;
    args.splice(at, 2);
    if (mode === "existing") {
        // npm start's and the plugin-resolution tests run the tools this repository builds, which an existing
        // cluster's run does not use; the service-ca test publishes and rotates a bundle an existing
        // OpenShift's service-ca owns; the cert-manager test starts cert-manager's controllers on the
        // hermetic cluster.
        console.log(
            "test:real --cluster existing: tests/real/start.real.ts, plugins.real.ts, service-ca-bundle.real.ts and cert-manager.real.ts run only in the hermetic tier",
        );
        args.push("--testPathIgnorePatterns", "(start|service-ca-bundle|plugins|cert-manager)\\.real\\.ts$");
    }
}
const jest = require.resolve("jest/bin/jest");
const result = spawnSync(process.execPath, [jest, "--config", path.join(__dirname, "..", "..", "jest.real.config.js"), ...args], {
    stdio: "inherit",
    env,
});
process.exit(result.status ?? 1);
