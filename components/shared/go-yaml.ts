/**
 * YAML read as the Go tooling of OLM reads a bundle: opm and operator-framework/api decode each
 * manifest file with k8s.io/apimachinery's `NewYAMLOrJSONDecoder` (operator-registry
 * `pkg/registry/decode.go`), which splits the stream into documents at `---` lines
 * (`YAMLReader`), converts each with sigs.k8s.io/yaml v1.6.0 (`YAMLToJSON`: go.yaml.in/yaml/v2
 * `Unmarshal` into `interface{}`, then `convertToJSONableObject` and `encoding/json`), and
 * decodes the first into an `Unstructured`. So YAML 1.1 scalars (`on`, `yes`, `y`, `off`, `0755`,
 * `1_000`, `0b101`), a repeated key keeps its last value, a `<<` merge key overrides the keys
 * before it, a timestamp stays a string, `.nan`/`.inf` fail (JSON has no such number), keys become
 * strings as sigs.k8s.io/yaml writes them, and a quoted scalar may continue on lines indented no
 * further than its key (libyaml does not check their indentation). The `yaml` package parses the
 * syntax (failsafe schema: every scalar a string, resolved here); a quoted scalar whose
 * continuation lines it refuses for their indentation is re-indented first, which changes no value
 * (a quoted scalar's line breaks fold and their leading blanks are dropped).
 *
 * tests/catalog/oracle/ holds the Go program that computed what these functions must answer, over
 * every manifest of the community bundles and a table of made-up cases.
 * Pure; imports only the `yaml` package.
 */
import { Alias, Document, isAlias, isMap, isScalar, isSeq, Lexer, Node, parseAllDocuments, Scalar } from "yaml";

/** One document as sigs.k8s.io/yaml converts it: its JSON value, or why it fails. */
export type GoYamlResult = { ok: true; value: unknown } | { ok: false; error: string };

const PARSE_OPTIONS = { schema: "failsafe", uniqueKeys: false, merge: false, strict: false, prettyErrors: false } as const;
const TAG = "tag:yaml.org,2002:";

/** Each document of a stream, split as apimachinery's YAMLReader splits it, each converted. */
export function goYamlDocuments(text: string): GoYamlResult[] {
    const split = splitDocuments(text);
    const results = split.chunks.map(convertDocument);
    return split.error === undefined ? results : [...results, { ok: false, error: split.error }];
}

/** How many documents apimachinery's YAMLReader finds (no document is converted). */
export function goDocumentCount(text: string): number {
    return looksLikeJson(text) ? 1 : splitDocuments(text).chunks.length;
}

/**
 * What `NewYAMLOrJSONDecoder(reader, 30).Decode(&unstructured.Unstructured{})` returns for a file:
 * the first document (or, when the stream starts with `{`, the first JSON value) as an object with
 * a `kind`, or the error.
 */
export function goDecodeManifest(text: string): GoYamlResult {
    let result: GoYamlResult | undefined;
    if (looksLikeJson(text)) {
        try {
            result = { ok: true, value: JSON.parse(firstJsonValue(text)) };
        } catch {
            // apimachinery falls back to YAML on a JSON syntax error (decoder.go, YAMLOrJSONDecoder.Decode)
        }
    }
    if (!result) {
        const split = splitDocuments(text);
        if (split.chunks.length === 0) {
            return { ok: false, error: split.error ?? "EOF" };
        }
        // The first chunk, or the separator error that ends the stream before it.
        result = convertDocument(split.chunks[0]);
    }
    if (!result.ok) return result;
    const value = result.value;
    if (value === null) {
        return result; // no object and no error: a document of comments only (opm adds nothing for it)
    }
    if (typeof value !== "object" || Array.isArray(value)) {
        return {
            ok: false,
            error: `the document is not an object (it is ${value === null ? "null" : Array.isArray(value) ? "a list" : typeof value})`,
        };
    }
    const kind = (value as { kind?: unknown }).kind;
    if (typeof kind !== "string" || kind === "") {
        return { ok: false, error: "Object 'Kind' is missing" };
    }
    return result;
}

/** apimachinery's `GuessJSONStream(r, 30)`: the first 30 bytes, leading white space dropped, start with `{`. */
function looksLikeJson(text: string): boolean {
    return Buffer.from(text, "utf8").subarray(0, 30).toString("utf8").trimStart().startsWith("{");
}

/** The text of the first JSON value (encoding/json's Decoder reads one value and leaves the rest). */
function firstJsonValue(text: string): string {
    const start = text.indexOf("{");
    let depth = 0;
    for (let i = start; i < text.length; i++) {
        const c = text[i];
        if (c === '"') {
            for (i++; i < text.length && text[i] !== '"'; i++) {
                if (text[i] === "\\") i++;
            }
        } else if (c === "{" || c === "[") {
            depth++;
        } else if ((c === "}" || c === "]") && --depth === 0) {
            return text.slice(0, i + 1);
        }
    }
    return text;
}

/**
 * apimachinery's `YAMLReader.Read` (pkg/util/yaml/decoder.go): a line starting with `---` ends a
 * document when what follows it is blank or a comment, and is an error otherwise; empty chunks
 * (before the first separator, or between two) are skipped.
 */
function splitDocuments(text: string): { chunks: string[]; error?: string } {
    const chunks: string[] = [];
    let buffer = "";
    const lines = text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
    for (const line of lines) {
        if (line.startsWith("---")) {
            const trimmed = line.slice(3).trim();
            if (trimmed.length > 0 && !trimmed.startsWith("#")) {
                return { chunks, error: `invalid Yaml document separator: ${trimmed}` };
            }
            if (buffer.length > 0) {
                chunks.push(buffer);
                buffer = "";
            }
            continue;
        }
        buffer += line;
    }
    if (buffer.length > 0) chunks.push(buffer);
    return { chunks };
}

/** One document through go.yaml.in/yaml/v2 and sigs.k8s.io/yaml's conversion. */
function convertDocument(chunk: string): GoYamlResult {
    const document = parseOne(chunk);
    // yaml.v2 parses a document's root node and then stops (its Unmarshal asks for no further event),
    // so what follows the root node is never read: an error there is not Go's.
    const rootEnd = (document.contents as Node | null)?.range?.[1] ?? Infinity;
    const errors = document.errors.filter((e) => e.code !== "UNEXPECTED_TOKEN" || e.pos[0] < rootEnd);
    if (errors.length > 0) {
        return { ok: false, error: errors[0].message.split("\n")[0] };
    }
    try {
        return { ok: true, value: new Converter(document).value(document.contents as Node | null) };
    } catch (error) {
        if (error instanceof GoYamlError) return { ok: false, error: error.message };
        throw error;
    }
}

/**
 * Parses one chunk as one document. A chunk holds no `---` line, so a second document can only
 * come from `...`; go-yaml's Unmarshal reads the first.
 */
function parseOne(chunk: string): Document.Parsed {
    let source = chunk;
    for (let attempt = 0; attempt < 2; attempt++) {
        const documents = parseAllDocuments(source, PARSE_OPTIONS);
        const document = Array.isArray(documents) ? documents[0] : undefined;
        if (!document) {
            return new Document(null) as unknown as Document.Parsed;
        }
        const reindented = document.errors.length > 0 ? reindentQuoted(source) : source;
        if (reindented === source) return document;
        source = reindented;
    }
    return parseAllDocuments(source, PARSE_OPTIONS)[0] as Document.Parsed;
}

/**
 * The source with every multi-line quoted scalar's continuation lines indented past its opening
 * quote's column where they were not (the `yaml` lexer refuses them or ends the scalar there; libyaml
 * does not look at their indentation). The closing quote is found as libyaml finds it: `''` inside
 * single quotes and any backslash escape inside double quotes continue the scalar. A scalar that
 * never closes is left as it is (Go refuses it too).
 */
function reindentQuoted(source: string): string {
    const edits: { start: number; end: number; text: string }[] = [];
    let offset = 0;
    for (const token of new Lexer().lex(source)) {
        if (LEXER_MARKERS.has(token)) continue;
        const start = offset;
        offset += token.length;
        if ((token[0] !== "'" && token[0] !== '"') || start < (edits.at(-1)?.end ?? 0)) continue;
        const end = closingQuote(source, start);
        if (end === undefined) continue;
        const column = start - (source.lastIndexOf("\n", start - 1) + 1);
        const body = source.slice(start, end);
        const text = body.replace(/\n([ \t]*)(?=[^ \t\r\n])/g, (match: string, blanks: string) =>
            blanks.length > column ? match : `\n${" ".repeat(column + 1)}`,
        );
        if (text !== body) edits.push({ start, end, text });
    }
    let result = source;
    for (const edit of edits.reverse()) {
        result = result.slice(0, edit.start) + edit.text + result.slice(edit.end);
    }
    return result;
}

/** The lexer's markers, which stand for no source text (yaml's cst.ts: DOCUMENT, FLOW_END, SCALAR). */
const LEXER_MARKERS = new Set(["\x02", "\x18", "\x1f"]);

/** The offset just past the quote closing the scalar that opens at `start`, or undefined. */
function closingQuote(source: string, start: number): number | undefined {
    const quote = source[start];
    for (let i = start + 1; i < source.length; i++) {
        const c = source[i];
        if (quote === "'" && c === "'") {
            if (source[i + 1] === "'") {
                i++;
                continue;
            }
            return i + 1;
        }
        if (quote === '"' && c === "\\") {
            i++;
            continue;
        }
        if (quote === '"' && c === '"') return i + 1;
        if (c === "\n" && /^(---|\.\.\.)(\s|$)/.test(source.slice(i + 1, i + 5))) return undefined;
    }
    return undefined;
}

class GoYamlError extends Error {}

/** go.yaml.in/yaml/v2's decoder into `interface{}` followed by sigs.k8s.io/yaml's JSON conversion. */
class Converter {
    private aliasDepth = 0;
    private decodeCount = 0;
    private aliasCount = 0;

    /** Each alias's node: the last anchor of its name before it, as yaml.v2's parser binds them. */
    private readonly targets = new Map<Alias, Node>();

    constructor(document: Document.Parsed) {
        const anchors = new Map<string, Node>();
        const visit = (node: unknown): void => {
            if (isAlias(node)) {
                const target = anchors.get(node.source);
                if (target) this.targets.set(node, target);
                return;
            }
            if (!isScalar(node) && !isMap(node) && !isSeq(node)) return;
            if (node.anchor) anchors.set(node.anchor, node);
            if (isMap(node)) {
                for (const pair of node.items) {
                    visit(pair.key);
                    visit(pair.value);
                }
            } else if (isSeq(node)) {
                node.items.forEach(visit);
            }
        };
        visit(document.contents);
    }

    value(node: Node | null | undefined): unknown {
        this.decodeCount++;
        if (node === null || node === undefined) return null;
        if (isAlias(node)) return this.alias(node, (target) => this.value(target));
        if (isScalar(node)) return jsonValue(this.scalar(node));
        if (isSeq(node)) return node.items.map((item) => this.value(item as Node));
        if (isMap(node)) {
            const out: Record<string, unknown> = {};
            this.mapInto(node as unknown as MapNode, out);
            return out;
        }
        throw new GoYamlError(`unsupported YAML node`);
    }

    private target(node: Alias): Node {
        const target = this.targets.get(node);
        if (!target) throw new GoYamlError(`unknown anchor '${node.source}' referenced`);
        return target;
    }

    /** An alias decoded again at each use, as yaml.v2 does, with its guard against exponential aliasing (decode.go). */
    private alias<T>(node: Alias, use: (target: Node) => T): T {
        const target = this.target(node);
        this.aliasCount++;
        if (this.aliasCount > 100 && this.decodeCount > 1000 && this.aliasCount / this.decodeCount > allowedAliasRatio(this.decodeCount)) {
            throw new GoYamlError("document contains excessive aliasing");
        }
        if (++this.aliasDepth > 1000) throw new GoYamlError(`anchor '${node.source}' value contains itself`);
        try {
            return use(target);
        } finally {
            this.aliasDepth--;
        }
    }

    /** yaml.v2 `mapping`: pairs in order, a `<<` merge applied where it stands, the last of a repeated key kept. */
    private mapInto(node: MapNode, out: Record<string, unknown>): void {
        for (const pair of node.items) {
            const key = pair.key as Node | null;
            if (key && isScalar(key) && isMergeKey(key)) {
                this.merge(pair.value as Node | null, out);
                continue;
            }
            out[this.key(key)] = this.value(pair.value as Node | null);
        }
    }

    private merge(node: Node | null, out: Record<string, unknown>): void {
        const wantMap = () => new GoYamlError("map merge requires map or sequence of maps as the value");
        const mapOf = (n: Node | null): MapNode => {
            const target = n && isAlias(n) ? this.target(n) : n;
            if (!target || !isMap(target)) throw wantMap();
            return target as unknown as MapNode;
        };
        if (node && isSeq(node)) {
            // yaml.v2 merges the maps of a sequence last to first, so the first wins.
            for (let i = node.items.length - 1; i >= 0; i--) {
                this.mapInto(mapOf(node.items[i] as Node), out);
            }
            return;
        }
        this.mapInto(mapOf(node), out);
    }

    /** A map key as sigs.k8s.io/yaml's `convertToJSONableObject` writes it. */
    private key(node: Node | null): string {
        if (node === null) throw new GoYamlError("unsupported map key of type: <nil>");
        if (isAlias(node)) return this.alias(node, (target) => this.key(target));
        if (!isScalar(node)) throw new GoYamlError("invalid map key: a map or a list");
        const value = this.scalar(node);
        switch (typeof value) {
            case "string":
                return value;
            case "boolean":
                return value ? "true" : "false";
            case "bigint":
                if (value > INT64_MAX) throw new GoYamlError(`unsupported map key of type: uint64, key: ${value}`);
                return value.toString();
            case "number":
                return formatFloat32(value);
            default:
                throw new GoYamlError("unsupported map key of type: <nil>");
        }
    }

    /** yaml.v2's `resolve` of a scalar: a plain one by its text, a quoted or block one as a string, unless tagged. */
    private scalar(node: Scalar): GoScalar {
        const text = node.value instanceof Uint8Array ? Buffer.from(node.value).toString("base64") : String(node.value ?? "");
        const tag = explicitTag(node);
        if (tag === undefined) {
            return QUOTED_OR_BLOCK.has(node.type as string) ? text : resolvePlain(text);
        }
        switch (tag) {
            case `${TAG}str`:
                return text;
            case `${TAG}binary`:
                return Buffer.from(text.replace(/\s+/g, ""), "base64").toString("utf8");
            case `${TAG}null`:
            case `${TAG}bool`:
            case `${TAG}int`:
            case `${TAG}float`: {
                const resolved = resolvePlain(text);
                const kind =
                    resolved === null
                        ? "null"
                        : typeof resolved === "boolean"
                          ? "bool"
                          : typeof resolved === "bigint"
                            ? "int"
                            : typeof resolved === "number"
                              ? "float"
                              : "str";
                if (tag === `${TAG}float` && kind === "int") return Number(resolved);
                if (`${TAG}${kind}` !== tag) throw new GoYamlError(`cannot decode !!${kind} \`${text}\` as a !!${tag.slice(TAG.length)}`);
                return resolved;
            }
            default:
                return text; // a tag yaml.v2 does not resolve (`!foo`, `!!timestamp`) leaves the text
        }
    }
}

/** yaml.v2's `isMerge`: the scalar `<<`, plain and untagged or tagged `!!merge`. */
function isMergeKey(key: Scalar): boolean {
    const tag = explicitTag(key);
    // The `yaml` package resolves a `!!merge` scalar itself, to a symbol.
    const text = typeof key.value === "symbol" ? key.value.description : key.value;
    return text === "<<" && ((tag === undefined && !QUOTED_OR_BLOCK.has(key.type as string)) || tag === `${TAG}merge`);
}

/** yaml.v2's allowedAliasRatio (decode.go): the share of aliases a document of this size may decode. */
function allowedAliasRatio(decodeCount: number): number {
    if (decodeCount <= 400_000) return 0.99;
    if (decodeCount >= 4_000_000) return 0.1;
    return 0.99 - 0.89 * ((decodeCount - 400_000) / 3_600_000);
}

interface MapNode {
    items: { key: unknown; value: unknown }[];
}

type GoScalar = string | boolean | null | bigint | number;

const QUOTED_OR_BLOCK = new Set<string>([Scalar.QUOTE_DOUBLE, Scalar.QUOTE_SINGLE, Scalar.BLOCK_LITERAL, Scalar.BLOCK_FOLDED]);

/** The tag the source gives a scalar (the failsafe schema tags none by itself); `!` is yaml.v2's string. */
function explicitTag(node: Scalar): string | undefined {
    return node.tag === "!" ? `${TAG}str` : node.tag;
}

const INT64_MAX = 2n ** 63n - 1n;
const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;
const BOOLEANS: Record<string, boolean> = Object.fromEntries([
    ...["y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"].map((s) => [s, true]),
    ...["n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"].map((s) => [s, false]),
]);
const NULLS = new Set(["", "~", "null", "Null", "NULL"]);
const SPECIAL_FLOATS: Record<string, number> = {
    ".nan": NaN,
    ".NaN": NaN,
    ".NAN": NaN,
    ".inf": Infinity,
    ".Inf": Infinity,
    ".INF": Infinity,
    "+.inf": Infinity,
    "+.Inf": Infinity,
    "+.INF": Infinity,
    "-.inf": -Infinity,
    "-.Inf": -Infinity,
    "-.INF": -Infinity,
};
const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;

/**
 * go.yaml.in/yaml/v2 `resolve("", text)` for a plain scalar (resolve.go): the resolve map first
 * (booleans, nulls, special floats, `<<`), then by the first character: `.` a float, a digit or
 * sign a timestamp (kept as text into `interface{}`), an integer (`strconv.ParseInt(s, 0, 64)`
 * with `_` removed, then ParseUint), a YAML-style float, a `0b`/`-0b` binary; anything else text.
 * Integers come back as bigint (int64/uint64), floats as number.
 */
export function resolvePlain(text: string): GoScalar {
    if (text in BOOLEANS) return BOOLEANS[text];
    if (NULLS.has(text)) return null;
    if (text in SPECIAL_FLOATS) return SPECIAL_FLOATS[text];
    const first = text[0];
    if (first === ".") {
        return GO_FLOAT.test(text) ? Number(text) : text;
    }
    if (first !== "+" && first !== "-" && !(first >= "0" && first <= "9")) return text;
    if (isTimestamp(text)) return text;
    const plain = text.replace(/_/g, "");
    const signed = parseGoInt(plain, true);
    if (signed !== undefined && signed >= INT64_MIN && signed <= INT64_MAX) return signed;
    const unsigned = parseGoInt(plain, false);
    if (unsigned !== undefined && unsigned >= 0n && unsigned <= UINT64_MAX) return unsigned;
    if (YAML_STYLE_FLOAT.test(plain)) {
        const value = Number(plain);
        if (Number.isFinite(value)) return value;
    }
    return text;
}

/** What Go's strconv.ParseFloat accepts of a text starting with `.` (decimal digits, an exponent). */
const GO_FLOAT = /^\.[0-9]+([eE][-+]?[0-9]+)?$/;

/** strconv.ParseInt / ParseUint with base 0: sign (ParseInt only), 0x / 0o / 0b / leading-0 octal prefixes. */
function parseGoInt(text: string, signed: boolean): bigint | undefined {
    let body = text;
    let negative = false;
    if (signed && (body[0] === "+" || body[0] === "-")) {
        negative = body[0] === "-";
        body = body.slice(1);
    }
    let digits = /^[0-9]+$/;
    let prefix = "";
    if (body.length > 1 && body[0] === "0") {
        const marker = body[1].toLowerCase();
        if (marker === "x") {
            digits = /^[0-9a-fA-F]+$/;
            prefix = "0x";
            body = body.slice(2);
        } else if (marker === "o") {
            digits = /^[0-7]+$/;
            prefix = "0o";
            body = body.slice(2);
        } else if (marker === "b") {
            digits = /^[01]+$/;
            prefix = "0b";
            body = body.slice(2);
        } else {
            digits = /^[0-7]+$/;
            prefix = "0o";
            body = body.slice(1);
        }
    }
    if (!digits.test(body)) return undefined;
    const magnitude = BigInt(`${prefix}${body}`);
    return negative ? -magnitude : magnitude;
}

/** yaml.v2's parseTimestamp: four digits and a dash, then one of its layouts (Go's time.Parse). */
function isTimestamp(text: string): boolean {
    if (!/^[0-9]{4}-/.test(text)) return false;
    return (
        (/^\d{4}-\d{1,2}-\d{1,2}$/.test(text) ||
            /^\d{4}-\d{1,2}-\d{1,2}[Tt]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[-+]\d{2}:\d{2})$/.test(text) ||
            /^\d{4}-\d{1,2}-\d{1,2} \d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?$/.test(text)) &&
        validDate(text)
    );
}

function validDate(text: string): boolean {
    const [year, month, day] = text
        .split(/[-Tt ]/)
        .slice(0, 3)
        .map(Number);
    const days = [31, year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
    if (month < 1 || month > 12 || day < 1 || day > days[month - 1]) return false;
    const time = text.slice(text.search(/[Tt ]/) + 1);
    if (time === text) return true;
    const [hour, minute, second] = time.split(/[:.Z+-]/).map(Number);
    return hour < 24 && minute < 60 && second < 60;
}

/** A resolved scalar as encoding/json writes it: integers and floats as numbers; NaN and infinities fail (json.Marshal). */
function jsonValue(value: GoScalar): unknown {
    if (typeof value === "bigint") return Number(value);
    if (typeof value === "number" && !Number.isFinite(value)) {
        throw new GoYamlError(`json: unsupported value: ${Number.isNaN(value) ? "NaN" : value > 0 ? "+Inf" : "-Inf"}`);
    }
    return value;
}

/** Go's strconv.FormatFloat(f, 'g', -1, 32), as sigs.k8s.io/yaml writes a float map key. */
function formatFloat32(value: number): string {
    if (Number.isNaN(value)) return ".nan";
    if (value === Infinity) return ".inf";
    if (value === -Infinity) return "-.inf";
    const single = Math.fround(value);
    let digits = "";
    let exponent = 0;
    for (let precision = 1; precision <= 9; precision++) {
        const candidate = single.toExponential(precision - 1);
        if (Math.fround(Number(candidate)) === single) {
            const [mantissa, exp] = candidate.split("e");
            digits = mantissa.replace("-", "").replace(".", "");
            exponent = Number(exp);
            break;
        }
    }
    const sign = single < 0 ? "-" : "";
    if (single === 0) return Object.is(single, -0) ? "-0" : "0";
    if (exponent < -4 || exponent >= 21) {
        const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
        const abs = Math.abs(exponent);
        return `${sign}${mantissa}e${exponent < 0 ? "-" : "+"}${abs < 10 ? "0" : ""}${abs}`;
    }
    if (exponent < 0) return `${sign}0.${"0".repeat(-exponent - 1)}${digits}`;
    if (digits.length <= exponent + 1) return `${sign}${digits}${"0".repeat(exponent + 1 - digits.length)}`;
    return `${sign}${digits.slice(0, exponent + 1)}.${digits.slice(exponent + 1)}`;
}
