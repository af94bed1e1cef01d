/**
 * A Deployment applied by the real Kubernetes provider through a kubeconfig context that
 * impersonates a ServiceAccount (tests/real/reconcile.real.ts): the provider's Deployment await
 * runs with only that ServiceAccount's permissions. Config: `context`, `namespace`, `name`.
 */
"use strict";

const k8s = require("@pulumi/kubernetes");
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config();
const provider = new k8s.Provider("as-service-account", { context: config.require("context"), kubeconfig: "" });
const labels = { app: config.require("name") };
new k8s.apps.v1.Deployment(
    "deployment",
    {
        metadata: {
            name: config.require("name"),
            namespace: config.require("namespace"),
            // An await that never syncs ends here with an error instead of after the default 10 minutes.
            annotations: { "pulumi.com/timeoutSeconds": config.require("timeoutSeconds") },
        },
        spec: {
            replicas: 1,
            selector: { matchLabels: labels },
            template: { metadata: { labels }, spec: { containers: [{ name: "app", image: "registry.invalid/await-under-role:1" }] } },
        },
    },
    { provider },
);
