/**
 * `npm run policy:build [-- --out <dir>]`: each policy pack as a self-contained directory that
 * `pulumi policy publish` can upload.
 *
 * A pack's policies import the rules they judge from ../../components (one rule, one place), but
 * `pulumi policy publish` packs only the pack's own directory (`npm pack`), so the published pack
 * would lack them. This build compiles the pack's index.ts and every module it imports, with the
 * repository root as root, into `<out>/<pack>/` (keeping the repository's layout, so relative
 * imports still resolve), and writes a package.json whose `main` is the compiled entry point and
 * whose dependencies are the pack's own (@pulumi/policy, @pulumi/pulumi: JavaScript needs no
 * TypeScript), plus the pack's PulumiPolicy.yaml. Run locally, `--policy-pack policy-packs/<pack>`
 * needs none of this: the CLI runs index.ts from the checkout, where ../../components exists.
 *
 * At run time a pack may load only relative modules, node built-ins and its declared
 * dependencies; the build refuses anything else (a component module that pulled in zod, say),
 * naming the importer. Type-only imports are not loaded, so they may name the project's packages.
 */
import * as fs from "node:fs";
import { builtinModules } from "node:module";
import * as path from "node:path";
import { parseArgs } from "node:util";
import * as ts from "typescript";
import { PROJECT_ROOT } from "../render/render";
import { PACKS } from "./config";

export const PACKS_DIR = path.join(PROJECT_ROOT, "policy-packs");

interface PackageJson {
    name: string;
    version: string;
    description?: string;
    license?: string;
    dependencies: Record<string, string>;
}

/** The package a bare module specifier names (`@pulumi/pulumi/proto/x` → `@pulumi/pulumi`). */
function packageOf(specifier: string): string {
    const parts = specifier.split("/");
    return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const BUILTINS = new Set(builtinModules.flatMap((m) => [m, `node:${m}`]));

function resolveRelative(from: string, specifier: string): string {
    const base = path.resolve(path.dirname(from), specifier);
    const candidate = [base, `${base}.ts`, path.join(base, "index.ts")].find((f) => fs.existsSync(f) && fs.statSync(f).isFile());
    if (!candidate) {
        throw new Error(`${path.relative(PROJECT_ROOT, from)}: cannot resolve ${JSON.stringify(specifier)}`);
    }
    return candidate;
}

export interface PackClosure {
    /** Every repository file the pack loads at run time, relative to the project root, sorted. */
    files: string[];
    /** Packages it loads at run time (node built-ins excluded), each with the first file importing it. */
    packages: Record<string, string>;
    /**
     * Packages only type-only imports name (`import type`): no published JavaScript loads them, and
     * run from a checkout ts-node resolves their types from the project's node_modules.
     */
    typePackages: Record<string, string>;
}

/** The module specifiers a file imports or re-exports, each marked type-only or not. */
function importsOf(file: string): { specifier: string; typeOnly: boolean }[] {
    const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.ES2022, false);
    const out: { specifier: string; typeOnly: boolean }[] = [];
    for (const statement of source.statements) {
        if (ts.isImportDeclaration(statement) && ts.isStringLiteral(statement.moduleSpecifier)) {
            const clause = statement.importClause;
            const typeOnly =
                clause !== undefined &&
                (clause.isTypeOnly ||
                    (clause.name === undefined &&
                        clause.namedBindings !== undefined &&
                        ts.isNamedImports(clause.namedBindings) &&
                        clause.namedBindings.elements.length > 0 &&
                        clause.namedBindings.elements.every((e) => e.isTypeOnly)));
            out.push({ specifier: statement.moduleSpecifier.text, typeOnly });
        } else if (ts.isExportDeclaration(statement) && statement.moduleSpecifier && ts.isStringLiteral(statement.moduleSpecifier)) {
            out.push({ specifier: statement.moduleSpecifier.text, typeOnly: statement.isTypeOnly });
        } else if (
            ts.isImportEqualsDeclaration(statement) &&
            ts.isExternalModuleReference(statement.moduleReference) &&
            ts.isStringLiteral(statement.moduleReference.expression)
        ) {
            out.push({ specifier: statement.moduleReference.expression.text, typeOnly: statement.isTypeOnly });
        }
    }
    return out;
}

/** What a pack's index.ts loads at run time, transitively, and the packages its type-only imports name. */
export function packClosure(pack: string, packsDir: string = PACKS_DIR): PackClosure {
    const seen = new Set<string>();
    const packages: Record<string, string> = {};
    const typePackages: Record<string, string> = {};
    const queue = [path.join(packsDir, pack, "index.ts")];
    while (queue.length > 0) {
        const file = queue.pop() as string;
        if (seen.has(file)) {
            continue;
        }
        seen.add(file);
        if (!file.endsWith(".ts")) {
            continue;
        }
        for (const { specifier, typeOnly } of importsOf(file)) {
            if (specifier.startsWith(".")) {
                if (!typeOnly) {
                    queue.push(resolveRelative(file, specifier));
                }
            } else if (!BUILTINS.has(specifier)) {
                const into = typeOnly ? typePackages : packages;
                into[packageOf(specifier)] ??= path.relative(PROJECT_ROOT, file);
            }
        }
    }
    for (const name of Object.keys(packages)) {
        delete typePackages[name];
    }
    return { files: [...seen].map((f) => path.relative(PROJECT_ROOT, f)).sort(), packages, typePackages };
}

export function readPackageJson(pack: string, packsDir: string = PACKS_DIR): PackageJson {
    return JSON.parse(fs.readFileSync(path.join(packsDir, pack, "package.json"), "utf8")) as PackageJson;
}

/** Packages the pack imports without declaring them as dependencies: these would be missing once published. */
export function undeclaredPackages(pack: string, packsDir: string = PACKS_DIR): string[] {
    const declared = readPackageJson(pack, packsDir).dependencies;
    const { packages } = packClosure(pack, packsDir);
    return Object.entries(packages)
        .filter(([name]) => !(name in declared))
        .map(([name, importer]) => `${name} (imported by ${importer})`);
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    moduleResolution: ts.ModuleResolutionKind.Node10,
    lib: ["lib.es2022.d.ts"],
    types: ["node"],
    strict: true,
    esModuleInterop: true,
    resolveJsonModule: true,
    skipLibCheck: true,
    rootDir: PROJECT_ROOT,
};

/** Compiles `pack` into `outDir` (emptied first); returns the files written, relative to it. */
export function buildPack(pack: string, outDir: string): string[] {
    const undeclared = undeclaredPackages(pack);
    if (undeclared.length > 0) {
        throw new Error(`policy pack ${pack} imports packages its package.json does not depend on: ${undeclared.join(", ")}`);
    }
    fs.rmSync(outDir, { recursive: true, force: true });
    const program = ts.createProgram([path.join(PACKS_DIR, pack, "index.ts")], { ...COMPILER_OPTIONS, outDir });
    const emitted = program.emit();
    const errors = [...ts.getPreEmitDiagnostics(program), ...emitted.diagnostics].filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length > 0) {
        throw new Error(
            ts.formatDiagnostics(errors, {
                getCanonicalFileName: (f) => f,
                getCurrentDirectory: () => PROJECT_ROOT,
                getNewLine: () => "\n",
            }),
        );
    }
    const source = readPackageJson(pack);
    const main = path.posix.join("policy-packs", pack, "index.js");
    const packageJson = {
        name: source.name,
        version: source.version,
        description: source.description,
        license: source.license,
        main,
        dependencies: source.dependencies,
    };
    fs.writeFileSync(path.join(outDir, "package.json"), `${JSON.stringify(packageJson, null, 4)}\n`);
    fs.copyFileSync(path.join(PACKS_DIR, pack, "PulumiPolicy.yaml"), path.join(outDir, "PulumiPolicy.yaml"));
    const written: string[] = [];
    const walk = (dir: string) => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, entry.name);
            if (entry.isDirectory()) {
                walk(full);
            } else {
                written.push(path.relative(outDir, full).split(path.sep).join("/"));
            }
        }
    };
    walk(outDir);
    return written.sort();
}

function main(argv: string[]): number {
    const { out } = parseArgs({ args: argv, options: { out: { type: "string", default: path.join("dist", "policy-packs") } } }).values;
    for (const pack of PACKS) {
        const dir = path.resolve(out as string, pack);
        const files = buildPack(pack, dir);
        console.log(`built ${pack}: ${files.length} files in ${path.relative(process.cwd(), dir) || "."}`);
        console.log(`  publish with: pulumi policy publish ${path.relative(process.cwd(), dir)}`);
    }
    return 0;
}

if (require.main === module) {
    try {
        process.exitCode = main(process.argv.slice(2));
    } catch (error) {
        console.error((error as Error).message);
        process.exitCode = 1;
    }
}
