/** Types of scripts/interrupted-state.js (plain JavaScript, shared with start.js). */
export interface StackLock {
    readonly backend: "diy" | "cloud";
    /** DIY only: the lock file (its URL as the CLI prints it, or its path), the runner's user, host, pid and start time. */
    readonly file?: string;
    readonly user?: string;
    readonly host?: string;
    readonly pid?: number;
    readonly at?: string;
    /** Its runner was on this machine and has ended: certainly an interrupted update's. */
    readonly stale?: boolean;
}
export interface PendingOperation {
    readonly type: string;
    readonly urn: string;
}
export interface Interruption {
    readonly locks: readonly StackLock[];
    readonly pending: readonly PendingOperation[];
}
export declare const CLOUD_CONFLICT: string;
export declare function locksInOutput(text: string): StackLock[] | undefined;
export declare function pendingOperations(exportText: string): PendingOperation[];
export declare function fileBackendLocks(backendUrl: string | undefined, project: string, stack: string): StackLock[] | undefined;
export declare function interruption(
    locks: readonly StackLock[] | undefined,
    pending: readonly PendingOperation[],
    host?: string,
    isAlive?: (pid: number) => boolean,
): Interruption | undefined;
export declare function leftByInterruption(found: Interruption | undefined): boolean;
export declare function recoveryMessage(stack: string, found: Interruption): string;
export declare function checkStack(options: {
    cli: string;
    cwd: string;
    stack: string;
    env: NodeJS.ProcessEnv;
    output?: string;
}): Interruption | undefined;
