/**
 * The repository's TypeScript import graph, type-only imports and re-exports included, read with
 * the TypeScript compiler's own scanner (`ts.preProcessFile`, the one tsc uses to find a file's
 * imports), and the two questions tests/toolchain/import-rules.test.ts asks of it: which files
 * import each other in a cycle, and which imports break a layering rule. Relative specifiers only:
 * packages are not part of the house.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

/** Each file (repository-relative, `/`-separated) with the repository files it imports. */
export type ImportGraph = ReadonlyMap<string, readonly string[]>;

function sourceFiles(dir: string, out: string[]): void {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        if (entry.name === "node_modules" || entry.name === "fixtures") {
            continue;
        }
        const file = path.join(dir, entry.name);
        if (entry.isDirectory()) {
            sourceFiles(file, out);
        } else if (entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts")) {
            out.push(file);
        }
    }
}

/** The module a relative specifier names, as Node.js and tsc resolve it here (`x.ts`, `x/index.ts`), or undefined for another kind of file. */
function resolveRelative(from: string, specifier: string): string | undefined {
    const base = path.resolve(path.dirname(from), specifier);
    return [`${base}.ts`, path.join(base, "index.ts")].find((file) => fs.existsSync(file));
}

/** The import graph of `roots` (files or folders) under `repo`. */
export function importGraph(repo: string, roots: readonly string[]): ImportGraph {
    const files: string[] = [];
    for (const root of roots) {
        const full = path.join(repo, root);
        if (fs.statSync(full).isDirectory()) {
            sourceFiles(full, files);
        } else {
            files.push(full);
        }
    }
    const relative = (file: string) => path.relative(repo, file).split(path.sep).join("/");
    const graph = new Map<string, string[]>();
    for (const file of files.sort()) {
        const { importedFiles } = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, true);
        const targets = importedFiles
            .filter((imported) => imported.fileName.startsWith("."))
            .map((imported) => resolveRelative(file, imported.fileName))
            .filter((target): target is string => target !== undefined)
            .map(relative);
        graph.set(relative(file), [...new Set(targets)].sort());
    }
    return graph;
}

/** Every set of files that import each other, directly or through others (Tarjan's strongly connected components of more than one file, or a file importing itself), each sorted. */
export function importCycles(graph: ImportGraph): string[][] {
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const onStack = new Set<string>();
    const stack: string[] = [];
    const cycles: string[][] = [];
    const visit = (file: string): void => {
        index.set(file, index.size);
        low.set(file, index.get(file)!);
        stack.push(file);
        onStack.add(file);
        for (const target of graph.get(file) ?? []) {
            if (!index.has(target)) {
                visit(target);
                low.set(file, Math.min(low.get(file)!, low.get(target)!));
            } else if (onStack.has(target)) {
                low.set(file, Math.min(low.get(file)!, index.get(target)!));
            }
        }
        if (low.get(file) === index.get(file)) {
            const component: string[] = [];
            let member: string;
            do {
                member = stack.pop()!;
                onStack.delete(member);
                component.push(member);
            } while (member !== file);
            if (component.length > 1 || (graph.get(file) ?? []).includes(file)) {
                cycles.push(component.sort());
            }
        }
    };
    for (const file of graph.keys()) {
        if (!index.has(file)) {
            visit(file);
        }
    }
    return cycles.sort((a, b) => (a[0] < b[0] ? -1 : 1));
}

/** A layering rule: files matching `from` may import only files matching one of `allowed`. */
export interface ImportRule {
    readonly from: RegExp;
    readonly allowed: readonly RegExp[];
}

/** Every import that breaks a rule, as `importer -> imported`. */
export function ruleViolations(graph: ImportGraph, rules: readonly ImportRule[]): string[] {
    const violations: string[] = [];
    for (const [file, targets] of graph) {
        for (const rule of rules.filter((r) => r.from.test(file))) {
            for (const target of targets.filter((t) => !rule.allowed.some((allowed) => allowed.test(t)))) {
                violations.push(`${file} -> ${target}`);
            }
        }
    }
    return violations;
}
