/**
 * The Kubernetes provider's create and delete rule, on the version the real tier runs
 * (tests/real/provider-rule.real.ts): one ConfigMap whose Pulumi name (`resource`) and object name
 * (`object`) come from config, on a provider with server-side apply and, when `upsert` is "true",
 * `upsertExistingObjects` (a key provider 4.29+ reads; older ones ignore it).
 */
"use strict";

const k8s = require("@pulumi/kubernetes");
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config();
const provider = new k8s.Provider("kubernetes", {
    context: config.require("context"),
    kubeconfig: "",
    enableServerSideApply: true,
    upsertExistingObjects: config.get("upsert") === "true",
});
new k8s.core.v1.ConfigMap(
    config.require("resource"),
    { metadata: { name: config.require("object"), namespace: config.require("namespace") }, data: { declared: "by the stack" } },
    { provider },
);
