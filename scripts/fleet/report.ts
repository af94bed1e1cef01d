/**
 * The fleet drift report, pure: what one stack's `pulumi preview --refresh` said (its engine
 * events), turned into in sync / drifted / failed, and the report's lines, document and exit code.
 *
 * Engine events are the CLI's documented JSON (`--event-log`, `pulumi preview --json`):
 * pulumi/pulumi sdk/go/common/apitype/events.go (EngineEvent, ResourcePreEvent, StepEventMetadata
 * with `op`, `urn`, `type`, `diffs`, `detailedDiff`; DiagnosticEvent with `severity`).
 */
import type { EngineEvent, OpType } from "@pulumi/pulumi/automation";
import { byText } from "../../components/shared/order";

/** Steps that change nothing: the stack is in sync when every step is one of these. */
const UNCHANGED: ReadonlySet<OpType> = new Set<OpType>(["same", "read", "refresh", "discard", "discard-replaced"]);
/** The parts of one replacement; reported as the single `replace` they make up. */
const REPLACEMENT_PARTS: ReadonlySet<OpType> = new Set<OpType>(["create-replacement", "delete-replaced", "replace"]);

export interface DriftedResource {
    /** What `pulumi up` would do: create (deleted out of band), update, replace, delete... */
    op: OpType;
    urn: string;
    type: string;
    /** The properties that differ (detailedDiff's paths, else diffs), sorted. */
    properties: string[];
}

export type StackStatus = "in-sync" | "drifted" | "failed";

export interface StackOutcome {
    stack: string;
    status: StackStatus;
    /** Drifted: every resource `pulumi up` would change, in URN order. */
    resources: DriftedResource[];
    /** Failed: the reason's first line. */
    reason?: string;
    /** PKO Stacks of this stack that PKO marked Stalled (it retries them no more): `<name>: <reason>: <message>`. */
    stalled?: string[];
    /** Wall time of this stack's preview, in seconds. */
    seconds: number;
}

/** The resources a preview would change, one entry per URN (a replacement's parts are one `replace`). */
export function driftFrom(events: ReadonlyArray<EngineEvent>): DriftedResource[] {
    const byUrn = new Map<string, DriftedResource>();
    for (const event of events) {
        const step = event.resourcePreEvent?.metadata;
        if (step === undefined || UNCHANGED.has(step.op)) {
            continue;
        }
        const properties = Object.keys(step.detailedDiff ?? {}).length > 0 ? Object.keys(step.detailedDiff ?? {}) : (step.diffs ?? []);
        const op: OpType = REPLACEMENT_PARTS.has(step.op) ? "replace" : step.op;
        const known = byUrn.get(step.urn);
        const merged = new Set([...(known?.properties ?? []), ...properties, ...(step.keys ?? [])]);
        byUrn.set(step.urn, {
            op: known?.op === "replace" ? "replace" : op,
            urn: step.urn,
            type: step.type,
            properties: [...merged].sort(),
        });
    }
    return [...byUrn.values()].sort(byText((resource) => resource.urn));
}

/** The PKO Stack type token (pulumi.com/v1 Stack, a CustomResource). */
const PKO_STACK_TYPE = "kubernetes:pulumi.com/v1:Stack";

interface Condition {
    type?: string;
    status?: string;
    reason?: string;
    message?: string;
}

/**
 * The PKO Stacks a refreshing preview read as Stalled: PKO (2.8 and later) stops retrying a Stack
 * that failed three times, and says so with the condition `Stalled` = True in `status.conditions`
 * (known types Ready, Reconciling, Stalled: pulumi/pulumi-kubernetes-operator
 * operator/config/crd/bases/pulumi.com_stacks.yaml, also its `Stalled` printer column). The
 * refresh step's new outputs hold the live status.
 */
export function stalledFrom(events: ReadonlyArray<EngineEvent>): string[] {
    const stalled = new Map<string, string>();
    for (const event of events) {
        const step = event.resourcePreEvent?.metadata ?? event.resOutputsEvent?.metadata;
        if (step?.type !== PKO_STACK_TYPE) {
            continue;
        }
        const outputs = (step.new?.outputs ?? {}) as { metadata?: { name?: string }; status?: { conditions?: Condition[] } };
        const condition = (outputs.status?.conditions ?? []).find((c) => c.type === "Stalled" && c.status === "True");
        if (condition) {
            const name = outputs.metadata?.name ?? step.urn.slice(step.urn.lastIndexOf("::") + 2);
            stalled.set(step.urn, `${name}: ${[condition.reason, condition.message].filter((p) => p).join(": ") || "Stalled"}`);
        }
    }
    return [...stalled.values()].sort();
}

/** SGR colour sequences, in case the CLI was asked for colour. */
// eslint-disable-next-line no-control-regex
const ANSI_COLOUR = /\u001b\[[0-9;]*m/g;

/** Lines that say a command failed without saying why: the CLI's closing line, execa's wrapper. */
const UNINFORMATIVE = /^(error: (preview|update) failed|Command failed with exit code \d+: .*)$/i;

/**
 * The first line that says why a preview failed: the engine's first error diagnostic, else the
 * CLI's first `error:` line on stderr, else its first other line (the Automation API's error
 * text starts with execa's "Command failed with exit code N: <command>", which says nothing).
 */
export function failureReason(events: ReadonlyArray<EngineEvent>, stderr: string, fallback: string): string {
    const diagnostic = events.find((e) => e.diagnosticEvent?.severity === "error")?.diagnosticEvent?.message;
    const lines = [diagnostic ?? "", ...stderr.split("\n")]
        .map((line) => line.split("\n")[0].replace(ANSI_COLOUR, "").trim())
        .filter((line) => line.length > 0 && !UNINFORMATIVE.test(line));
    return (diagnostic ? lines[0] : undefined) ?? lines.find((line) => line.startsWith("error:")) ?? lines[0] ?? fallback;
}

/** A resource's name as the report shows it: `<type> <name>` from its URN. */
export function resourceLabel(resource: Pick<DriftedResource, "urn" | "type">): string {
    const name = resource.urn.slice(resource.urn.lastIndexOf("::") + 2);
    return `${resource.type} ${name}`;
}

/** One line per stack: `<stack>  in sync`, `<stack>  drifted: <n> resources: ...`, `<stack>  failed: <reason>`. */
export function formatLine(outcome: StackOutcome, width = outcome.stack.length): string {
    const line = statusLine(outcome, width);
    return outcome.stalled && outcome.stalled.length > 0
        ? `${line}; reconcile stalled (PKO retries no more): ${outcome.stalled.join("; ")}`
        : line;
}

function statusLine(outcome: StackOutcome, width: number): string {
    const name = outcome.stack.padEnd(width);
    switch (outcome.status) {
        case "in-sync":
            return `${name}  in sync`;
        case "failed":
            return `${name}  failed: ${outcome.reason ?? "unknown error"}`;
        case "drifted": {
            const count = outcome.resources.length;
            const listed = outcome.resources.map(
                (r) => `${r.op} ${resourceLabel(r)}${r.properties.length > 0 ? ` [${r.properties.join(", ")}]` : ""}`,
            );
            return `${name}  drifted: ${count} resource${count === 1 ? "" : "s"}: ${listed.join("; ")}`;
        }
    }
}

/** 1 when any stack failed or its reconcile stalled, else 2 when any drifted, else 0. */
export function exitCodeOf(outcomes: ReadonlyArray<StackOutcome>): 0 | 1 | 2 {
    if (outcomes.some((o) => o.status === "failed" || (o.stalled?.length ?? 0) > 0)) {
        return 1;
    }
    return outcomes.some((o) => o.status === "drifted") ? 2 : 0;
}

export interface FleetDocument {
    stacks: StackOutcome[];
    summary: Record<StackStatus, number>;
    exitCode: 0 | 1 | 2;
}

/** The `--json` document: the same as the lines, stacks in name order. */
export function fleetDocument(outcomes: ReadonlyArray<StackOutcome>): FleetDocument {
    const stacks = [...outcomes].sort(byText((outcome) => outcome.stack));
    const count = (status: StackStatus) => stacks.filter((o) => o.status === status).length;
    return {
        stacks,
        summary: { "in-sync": count("in-sync"), drifted: count("drifted"), failed: count("failed") },
        exitCode: exitCodeOf(stacks),
    };
}

/** The text report: one line per stack in name order, then the counts. */
export function formatReportLines(outcomes: ReadonlyArray<StackOutcome>): string[] {
    const document = fleetDocument(outcomes);
    const width = Math.max(0, ...document.stacks.map((o) => o.stack.length));
    const { summary } = document;
    const stalled = document.stacks.filter((o) => (o.stalled?.length ?? 0) > 0).length;
    return [
        ...document.stacks.map((o) => formatLine(o, width)),
        `${document.stacks.length} stacks: ${summary["in-sync"]} in sync, ${summary.drifted} drifted, ${summary.failed} failed${stalled > 0 ? `, ${stalled} with reconcile stalled` : ""}`,
    ];
}
