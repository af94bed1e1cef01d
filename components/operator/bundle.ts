/**
 * Reads an operator bundle from disk: the ClusterServiceVersion named in config and, from the
 * same folder (a registry+v1 bundle's `manifests/`), the CRD manifests of the APIs it owns.
 * Pure apart from reading files; reports every problem with the file and field.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseAllDocuments } from "yaml";
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

export interface LoadedBundle {
    /** The CSV path as configured (for messages). */
    csvFile: string;
    csv: ClusterServiceVersion;
    /** CRD manifests found next to the CSV, by CRD name. */
    crds: Map<string, CrdManifest>;
    /** Objects in the folder this stack does not install (kind and name), for a warning. */
    ignored: string[];
}

export type BundleLoadResult = { ok: true; bundle: LoadedBundle } | { ok: false; problems: CsvProblem[] };

const MANIFEST_EXTENSIONS = new Set([".yaml", ".yml", ".json"]);

interface ParsedDocument {
    error?: string;
    object: unknown;
}

/**
 * Reads manifest files once per pre-flight: operators whose CSVs share a folder (or a folder
 * of many CSVs, like the test data) would otherwise parse every sibling again.
 */
export class ManifestReader {
    private readonly documents = new Map<string, readonly ParsedDocument[]>();

    read(file: string): readonly ParsedDocument[] {
        let parsed = this.documents.get(file);
        if (!parsed) {
            parsed = parsedManifests(fs.readFileSync(file, "utf8"));
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
const PARSED_BY_CONTENT = new Map<string, readonly ParsedDocument[]>();
const PARSED_CACHE_ENTRIES = 256;

/** Empties the cache: each `pulumi preview` starts in a new process, so its first parse is cold (scripts/bench/operators.ts). */
export function forgetParsedManifests(): void {
    PARSED_BY_CONTENT.clear();
}

function parsedManifests(text: string): readonly ParsedDocument[] {
    const key = createHash("sha256").update(text).digest("hex");
    let parsed = PARSED_BY_CONTENT.get(key);
    if (!parsed) {
        parsed = deepFreeze(
            parseAllDocuments(text).map((document) =>
                document.errors.length > 0
                    ? { error: document.errors[0].message.split("\n")[0], object: undefined }
                    : { object: document.toJS() },
            ),
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
    let documents: readonly ParsedDocument[];
    try {
        documents = reader.read(csvPath);
    } catch (error) {
        const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "does not exist" : (error as Error).message;
        return { ok: false, problems: [{ field: "", message: `cannot read ${csvPath}: ${reason}` }] };
    }
    if (documents.length !== 1) {
        return {
            ok: false,
            problems: [{ field: "", message: `must hold one YAML document (the ClusterServiceVersion), found ${documents.length}` }],
        };
    }
    if (documents[0].error !== undefined) {
        return { ok: false, problems: [{ field: "", message: `is not valid YAML: ${documents[0].error}` }] };
    }
    const parsed = csvFromDocument(documents[0].object);
    if (!parsed.ok) {
        return parsed;
    }
    const folder = siblingManifests(csvPath, reader);
    if (!folder.ok) {
        return folder;
    }
    return { ok: true, bundle: { csvFile, csv: parsed.csv, crds: folder.crds, ignored: folder.ignored } };
}

type FolderResult = { ok: true; crds: Map<string, CrdManifest>; ignored: string[] } | { ok: false; problems: CsvProblem[] };

function siblingManifests(csvPath: string, reader: ManifestReader): FolderResult {
    const directory = path.dirname(csvPath);
    const crds = new Map<string, CrdManifest>();
    const ignored: string[] = [];
    const problems: CsvProblem[] = [];
    const files = fs
        .readdirSync(directory)
        .filter((f) => MANIFEST_EXTENSIONS.has(path.extname(f)) && path.join(directory, f) !== csvPath)
        .sort();
    for (const file of files) {
        const full = path.join(directory, file);
        if (!fs.statSync(full).isFile()) {
            continue;
        }
        for (const document of reader.read(full)) {
            if (document.error !== undefined) {
                problems.push({ field: "", message: `bundle file ${describeValue(file)} is not valid YAML: ${document.error}` });
                continue;
            }
            const object = document.object as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown } } | null;
            if (!object || typeof object !== "object") {
                continue;
            }
            const kind = typeof object.kind === "string" ? object.kind : "(no kind)";
            const name = typeof object.metadata?.name === "string" ? object.metadata.name : "(no name)";
            if (kind === "ClusterServiceVersion") {
                continue; // a folder of CSVs (test data) or an older version: never installed
            }
            if (kind !== "CustomResourceDefinition") {
                ignored.push(`${kind} ${name} (${file})`);
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
            crds.set(name, { file, object: object as CrdObject });
        }
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, crds, ignored };
}

function crdShapeProblem(object: { apiVersion?: unknown; spec?: unknown }): string | undefined {
    if (object.apiVersion !== "apiextensions.k8s.io/v1") {
        return `is ${describeValue(object.apiVersion)}; only apiextensions.k8s.io/v1 is served by Kubernetes 1.22 and later`;
    }
    const spec = object.spec as CrdObject["spec"] | undefined;
    if (!spec || typeof spec.group !== "string" || typeof spec.names?.plural !== "string" || !Array.isArray(spec.versions)) {
        return "lacks spec.group, spec.names.plural or spec.versions";
    }
    return undefined;
}
