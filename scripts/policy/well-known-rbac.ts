/**
 * Writes the RBAC objects every cluster of a platform already holds, which the evaluator
 * (components/shared/rbac-well-known.ts) judges a stack against: roles a stack may bind or
 * aggregate by name without declaring them, and the bindings that make users, groups and
 * service accounts powerful. Never written by hand:
 *
 *   # Kubernetes: the bootstrap policy of the API server the lockfile's real tier runs (v1.36.3),
 *   # read from a running one (every object labelled kubernetes.io/bootstrapping=rbac-defaults)
 *   npx tsx scripts/policy/well-known-rbac.ts kubernetes --kubeconfig <file> [--kubectl <path>]
 *   # OpenShift: openshift-apiserver's bootstrap policy (its test/testdata/bootstrappolicy/*.yaml,
 *   # which its tests hold equal to the policy it creates) and the SCCs and SCC roles of
 *   # cluster-kube-apiserver-operator (bindata/bootkube/scc-manifests/), from git checkouts
 *   npx tsx scripts/policy/well-known-rbac.ts openshift --openshift-apiserver <git dir> --kube-apiserver-operator <git dir>
 *
 *   # The resources an API server serves, each kind with its plural (discovery), and those of the
 *   # CRDs the program uses without installing them (their manifests)
 *   npx tsx scripts/policy/well-known-rbac.ts api-resources --kubeconfig <file> [--kubectl <path>] [--crd <file>]...
 *
 * Both files are generated from the real tier's API server; a test holding them to it again is
 * part of the SubjectAccessReview differential, tests/real/rbac-authorizer.real.ts.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { parse } from "yaml";
// Type only: the module reads the table this script writes.
import type { ApiResource } from "../../components/shared/api-resources";

export const WELL_KNOWN_DIR = path.join(__dirname, "..", "..", "components", "shared");
export const BOOTSTRAP_LABEL = "kubernetes.io/bootstrapping=rbac-defaults";

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- API objects read as plain JSON
type Json = any;

const compactRule = (rule: Json) =>
    Object.fromEntries(
        ["apiGroups", "resources", "resourceNames", "nonResourceURLs", "verbs"]
            .filter((k) => Array.isArray(rule[k]) && rule[k].length > 0)
            .map((k) => [k, rule[k]]),
    );

/** The fields the evaluator reads, in a fixed order, so the file diffs cleanly. */
export function normalize(items: readonly Json[]): { clusterRoles: Json[]; roles: Json[]; bindings: Json[] } {
    const byName = (a: Json, b: Json) =>
        `${a.namespace ?? ""}/${a.name}`.localeCompare(`${b.namespace ?? ""}/${b.name}`) || (a.kind ?? "").localeCompare(b.kind ?? "");
    const labels = (o: Json) => (o.metadata.labels && Object.keys(o.metadata.labels).length > 0 ? { labels: o.metadata.labels } : {});
    return {
        clusterRoles: items
            .filter((o) => o.kind === "ClusterRole")
            .map((o) => ({
                name: o.metadata.name,
                ...labels(o),
                ...(o.aggregationRule ? { aggregationRule: { clusterRoleSelectors: o.aggregationRule.clusterRoleSelectors ?? [] } } : {}),
                // An aggregated role's rules are the aggregation controller's, over whatever the cluster holds: not part of the policy.
                rules: o.aggregationRule ? [] : (o.rules ?? []).map(compactRule),
            }))
            .sort(byName),
        roles: items
            .filter((o) => o.kind === "Role")
            .map((o) => ({ namespace: o.metadata.namespace, name: o.metadata.name, rules: (o.rules ?? []).map(compactRule) }))
            .sort(byName),
        bindings: items
            .filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")
            .map((o) => ({
                kind: o.kind,
                name: o.metadata.name,
                ...(o.metadata.namespace ? { namespace: o.metadata.namespace } : {}),
                roleRef: { kind: o.roleRef.kind, name: o.roleRef.name },
                subjects: (o.subjects ?? []).map((s: Json) => ({
                    kind: s.kind,
                    name: s.name,
                    ...(s.namespace ? { namespace: s.namespace } : {}),
                })),
            }))
            .sort(byName),
    };
}

function kubernetes(kubeconfig: string, kubectl: string): Json {
    const list = (kinds: string) =>
        JSON.parse(
            execFileSync(kubectl, ["--kubeconfig", kubeconfig, "get", kinds, "-A", "-l", BOOTSTRAP_LABEL, "-o", "json"], {
                encoding: "utf8",
                maxBuffer: 64 << 20,
            }),
        ).items as Json[];
    const version = JSON.parse(execFileSync(kubectl, ["--kubeconfig", kubeconfig, "version", "-o", "json"], { encoding: "utf8" }))
        .serverVersion.gitVersion as string;
    const items = list(
        "clusterroles.rbac.authorization.k8s.io,clusterrolebindings.rbac.authorization.k8s.io,roles.rbac.authorization.k8s.io,rolebindings.rbac.authorization.k8s.io",
    );
    return {
        source: `kube-apiserver ${version}: every object labelled ${BOOTSTRAP_LABEL} (plugin/pkg/auth/authorizer/rbac/bootstrappolicy), read from the real tier's cluster with the kube-controller-manager of the same version running (its controller roles and their aggregation settled)`,
        ...normalize(items),
    };
}

const gitShow = (dir: string, file: string) =>
    execFileSync("git", ["--git-dir", dir, "show", `HEAD:${file}`], { encoding: "utf8", maxBuffer: 64 << 20 });
const gitHead = (dir: string) => execFileSync("git", ["--git-dir", dir, "rev-parse", "HEAD"], { encoding: "utf8" }).trim();
const gitFiles = (dir: string, folder: string) =>
    execFileSync("git", ["--git-dir", dir, "ls-tree", "--name-only", "HEAD", `${folder}/`], { encoding: "utf8" })
        .trim()
        .split("\n");

/**
 * What makes an SCC privileged: it admits a pod the restricted-v2 SCC (what every authenticated
 * user may use) refuses in a way that reaches the node: privileged containers, host namespaces,
 * ports or paths, any UID (root), or capabilities beyond NET_BIND_SERVICE (outside a pod user namespace).
 */
export function sccPrivileges(scc: Json): string[] {
    const found: string[] = [];
    if (scc.allowPrivilegedContainer) found.push("privileged containers");
    if (scc.allowHostNetwork) found.push("the host network");
    if (scc.allowHostPID) found.push("the host PID namespace");
    if (scc.allowHostIPC) found.push("the host IPC namespace");
    if (scc.allowHostPorts) found.push("host ports");
    if (scc.allowHostDirVolumePlugin) found.push("hostPath volumes");
    // In a pod user namespace (userNamespaceLevel RequirePodLevel) UID 0 and capabilities stay inside it (nested-container's own description).
    const ownUserNamespace = scc.userNamespaceLevel === "RequirePodLevel";
    if (scc.runAsUser?.type === "RunAsAny" && !ownUserNamespace) found.push("any UID, root included");
    const extra = (scc.allowedCapabilities ?? []).filter((c: string) => c !== "NET_BIND_SERVICE");
    if (extra.length > 0 && !ownUserNamespace) found.push(`capabilities ${extra.join(", ")}`);
    return found;
}

/**
 * The manifest without its metadata.annotations block: one SCC's description is a quoted scalar
 * whose continuation lines are not indented past its key, which Go's YAML reader takes and the
 * `yaml` package's stricter one does not; annotations are not read here.
 */
function withoutAnnotations(text: string): string {
    const out: string[] = [];
    let skipping = -1;
    for (const line of text.split("\n")) {
        const indent = line.length - line.trimStart().length;
        if (skipping >= 0 && (line.trim() === "" || indent > skipping)) {
            continue;
        }
        skipping = /^\s*annotations:\s*$/.test(line) ? indent : -1;
        if (skipping < 0) {
            out.push(line);
        }
    }
    return out.join("\n");
}

function openshift(apiserverDir: string, operatorDir: string): Json {
    const policy = "test/testdata/bootstrappolicy";
    const items = [
        "bootstrap_cluster_roles",
        "bootstrap_cluster_role_bindings",
        "bootstrap_namespace_roles",
        "bootstrap_namespace_role_bindings",
    ].flatMap((f) => (parse(gitShow(apiserverDir, `${policy}/${f}.yaml`)).items ?? []) as Json[]);
    const sccDir = "bindata/bootkube/scc-manifests";
    const manifests = gitFiles(operatorDir, sccDir)
        .filter((f) => f.endsWith(".yaml"))
        .map((f) => parse(withoutAnnotations(gitShow(operatorDir, f))) as Json);
    const sccs = manifests
        .filter((o) => o.kind === "SecurityContextConstraints")
        .map((o) => ({ name: o.metadata.name, admits: sccPrivileges(o) }))
        .sort((a, b) => a.name.localeCompare(b.name));
    return {
        source: `openshift/openshift-apiserver@${gitHead(apiserverDir)} ${policy}/*.yaml (the bootstrap policy openshift-apiserver creates) and openshift/cluster-kube-apiserver-operator@${gitHead(operatorDir)} ${sccDir}/ (SCCs, their system:openshift:scc:<name> roles and bindings)`,
        ...normalize([...items, ...manifests.filter((o) => o.kind !== "SecurityContextConstraints")]),
        sccs,
    };
}

/** One resource of the discovery documents (`/api/v1`, `/apis/<group>/<version>`), subresources left out. */
export type ApiResourceEntry = ApiResource;

/** Every resource the API server's discovery lists, in group, version, plural order. */
export function discoveredResources(get: (path: string) => Json): ApiResourceEntry[] {
    const versions: { group: string; version: string; path: string }[] = [
        ...(get("/api").versions as string[]).map((version) => ({ group: "", version, path: `/api/${version}` })),
        ...(get("/apis").groups as Json[]).flatMap((g) =>
            (g.versions as Json[]).map((v) => ({
                group: g.name as string,
                version: v.version as string,
                path: `/apis/${g.name}/${v.version}`,
            })),
        ),
    ];
    return versions
        .flatMap(({ group, version, path: p }) =>
            ((get(p).resources ?? []) as Json[])
                .filter((r) => !String(r.name).includes("/"))
                .map((r) => ({
                    group,
                    version,
                    kind: r.kind as string,
                    plural: r.name as string,
                    singular: (r.singularName as string) || "",
                    namespaced: r.namespaced === true,
                })),
        )
        .sort((a, b) => `${a.group}/${a.version}/${a.plural}`.localeCompare(`${b.group}/${b.version}/${b.plural}`));
}

/** The resources a CRD manifest defines, one per served version. */
export function crdResources(crd: Json): ApiResourceEntry[] {
    const spec = crd?.spec ?? {};
    return ((spec.versions ?? []) as Json[])
        .filter((v) => v.served !== false)
        .map((v) => ({
            group: spec.group,
            version: v.name,
            kind: spec.names.kind,
            plural: spec.names.plural,
            singular: spec.names.singular ?? "",
            namespaced: spec.scope === "Namespaced",
        }));
}

function apiResources(kubeconfig: string, kubectl: string, crdFiles: readonly string[]): Json {
    const get = (p: string) =>
        JSON.parse(execFileSync(kubectl, ["--kubeconfig", kubeconfig, "get", "--raw", p], { encoding: "utf8", maxBuffer: 64 << 20 }));
    const version = get("/version").gitVersion as string;
    const crds = crdFiles.flatMap((file) => crdResources(parse(fs.readFileSync(file, "utf8"))));
    return {
        source: `discovery of kube-apiserver ${version} as the real tier runs it (with the OpenShift and OLM CRDs it installs from openshift/api and operator-framework/api), and the CRD manifests of APIs the program uses without installing them: ${crdFiles.map((f) => path.basename(f)).join(", ")}`,
        discovered: discoveredResources(get),
        crds,
    };
}

function write(name: string, content: Json): void {
    const file = path.join(WELL_KNOWN_DIR, `rbac-well-known.${name}.json`);
    fs.writeFileSync(file, `${JSON.stringify(content, null, 1)}\n`);
    console.log(
        `wrote ${path.relative(process.cwd(), file)}: ${content.clusterRoles.length} ClusterRoles, ${content.roles.length} Roles, ${content.bindings.length} bindings`,
    );
}

if (require.main === module) {
    const { positionals, values } = parseArgs({
        allowPositionals: true,
        options: {
            kubeconfig: { type: "string" },
            kubectl: { type: "string", default: "kubectl" },
            "openshift-apiserver": { type: "string" },
            "kube-apiserver-operator": { type: "string" },
            crd: { type: "string", multiple: true },
        },
    });
    if (positionals[0] === "kubernetes" && values.kubeconfig) {
        write("kubernetes", kubernetes(values.kubeconfig, values.kubectl as string));
    } else if (positionals[0] === "api-resources" && values.kubeconfig) {
        const content = apiResources(values.kubeconfig, values.kubectl as string, values.crd ?? []);
        const file = path.join(WELL_KNOWN_DIR, "api-resources.table.json");
        fs.writeFileSync(file, `${JSON.stringify(content, null, 1)}\n`);
        console.log(
            `wrote ${path.relative(process.cwd(), file)}: ${content.discovered.length} discovered resources, ${content.crds.length} from CRD manifests`,
        );
    } else if (positionals[0] === "openshift" && values["openshift-apiserver"] && values["kube-apiserver-operator"]) {
        write("openshift", openshift(values["openshift-apiserver"], values["kube-apiserver-operator"]));
    } else {
        console.error(
            "usage: tsx scripts/policy/well-known-rbac.ts kubernetes --kubeconfig <file> [--kubectl <path>]\n       tsx scripts/policy/well-known-rbac.ts api-resources --kubeconfig <file> [--kubectl <path>] [--crd <file>]...\n       tsx scripts/policy/well-known-rbac.ts openshift --openshift-apiserver <git dir> --kube-apiserver-operator <git dir>",
        );
        process.exitCode = 2;
    }
}
