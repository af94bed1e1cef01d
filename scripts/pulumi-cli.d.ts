/** Types of scripts/pulumi-cli.js (plain JavaScript, shared with start.js). */
export declare const EXE: string;
export declare function installedCli(env: NodeJS.ProcessEnv): string | undefined;
