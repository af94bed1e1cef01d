/**
 * Adopting existing objects with the `import` option, as docs/aws-tags.md tells admins to adopt an
 * AWS resource (tests/real/import-adoption.real.ts). A stack transformation merges labels into
 * every ConfigMap, as the tagging safety net merges tags into every taggable AWS resource, so the
 * program's inputs differ from the live object's; config `kind: configmap` imports the ConfigMap
 * `namespace/name`, `kind: clusterrole` imports the ClusterRole `name` with `rules` (JSON).
 */
"use strict";

const k8s = require("@pulumi/kubernetes");
const pulumi = require("@pulumi/pulumi");

const config = new pulumi.Config();
const merged = { team: "platform", cost: "7536" };
pulumi.runtime.registerStackTransformation(({ type, props, opts }) => {
    if (type !== "kubernetes:core/v1:ConfigMap") {
        return undefined;
    }
    return { props: { ...props, metadata: { ...props.metadata, labels: { ...merged, ...props.metadata.labels } } }, opts };
});

const provider = new k8s.Provider("cluster", { context: config.require("context"), kubeconfig: "" });
const name = config.require("name");
if (config.require("kind") === "configmap") {
    const namespace = config.require("namespace");
    new k8s.core.v1.ConfigMap(
        "adopted",
        { metadata: { name, namespace, labels: { owner: "program" } }, data: { a: "1" } },
        { provider, import: `${namespace}/${name}` },
    );
} else {
    new k8s.rbac.v1.ClusterRole("adopted", { metadata: { name }, rules: JSON.parse(config.require("rules")) }, { provider, import: name });
}
