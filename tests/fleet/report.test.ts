/**
 * The fleet report's judgement of one stack, from engine events recorded in the CLI's documented
 * format (tests/fixtures/fleet/recordings), and its lines, document and exit code.
 */
import { readFileSync } from "node:fs";
import * as path from "node:path";
import type { EngineEvent } from "@pulumi/pulumi/automation";
import fc from "fast-check";
import {
    driftFrom,
    exitCodeOf,
    failureReason,
    fleetDocument,
    formatLine,
    formatReportLines,
    StackOutcome,
    StackStatus,
    stalledFrom,
} from "../../scripts/fleet/report";
import { defaultConcurrency } from "../../scripts/fleet/fleet";

const RECORDINGS = path.resolve(__dirname, "..", "fixtures", "fleet", "recordings");
const URN = "urn:pulumi:recorded::cluster-platform::";

function recorded(name: string): EngineEvent[] {
    return readFileSync(path.join(RECORDINGS, `${name}.events.jsonl`), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((line) => JSON.parse(line) as EngineEvent);
}

const outcome = (stack: string, status: StackStatus): StackOutcome => ({
    stack,
    status,
    resources: [],
    seconds: 1,
    ...(status === "failed" ? { reason: "boom" } : {}),
});

describe("judging one stack's preview", () => {
    test("GIVEN a preview whose every step is same or refresh WHEN judged THEN nothing drifted", () => {
        expect(driftFrom(recorded("in-sync"))).toEqual([]);
    });

    test("GIVEN a preview that updates, re-creates and replaces WHEN judged THEN each resource is listed once, with what up would do and the properties that differ", () => {
        expect(driftFrom(recorded("drifted"))).toEqual([
            {
                op: "create",
                urn: `${URN}cluster-platform:certificates:Certificates$kubernetes:core/v1:Secret::webhook-serving-secret`,
                type: "kubernetes:core/v1:Secret",
                properties: [],
            },
            {
                op: "replace",
                urn: `${URN}cluster-platform:subscriptions:SubscriptionInjection$kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration::subscription-webhook`,
                type: "kubernetes:admissionregistration.k8s.io/v1:MutatingWebhookConfiguration",
                properties: ["metadata.name"],
            },
            {
                op: "update",
                urn: `${URN}cluster-platform:subscriptions:SubscriptionInjection$kubernetes:apps/v1:Deployment::subscription-webhook`,
                type: "kubernetes:apps/v1:Deployment",
                properties: ["spec.replicas", "spec.template.spec.containers[0].image"],
            },
        ]);
    });

    test("GIVEN a failed preview WHEN its reason is read THEN it is the first line of the engine's error, not the CLI's closing 'preview failed'", () => {
        expect(failureReason(recorded("failed"), "error: preview failed\n", "exit 255")).toBe(
            'configured Kubernetes cluster is unreachable: unable to load schema information from the API server: Get "https://api.prod-us.example.com:6443/openapi/v2?timeout=32s": dial tcp 10.0.3.7:6443: i/o timeout',
        );
        expect(failureReason([], "\u001b[31merror:\u001b[0m could not read plugin\nmore\n", "exit 255")).toBe(
            "error: could not read plugin",
        );
        expect(
            failureReason(
                [],
                "Command failed with exit code 255: pulumi stack select --stack gone\n\nerror: no stack named 'gone' found",
                "x",
            ),
        ).toBe("error: no stack named 'gone' found");
        expect(failureReason([], "", "exit 255")).toBe("exit 255");
        // A line that is not an error (a warning, progress) does not hide the error after it; with no error line, the first line says it.
        expect(failureReason([], "warning: A new version of Pulumi is available\nerror: stack 'prod' is locked\n", "x")).toBe(
            "error: stack 'prod' is locked",
        );
        expect(failureReason([], "Killed\nsomething else\n", "x")).toBe("Killed");
    });
});

describe("the report", () => {
    test("GIVEN one stack of each kind WHEN printed THEN one aligned line per stack in name order, then the counts", () => {
        const drifted: StackOutcome = { ...outcome("prod-eu", "drifted"), resources: driftFrom(recorded("drifted")).slice(2, 3) };
        expect(formatReportLines([outcome("staging", "in-sync"), drifted, outcome("dev", "failed")])).toEqual([
            "dev      failed: boom",
            "prod-eu  drifted: 1 resource: update kubernetes:apps/v1:Deployment subscription-webhook [spec.replicas, spec.template.spec.containers[0].image]",
            "staging  in sync",
            "3 stacks: 1 in sync, 1 drifted, 1 failed",
        ]);
        expect(formatLine(outcome("a", "in-sync"))).toBe("a  in sync");
    });

    test("GIVEN any mix of outcomes WHEN the exit code is taken THEN it is 1 with any failure, else 2 with any drift, else 0, and the document agrees", () => {
        fc.assert(
            fc.property(fc.array(fc.constantFrom<StackStatus>("in-sync", "drifted", "failed"), { maxLength: 12 }), (statuses) => {
                const outcomes = statuses.map((s, i) => outcome(`s${i}`, s));
                const expected = statuses.includes("failed") ? 1 : statuses.includes("drifted") ? 2 : 0;
                expect(exitCodeOf(outcomes)).toBe(expected);
                const document = fleetDocument(outcomes);
                expect(document.exitCode).toBe(expected);
                expect(document.summary["in-sync"] + document.summary.drifted + document.summary.failed).toBe(statuses.length);
            }),
        );
    });
});

describe("a reconcile PKO stopped retrying (Stalled)", () => {
    const stackEvent = (conditions: unknown[]): EngineEvent =>
        ({
            sequence: 1,
            timestamp: 0,
            resourcePreEvent: {
                metadata: {
                    op: "refresh",
                    urn: `${URN}cluster-platform:reconcile:Reconcile$kubernetes:pulumi.com/v1:Stack::reconcile-stack`,
                    type: "kubernetes:pulumi.com/v1:Stack",
                    provider: "",
                    new: {
                        type: "kubernetes:pulumi.com/v1:Stack",
                        urn: "",
                        custom: true,
                        delete: false,
                        id: "",
                        parent: "",
                        protect: false,
                        inputs: {},
                        provider: "",
                        outputs: { metadata: { name: "cluster-platform-prod-east" }, status: { conditions } },
                    },
                },
            },
        }) as unknown as EngineEvent;

    test("GIVEN a refreshed Stack whose Stalled condition is True WHEN judged THEN it is named with PKO's reason and message, the line says so and the exit code is 1", () => {
        const events = [
            stackEvent([
                { type: "Ready", status: "False", reason: "NotReady" },
                { type: "Stalled", status: "True", reason: "UpdateFailed", message: "3 consecutive failures" },
            ]),
        ];
        expect(stalledFrom(events)).toEqual(["cluster-platform-prod-east: UpdateFailed: 3 consecutive failures"]);
        const stalled: StackOutcome = { ...outcome("prod-east", "in-sync"), stalled: stalledFrom(events) };
        expect(formatLine(stalled)).toBe(
            "prod-east  in sync; reconcile stalled (PKO retries no more): cluster-platform-prod-east: UpdateFailed: 3 consecutive failures",
        );
        expect(exitCodeOf([stalled])).toBe(1);
        expect(formatReportLines([stalled])[1]).toBe("1 stacks: 1 in sync, 0 drifted, 0 failed, 1 with reconcile stalled");
    });

    test("GIVEN a Stack that is Ready, or whose Stalled condition is False WHEN judged THEN nothing is stalled", () => {
        expect(stalledFrom([stackEvent([{ type: "Ready", status: "True" }])])).toEqual([]);
        expect(stalledFrom([stackEvent([{ type: "Stalled", status: "False", reason: "X" }])])).toEqual([]);
    });
});

describe("the default concurrency", () => {
    test.each([
        [8, 3.5 * 1024 ** 3, 3],
        [2, 64 * 1024 ** 3, 2],
        [8, 0.5 * 1024 ** 3, 1],
        [1, 0, 1],
    ])(
        "GIVEN %i CPUs and %d bytes free WHEN the default is taken THEN it is %i (one per CPU, one per GB free, at least one)",
        (cpus, free, expected) => {
            expect(defaultConcurrency(cpus, free)).toBe(expected);
        },
    );
});
