/**
 * Reads an operator bundle from disk as OLM's bundle parser (opm) reads it: the
 * ClusterServiceVersion named in config and, from the same folder (a registry+v1 bundle's
 * `manifests/`), the CRD manifests of the APIs it owns and every other object OLM installs with it.
 * Pure apart from reading files; reports every problem with the file and field.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { goDecodeManifest, goDocumentCount } from "../shared/go-yaml";
import { describeValue } from "../shared/problems";
import { ClusterServiceVersion, csvFromDocument, CsvProblem } from "./csv";

/** A CRD manifest shipped next to the CSV. */
export interface CrdManifest {
    /** File name inside the bundle folder. */
    file: string;
    object: CrdObject;
}

/** The fields of an apiextensions.k8s.io/v1 CustomResourceDefinition the install reads. */
export interface CrdObject {
    apiVersion: string;
    kind: "CustomResourceDefinition";
    metadata: { name: string; [key: string]: unknown };
    spec: {
        group: string;
        names: { plural: string; kind: string; [key: string]: unknown };
        versions: { name: string; served: boolean; storage: boolean; [key: string]: unknown }[];
        preserveUnknownFields?: boolean;
        conversion?: unknown;
        [key: string]: unknown;
    };
}

/** An object of the bundle folder other than the CSV and the CRDs: OLM installs it with the operator (bundle-objects.ts). */
export interface BundleObject {
    /** File name inside the bundle folder. */
    file: string;
    apiVersion: string;
    kind: string;
    name: string;
    /** The object as OLM decodes it (frozen: one parse serves many runs). */
    object: Readonly<Record<string, unknown>>;
}

export interface LoadedBundle {
    /** The CSV path as configured (for messages). */
    csvFile: string;
    csv: ClusterServiceVersion;
    /** CRD manifests found next to the CSV, by CRD name. */
    crds: Map<string, CrdManifest>;
    /** The folder's other objects, in file order (OLM's bundle order). */
    objects: BundleObject[];
    /** What OLM's bundle parser leaves out of the folder, and why, for a warning. */
    skipped: string[];
}

export type BundleLoadResult = { ok: true; bundle: LoadedBundle } | { ok: false; problems: CsvProblem[] };

/**
 * One manifest file as opm reads it (operator-registry `pkg/registry/parse.go`, `decode.go`): its
 * first document only, decoded as the Go tooling decodes it (components/shared/go-yaml.ts).
 */
interface ParsedManifest {
    /** Why Go's decoder refuses the file (opm then leaves it out of the bundle). */
    error?: string;
    /** The object; null for a file with no object (only comments): opm adds nothing for it. */
    object: Readonly<Record<string, unknown>> | null;
    /** Documents after the first, which opm ignores ("found more than one document ... using only the first one"). */
    extraDocuments: number;
}

/**
 * Reads manifest files once per pre-flight: operators whose CSVs share a folder (or a folder
 * of many CSVs, like the test data) would otherwise parse every sibling again.
 */
export class ManifestReader {
    private readonly documents = new Map<string, ParsedManifest>();

    read(file: string): ParsedManifest {
        let parsed = this.documents.get(file);
        if (!parsed) {
            parsed = parsedManifest(fs.readFileSync(file, "utf8"));
            this.documents.set(file, parsed);
        }
        return parsed;
    }
}

/**
 * Parsed manifests by content. The render, the tests and an Automation API host run the program
 * many times in one process, and a bundle's YAML (kubevirt's CSV is 145 kB) costs far more to
 * parse than to read and hash. Keyed by content, so an edited file is parsed again; frozen,
 * because one parse serves many runs.
 */
const PARSED_BY_CONTENT = new Map<string, ParsedManifest>();
const PARSED_CACHE_ENTRIES = 256;
let manifestParses = 0;

/** Empties the cache: each `pulumi preview` starts in a new process, so its first parse is cold (scripts/bench/operators.ts). */
export function forgetParsedManifests(): void {
    PARSED_BY_CONTENT.clear();
}

/** How many manifests this process has parsed (cache misses): the benchmark's proof that a round parsed cold. */
export function manifestParseCount(): number {
    return manifestParses;
}

function parsedManifest(text: string): ParsedManifest {
    const key = createHash("sha256").update(text).digest("hex");
    let parsed = PARSED_BY_CONTENT.get(key);
    if (!parsed) {
        manifestParses++;
        const decoded = goDecodeManifest(text);
        const extraDocuments = Math.max(0, goDocumentCount(text) - 1);
        parsed = deepFreeze(
            decoded.ok
                ? { object: decoded.value as Record<string, unknown> | null, extraDocuments }
                : { error: decoded.error, object: null, extraDocuments },
        );
        if (PARSED_BY_CONTENT.size >= PARSED_CACHE_ENTRIES) {
            PARSED_BY_CONTENT.delete(PARSED_BY_CONTENT.keys().next().value as string);
        }
        PARSED_BY_CONTENT.set(key, parsed);
    }
    return parsed;
}

function deepFreeze<T>(value: T): T {
    if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
        Object.freeze(value);
        for (const member of Object.values(value)) {
            deepFreeze(member);
        }
    }
    return value;
}

/** Loads the CSV at `csvFile` (resolved against `projectRoot`) and its bundle folder. */
export function loadBundle(projectRoot: string, csvFile: string, reader: ManifestReader = new ManifestReader()): BundleLoadResult {
    const csvPath = path.resolve(projectRoot, csvFile);
    let manifest: ParsedManifest;
    try {
        manifest = reader.read(csvPath);
    } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (error as Error).message;
        return { ok: false, problems: [{ field: "", message: `cannot read ${csvPath}: ${reason}` }] };
    }
    if (manifest.error !== undefined) {
        return {
            ok: false,
            problems: [
                {
                    field: "",
                    message: `is not valid YAML as OLM's Go tooling reads it (so OLM finds no CSV in the bundle): ${manifest.error}`,
                },
            ],
        };
    }
    if (manifest.object === null) {
        return { ok: false, problems: [{ field: "", message: "holds no object (OLM finds no CSV in the bundle)" }] };
    }
    const parsed = csvFromDocument(manifest.object);
    if (!parsed.ok) {
        return parsed;
    }
    const folder = siblingManifests(csvPath, reader);
    if (!folder.ok) {
        return folder;
    }
    const skipped = [
        ...(manifest.extraDocuments > 0 ? [extraDocumentsNote(path.basename(csvPath), manifest.extraDocuments)] : []),
        ...folder.skipped,
    ];
    return { ok: true, bundle: { csvFile, csv: parsed.csv, crds: folder.crds, objects: folder.objects, skipped } };
}

function extraDocumentsNote(file: string, count: number): string {
    return `${describeValue(file)}: ${count} document${count === 1 ? "" : "s"} after the first, which OLM's bundle parser ignores (it reads one object per file)`;
}

type FolderResult =
    { ok: true; crds: Map<string, CrdManifest>; objects: BundleObject[]; skipped: string[] } | { ok: false; problems: CsvProblem[] };

/**
 * Every other file of the folder as opm reads it (`addManifests`): files and dot-files aside,
 * each file's first object; a file Go cannot decode is left out (opm logs "failed to decode" and
 * goes on), as is a file with no object.
 */
function siblingManifests(csvPath: string, reader: ManifestReader): FolderResult {
    const directory = path.dirname(csvPath);
    const crds = new Map<string, CrdManifest>();
    const objects: BundleObject[] = [];
    const skipped: string[] = [];
    const problems: CsvProblem[] = [];
    const files = fs
        .readdirSync(directory)
        .filter((f) => !f.startsWith(".") && path.join(directory, f) !== csvPath)
        .sort();
    for (const file of files) {
        const full = path.join(directory, file);
        if (!fs.statSync(full).isFile()) {
            continue;
        }
        const manifest = reader.read(full);
        if (manifest.error !== undefined) {
            skipped.push(`${describeValue(file)}: not a Kubernetes object as OLM's Go tooling decodes it (${manifest.error})`);
            continue;
        }
        if (manifest.extraDocuments > 0) {
            skipped.push(extraDocumentsNote(file, manifest.extraDocuments));
        }
        const object = manifest.object as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } } | null;
        if (!object) {
            continue;
        }
        const kind = object.kind as string;
        const name = typeof object.metadata?.name === "string" ? object.metadata.name : "";
        if (kind === "ClusterServiceVersion") {
            continue; // opm reads one CSV; the configured one is the bundle's (a folder of CSVs in the test data)
        }
        if (kind !== "CustomResourceDefinition") {
            objects.push({
                file,
                apiVersion: typeof object.apiVersion === "string" ? object.apiVersion : "",
                kind,
                name,
                object: manifest.object!,
            });
            continue;
        }
        const problem = crdShapeProblem(object);
        if (problem) {
            problems.push({
                field: "",
                message: `bundle file ${describeValue(file)}: CustomResourceDefinition ${describeValue(name)} ${problem}`,
            });
            continue;
        }
        crds.set(name, { file, object: object as unknown as CrdObject });
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, crds, objects, skipped };
}

function crdShapeProblem(object: { apiVersion?: unknown; spec?: unknown }): string | undefined {
    if (object.apiVersion !== "apiextensions.k8s.io/v1") {
        return `is ${describeValue(object.apiVersion)}; only apiextensions.k8s.io/v1 is served by Kubernetes 1.22 and later (OLM's InstallPlan fails on it too: the API server does not serve the version)`;
    }
    const spec = object.spec as CrdObject["spec"] | undefined;
    if (!spec || typeof spec.group !== "string" || typeof spec.names?.plural !== "string" || !Array.isArray(spec.versions)) {
        return "lacks spec.group, spec.names.plural or spec.versions";
    }
    return undefined;
}
