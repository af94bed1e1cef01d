/**
 * The floor of `npm run bench:policy`: a pack with one no-op resource policy and one no-op stack
 * policy, run as the CLI runs a pack (its own analyzer process), so the benchmark's ratio is what
 * the real packs' rules cost over the protocol, the SDK's argument building and the process.
 */
import { PolicyPack } from "@pulumi/policy";

new PolicyPack("no-op", {
    enforcementLevel: "mandatory",
    policies: [
        { name: "no-op-resource", description: "Does nothing.", validateResource: () => undefined },
        { name: "no-op-stack", description: "Does nothing.", validateStack: () => undefined },
    ],
});
