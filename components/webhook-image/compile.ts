/**
 * Compiles the webhook at run time, for a checkout nobody built: the Pulumi Kubernetes
 * Operator's workspace clones the repository and runs `pulumi install` (npm install) and the
 * program, never `npm run build` (pulumi/pulumi-kubernetes-operator operator/internal/
 * controller/auto/workspace_controller.go: the workspace's init containers fetch the source,
 * the agent installs dependencies), while `dist/` is git-ignored.
 *
 * Why compile here rather than ship a prebuilt image or a `prepare` script: the program is
 * TypeScript, so the `typescript` package is present wherever it runs (Pulumi's Node.js
 * language host compiles the program with it, and sources.ts already reads requires with it);
 * the emit is TypeScript's own, with the options of tsconfig.build.json, file for file what
 * `npm run build` writes for the webhook (the same compiler version, pinned by the lockfile), so
 * the image PKO's run packages has the digest the admin's run published and the Deployment
 * shows no diff. An npm `prepare` script would build on every install everywhere, and a second,
 * prebuilt image would be one more thing to keep in step with the source.
 *
 * Only the webhook's files and what they import are emitted (no type-check: `npm run build` and
 * CI do that); nothing else under `dist/` is touched.
 */
import * as path from "node:path";

export interface CompileRequest {
    /** The project: tsconfig.build.json and the sources. */
    projectDirectory: string;
    /** The application's source folder, relative to the project (e.g. `webhook`). */
    application: string;
    /** The build's output directory, relative to the project (e.g. `dist`); its layout mirrors the sources'. */
    outputDirectory: string;
    /** The build's tsconfig, relative to the project. @default "tsconfig.build.json" */
    tsconfig?: string;
}

/** Emits the application's compiled files under the output directory; returns the files written. Throws with the compiler's messages. */
export function compileApplication(request: CompileRequest): string[] {
    const ts = require("typescript") as typeof import("typescript");
    const project = path.resolve(request.projectDirectory);
    const configFile = path.join(project, request.tsconfig ?? "tsconfig.build.json");
    const problems: string[] = [];
    const format = (d: import("typescript").Diagnostic) => ts.flattenDiagnosticMessageText(d.messageText, "\n");
    const parsed = ts.getParsedCommandLineOfConfigFile(
        configFile,
        {},
        { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => problems.push(format(d)) },
    );
    if (!parsed || problems.length > 0) {
        throw new Error(`cannot compile ${request.application}: ${configFile}: ${problems.join("; ") || "unreadable"}`);
    }
    const sources = path.join(project, request.application) + path.sep;
    const rootNames = parsed.fileNames.filter((file) => path.resolve(file).startsWith(sources));
    const options = {
        ...parsed.options,
        outDir: path.join(project, request.outputDirectory),
        // No build info: this emit is partial, and must not make a later `npm run build` skip files.
        incremental: false,
        tsBuildInfoFile: undefined,
        composite: false,
    };
    const program = ts.createProgram(rootNames, options);
    const written: string[] = [];
    const result = program.emit(undefined, (file, text) => {
        ts.sys.writeFile(file, text);
        written.push(file);
    });
    const errors = [...program.getSyntacticDiagnostics(), ...program.getOptionsDiagnostics(), ...result.diagnostics].filter(
        (d) => d.category === ts.DiagnosticCategory.Error,
    );
    if (errors.length > 0 || rootNames.length === 0) {
        throw new Error(`cannot compile ${request.application}: ${errors.map(format).join("; ") || `no sources under ${sources}`}`);
    }
    return written.sort();
}
