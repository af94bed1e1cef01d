/**
 * Suites that run Debian tools as real peers call `requireTools` first: when one is missing the
 * suite fails before any test, with one line naming the tool and how to install it.
 */
const tools = require("../../scripts/test/system-tools.js") as {
    missingTools(tools: string[]): string[];
    missingToolMessage(tool: string): string;
};

export type DebianTool = "docker-registry" | "skopeo" | "umoci" | "htpasswd" | "openssl";

export function requireTools(...needed: DebianTool[]): void {
    const missing = tools.missingTools(needed);
    if (missing.length > 0) {
        const message = missing.map(tools.missingToolMessage).join("; ");
        const error = new Error(message);
        // The message is the whole story: no stack trace under it.
        error.stack = message;
        throw error;
    }
}
