/**
 * `@kubernetes/client-node`'s `KubeConfig` without the client's generated API.
 *
 * The pre-flight asks the cluster a handful of questions before anything is registered
 * (object-presence.ts), with the kubeconfig handling only client-node has in full: exec plugins,
 * auth providers, merged KUBECONFIG lists, in-cluster service accounts. But loading any part of
 * client-node 0.22.3 loads all of its generated API: `dist/config.js`, where `KubeConfig` lives,
 * requires `./api` (`tslib.__importStar(require("./api"))`), which re-exports `./gen/api`, about 700
 * modules. That load is about 0.5 s of CPU (`node -e 'require("@kubernetes/client-node")'`
 * 0.50-0.59 s, `dist/api` alone 0.49-0.51 s, `dist/config.js` without it 0.045 s; 2 vCPU Intel
 * Xeon), paid by every `pulumi preview` and `up` before its first registration, so on its
 * critical path (docs/performance.md, "The pre-flight without the generated API").
 *
 * `KubeConfig` never reads `./api`: config.js reads it only in the three static helpers of its
 * legacy `Config` class (`api.CoreV1Api`), called after loading if at all. So config.js is loaded
 * while a stand-in holds `./api`'s place in Node's module cache, and the stand-in leaves the cache
 * as soon as config.js has loaded: a later `require("@kubernetes/client-node")` loads the real
 * module, and config.js's own reference reads it (loading it then) on its first use. Where the
 * module cache is not Node's (jest's `require.cache` reads jest's own registry and ignores writes),
 * or config.js is loaded already, nothing is stood in for and this is the plain load.
 */
import { Module } from "node:module";
import type { KubeConfig } from "@kubernetes/client-node";

/** The package whose `KubeConfig` is loaded; its version is pinned in package.json. */
const CLIENT = "@kubernetes/client-node";

/** The two modules of the client this relies on: where `KubeConfig` lives, and what it requires but never reads. */
export const CLIENT_MODULES = { config: `${CLIENT}/dist/config.js`, api: `${CLIENT}/dist/api.js` } as const;

/**
 * A module that stands for `apiPath` while config.js loads: it answers that it is an ES module
 * (so `__importStar` hands it through unwrapped), and its first read of anything else loads the
 * real module and answers from it.
 */
function standIn(apiPath: string): Module {
    const module = new Module(apiPath);
    module.filename = apiPath;
    module.loaded = true;
    const real = (): Record<PropertyKey, unknown> => {
        // Read while config.js is still loading (it never is, see above), the stand-in steps aside first.
        if (require.cache[apiPath] === module) {
            delete require.cache[apiPath];
        }
        return require(apiPath) as Record<PropertyKey, unknown>;
    };
    module.exports = new Proxy(
        {},
        {
            get: (_target, key) => (key === "__esModule" ? true : real()[key]),
            has: (_target, key) => key in real(),
        },
    );
    return module;
}

/** client-node's `KubeConfig` class, loaded without the generated API when this process can. */
export function kubeConfigClass(): typeof KubeConfig {
    const configPath = require.resolve(CLIENT_MODULES.config);
    const apiPath = require.resolve(CLIENT_MODULES.api);
    const load = () => (require(configPath) as typeof import("@kubernetes/client-node/dist/config")).KubeConfig;
    const cache = require.cache;
    if (cache[configPath] !== undefined || cache[apiPath] !== undefined) {
        return load();
    }
    const placeholder = standIn(apiPath);
    cache[apiPath] = placeholder;
    try {
        return load();
    } finally {
        if (cache[apiPath] === placeholder) {
            delete cache[apiPath];
        }
    }
}
