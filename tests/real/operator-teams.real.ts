/**
 * One operator installed per team (issue 35, points 2 and 4) on the real engine, provider and API
 * server: the sample widget bundle with its admission webhooks, OwnNamespace in two namespaces.
 * The installs share the CRD, OLM's per-API aggregate roles and the fixed-name serving-certificate
 * bindings (components/operator/shared-objects.ts); one of those roles is made beforehand as OLM
 * makes it, so the stack must adopt it (components/shared/adoption.ts). Each install's webhook
 * ServiceAccount must hold the bindings' grants, checked by the API server (SubjectAccessReview
 * through `kubectl auth can-i`), and removing the first install (the one that declares the shared
 * objects) must hand them to the other without touching its grants or its Deployment.
 */
import { applyObjects, getObject, kubectlRun, type KubeObject } from "./helpers/kubectl";
import { operatorsOnlyStack, widgetBundle } from "./helpers/fixtures";
import { describe as explain, TestStack } from "./helpers/stack";

const CRD = "widgets.samples.cluster-platform.io";
const TEAMS = ["teams-a", "teams-b"] as const;
/** OLM's name for the per-API view role of the CSV's first owned entry (operatorgroup.go). */
const OLM_ROLE = `${CRD}-v1-view`;
const SERVICE = "widget-webhook-service";

let stack: TestStack;
let csvPath: string;

function config(teams: readonly string[]): Record<string, unknown> {
    return operatorsOnlyStack(
        teams.map((team) => ({ name: team, csv: csvPath, namespace: team, createNamespace: true, targetNamespaces: [team] })),
    );
}

/** The webhook ServiceAccount of `team`'s install. */
const webhookAccount = (team: string) => `system:serviceaccount:${team}:widget-webhook`;

/** The API server's answer (SubjectAccessReview) to `team`'s webhook ServiceAccount: may it review tokens (auth-delegator), may it read the authentication ConfigMap (auth-reader)? */
function grants(team: string): string[] {
    return [
        ["create", "tokenreviews.authentication.k8s.io"],
        ["get", "configmaps/extension-apiserver-authentication", "-n", "kube-system"],
    ].map((request) => kubectlRun(["auth", "can-i", ...request], { as: webhookAccount(team) }).stdout.trim());
}

function subjects(kind: string, name: string, namespace?: string): string[] {
    return ((getObject(kind, name, namespace)?.subjects ?? []) as KubeObject[]).map((s) => `${s.namespace}/${s.name}`).sort();
}

function upAndSettle(): void {
    const applied = stack.up();
    expect({ status: applied.status, output: applied.status === 0 ? "" : explain(applied) }).toEqual({ status: 0, output: "" });
    const again = stack.preview(["--expect-no-changes"]);
    expect({ status: again.status, output: again.status === 0 ? "" : explain(again) }).toEqual({ status: 0, output: "" });
}

beforeAll(() => {
    // The bundle with its admission webhooks only (no backend runs to convert), installable per namespace.
    csvPath = widgetBundle("widgets-teams", (csv, manifests) => {
        csv.spec.installModes = (csv.spec.installModes as KubeObject[]).map((mode) => ({ ...mode, supported: true }));
        csv.spec.webhookdefinitions = (csv.spec.webhookdefinitions as KubeObject[]).filter((w) => w.type !== "ConversionWebhook");
        for (const object of manifests.values()) {
            if (object.kind === "CustomResourceDefinition") {
                delete object.spec.conversion;
            }
        }
    });
    stack = new TestStack("operator-teams", config(TEAMS));
});

afterAll(() => {
    stack?.destroy();
    // CRDs are kept on destroy: the test removes what it made (the role it made beforehand is in the ledger).
    kubectlRun(["delete", "crd", CRD, "--ignore-not-found"]);
});

describe("one operator per team (issue 35, points 2 and 4)", () => {
    test("GIVEN a per-API role OLM made WHEN two teams install the bundle THEN the role is adopted (same uid), each team's webhook ServiceAccount is a subject of the one shared binding and holds its grants, and the next preview is empty", () => {
        // As OLM makes it for this bundle (operatorgroup.go, ensureClusterRolesForCSV): the same rule, aggregated to view.
        applyObjects([
            {
                apiVersion: "rbac.authorization.k8s.io/v1",
                kind: "ClusterRole",
                metadata: { name: OLM_ROLE, labels: { "rbac.authorization.k8s.io/aggregate-to-view": "true" } },
                rules: [{ apiGroups: ["samples.cluster-platform.io"], resources: ["widgets"], verbs: ["get", "list", "watch"] }],
            },
        ]);
        const made = getObject("clusterrole", OLM_ROLE)?.metadata.uid;
        upAndSettle();
        const adopted = getObject("clusterrole", OLM_ROLE);
        expect(adopted?.metadata.uid).toBe(made);
        // Now the stack's too: its labels on it beside OLM's.
        expect(adopted?.metadata.labels["cluster-platform.io/operator"]).toBe(TEAMS[0]);

        const everyTeam = TEAMS.map((team) => `${team}/widget-webhook`);
        expect(subjects("clusterrolebinding", `${SERVICE}-system:auth-delegator`)).toEqual(everyTeam);
        expect(subjects("rolebinding", `${SERVICE}-auth-reader`, "kube-system")).toEqual(everyTeam);
        expect(TEAMS.map(grants)).toEqual(TEAMS.map(() => ["yes", "yes"]));
    });

    test("GIVEN both installed WHEN the first team's install (the one declaring the shared objects) is removed THEN the other keeps its Deployment, the CRD and its grants, the bindings name it alone, and the next preview is empty", () => {
        const [gone, kept] = TEAMS;
        const deployment = getObject("deployment", "widget-webhook", kept)?.metadata.uid;
        const crd = getObject("crd", CRD)?.metadata.uid;
        stack.setConfig(config([kept]));
        upAndSettle();
        expect([getObject("deployment", "widget-webhook", kept)?.metadata.uid, getObject("crd", CRD)?.metadata.uid]).toEqual([
            deployment,
            crd,
        ]);
        expect(subjects("clusterrolebinding", `${SERVICE}-system:auth-delegator`)).toEqual([`${kept}/widget-webhook`]);
        expect(subjects("rolebinding", `${SERVICE}-auth-reader`, "kube-system")).toEqual([`${kept}/widget-webhook`]);
        expect([grants(kept), grants(gone)]).toEqual([
            ["yes", "yes"],
            ["no", "no"],
        ]);
    });
});
