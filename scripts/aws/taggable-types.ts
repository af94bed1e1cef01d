/**
 * `npm run gen:taggable`: where every AWS resource type of the two providers keeps its tags,
 * derived from the providers' own SDK declarations (generated from their Pulumi schemas), so no
 * list is kept by hand: `@pulumi/aws` (the classic provider) and `@pulumi/aws-native` (the
 * CloudFormation-schema provider), at the versions package-lock.json pins. For each
 * `class X extends pulumi.CustomResource` it reads the `XArgs` interface and walks the input
 * types below it (`types/input.d.ts`), recording every tag set:
 *
 * - a property whose type is a string map, or a list of `{key: string, value: string, ...}`
 *   items (or, in aws-native, `any`: an untyped tags property), and whose name is `tags` or
 *   ends in `Tags`;
 * - the resource's **own** tag set: in @pulumi/aws, `tags` on a class that also has the
 *   provider-computed `tagsAll` (the provider's `defaultTags` reach exactly these; a string map
 *   without `tagsAll` is not the resource's own tags: `aws:inspector/resourceGroup`'s select
 *   EC2 instances) or the list-shaped `tags` of Auto Scaling groups; in aws-native, `tags`, or
 *   else the one top-level `…Tags` property (CloudFormation's `tagging.tagProperty`,
 *   `HostedZoneTags`, `UserPoolTags`); the aws-native provider merges its `defaultTags` into
 *   it when it is a map or a key/value list (pulumi-aws-native
 *   provider/pkg/provider/provider.go `Check`, default_tags/merging.go `MergeDefaultTags`);
 * - **nested** tag sets, classified by what the schema says they are: `tags` of something the
 *   resource creates (a launch template's tag specifications, an instance's volumes, a spot
 *   fleet's instances, a DynamoDB global table's replicas), `selects` (tags a rule matches on
 *   other resources: S3 lifecycle filters, DLM target tags, backup selections), or
 *   `unclassified` when neither the structure nor the description decides (the pack reports
 *   those as not judged when a resource sets them). See `nestedRole`.
 *
 * Types that hold other resources in a document the schema does not type (a CloudFormation
 * template, a Cloud Control `desiredState`, a CloudFormation extension's `properties`) are
 * recorded as containers. Every other type with no tag set is untaggable. Type tokens come
 * from each module's `__pulumiType`.
 *
 * Writes `components/aws-tags/taggable-types.json` with the fingerprint of its inputs (the two
 * package versions and this script's text); `tests/aws-tags/taggable-types.test.ts` checks the
 * fingerprint (cheap), and `npm run gen:taggable -- --check` regenerates and compares the whole
 * file (about ten seconds of parsing, so it is not part of npm test).
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { byEntryKey } from "../../components/shared/order";
import type {
    ContainerKind,
    NestedRole,
    NestedTagSet,
    ProviderName,
    ProviderTagSchema,
    TagSchema,
    TagSetSpec,
    TypeTagSpec,
} from "../../components/aws-tags/taggable";

export const OUTPUT_FILE = path.resolve(__dirname, "..", "..", "components", "aws-tags", "taggable-types.json");
export const PACKAGES: Record<ProviderName, string> = { aws: "@pulumi/aws", "aws-native": "@pulumi/aws-native" };

// ---------------------------------------------------------------- reading the declarations

/** A type node with `pulumi.Input<…>` wrappers, parentheses and `| undefined` removed. */
function unwrap(node: ts.TypeNode, source: ts.SourceFile): ts.TypeNode {
    let current = node;
    for (;;) {
        if (ts.isUnionTypeNode(current)) {
            const defined = current.types.filter((t) => t.kind !== ts.SyntaxKind.UndefinedKeyword);
            if (defined.length !== 1) {
                return current;
            }
            current = defined[0];
        } else if (
            ts.isTypeReferenceNode(current) &&
            current.typeName.getText(source) === "pulumi.Input" &&
            current.typeArguments?.length === 1
        ) {
            current = current.typeArguments[0];
        } else if (ts.isParenthesizedTypeNode(current)) {
            current = current.type;
        } else {
            return current;
        }
    }
}

const text = (node: ts.Node, source: ts.SourceFile) => node.getText(source).replace(/\s+/g, " ");

/** The first sentence-ish of a declaration's JSDoc (the schema's description), for the record. */
function docOf(node: ts.Node, source: ts.SourceFile): string {
    const ranges = ts.getLeadingCommentRanges(source.text, node.pos) ?? [];
    const raw = ranges
        .map((r) => source.text.slice(r.pos, r.end))
        .join(" ")
        .replace(/^\s*\/\*\*|\*\/\s*$/g, "")
        .replace(/^\s*\*\s?/gm, "")
        .replace(/\s+/g, " ")
        .trim();
    return raw.length > 200 ? `${raw.slice(0, 197)}...` : raw;
}

interface Interfaces {
    source: ts.SourceFile;
    byName: Map<string, ts.InterfaceDeclaration>;
}

/** Interfaces of `types/input.d.ts` by dotted name (`autoscaling.GroupTag`, `TagArgs`). */
function inputInterfaces(file: string): Interfaces {
    const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false);
    const byName = new Map<string, ts.InterfaceDeclaration>();
    const visit = (statements: ts.NodeArray<ts.Statement>, prefix: string) => {
        for (const statement of statements) {
            if (ts.isModuleDeclaration(statement) && statement.body && ts.isModuleBlock(statement.body)) {
                visit(statement.body.statements, `${prefix}${statement.name.getText(source)}.`);
            } else if (ts.isInterfaceDeclaration(statement)) {
                byName.set(`${prefix}${statement.name.text}`, statement);
            }
        }
    };
    visit(source.statements, "");
    return { source, byName };
}

interface Property {
    name: string;
    type: ts.TypeNode;
    node: ts.PropertySignature;
    required: boolean;
}

function propertiesOf(declaration: ts.InterfaceDeclaration, source: ts.SourceFile): Property[] {
    return declaration.members
        .filter((m): m is ts.PropertySignature => ts.isPropertySignature(m) && m.type !== undefined)
        .map((m) => ({ name: m.name.getText(source), type: m.type as ts.TypeNode, node: m, required: !m.questionToken }));
}

/** What a property's type is, as far as tags are concerned. */
type Shape =
    | { kind: "map" }
    | { kind: "any" }
    | { kind: "list"; itemType: string; fields: Record<string, { type: string; required: boolean }> }
    | { kind: "object"; ref: string; array: boolean }
    | { kind: "other" };

function isStringMap(node: ts.TypeNode, source: ts.SourceFile): boolean {
    if (!ts.isTypeLiteralNode(node) || node.members.length !== 1) {
        return false;
    }
    const member = node.members[0];
    if (!ts.isIndexSignatureDeclaration(member) || !member.type) {
        return false;
    }
    return (
        member.parameters[0]?.type?.kind === ts.SyntaxKind.StringKeyword && unwrap(member.type, source).kind === ts.SyntaxKind.StringKeyword
    );
}

function refName(node: ts.TypeNode, source: ts.SourceFile): string | undefined {
    if (!ts.isTypeReferenceNode(node)) {
        return undefined;
    }
    const name = node.typeName.getText(source);
    return name.startsWith("inputs.") ? name.slice("inputs.".length) : undefined;
}

function shapeOf(node: ts.TypeNode, source: ts.SourceFile, inputs: Interfaces): Shape {
    const type = unwrap(node, source);
    if (type.kind === ts.SyntaxKind.AnyKeyword) {
        return { kind: "any" };
    }
    if (isStringMap(type, source)) {
        return { kind: "map" };
    }
    const array = ts.isArrayTypeNode(type);
    const element = array ? unwrap((type as ts.ArrayTypeNode).elementType, source) : type;
    if (array && ts.isUnionTypeNode(element)) {
        // Items of alternative types (AppStream's `{key, value} | {tagKey, tagValue}`): a key/value list when one alternative is.
        const alternatives = element.types.map((t) => shapeOf(t, source, inputs));
        const list = alternatives.find((a) => a.kind === "object" && listFields(inputs, a.ref) !== undefined);
        if (list && list.kind === "object") {
            return {
                kind: "list",
                itemType: element.types.map((t) => refName(t, source)).join(" | "),
                fields: listFields(inputs, list.ref) ?? {},
            };
        }
        return { kind: "other" };
    }
    const ref = refName(element, source);
    if (!ref) {
        return { kind: "other" };
    }
    if (!inputs.byName.has(ref)) {
        return { kind: "other" };
    }
    const fields = listFields(inputs, ref);
    return array && fields ? { kind: "list", itemType: ref, fields } : { kind: "object", ref, array };
}

/** The fields of an input interface whose `key` and `value` are strings (a tag item), else undefined. */
function listFields(inputs: Interfaces, ref: string): Record<string, { type: string; required: boolean }> | undefined {
    const declaration = inputs.byName.get(ref);
    if (!declaration) {
        return undefined;
    }
    const fields: Record<string, { type: string; required: boolean }> = {};
    for (const property of propertiesOf(declaration, inputs.source)) {
        fields[property.name] = { type: text(unwrap(property.type, inputs.source), inputs.source), required: property.required };
    }
    return fields.key?.type === "string" && fields.value?.type === "string" ? fields : undefined;
}

const TAG_NAME = /^tags$|Tags$/;

function tagSetOf(path: string, shape: Shape, defaults: boolean): TagSetSpec | undefined {
    if (shape.kind === "map" || shape.kind === "any") {
        return { path, shape: shape.kind, defaults };
    }
    if (shape.kind === "list") {
        const requiredFields: Record<string, string> = {};
        const optionalFields: Record<string, string> = {};
        for (const [name, field] of Object.entries(shape.fields).sort(byEntryKey)) {
            if (name !== "key" && name !== "value") {
                (field.required ? requiredFields : optionalFields)[name] = field.type;
            }
        }
        return {
            path,
            shape: "list",
            itemType: shape.itemType,
            keyField: "key",
            valueField: "value",
            ...(Object.keys(requiredFields).length > 0 ? { requiredFields } : {}),
            ...(Object.keys(optionalFields).length > 0 ? { optionalFields } : {}),
            defaults,
        };
    }
    return undefined;
}

// ---------------------------------------------------------------- what a nested tag set is

/**
 * Path segments (object or list properties) that hold rules matching other resources: a tag set
 * below one of them selects, filters or excludes, it tags nothing (S3 lifecycle and replication
 * `filter`/`and`, Backup `scope`/`controlScope`/`selection…`, DLM `exclusions`, Image Builder
 * `exclusionRules` and `resourceSelection`, Security Hub and Inspector `criteria`/`filters`).
 */
const SELECTOR_SEGMENT = /filter|criteri|selection|exclu|scope|condition|^(and|or|not|lifecycleRules)$/i;

/** A tag set's own name that says it matches tags (DLM `targetTags`, `excludeTags`, Backup `selectionTags`, `scopeTags`, `allowed…Tags`). */
const SELECTOR_NAME = /^(target|exclude|selection|match|filter|condition|scope|allowed|allocation)/i;

/** Descriptions of tag sets that match tags on other resources. */
const SELECTOR_DOC =
    /\b(filter(s|ing)?|select(s|ed|ion)?|identif(y|ies)|criteri(a|on)|match(es)?|that match|exclude[sd]?|skip|targeted|trigger an evaluation|must exist|need to have|considered a valid target|required for resources)\b/i;

/** Descriptions of tag sets that AWS puts on something the resource creates. */
const CREATES_DOC =
    /\b(assign(ed)?|appl(y|ied)|add(s|ed)? (extra )?tags|attach(ed)? to|associated? with (this|the|a|all)|to tag this|tags (to|for|of) (the|this|each)|metadata that you (apply|can assign))\b/i;

/** Tags of another system than AWS resource tags: Lake Formation's LF-tags, Cognito's principal tags from user claims. */
const OTHER_TAG_SYSTEM_DOC = /\bLF-tags?\b|principal tags|user claims/i;

/** What a description says about the provider's defaultTags is not what the set is for. */
const DEFAULT_TAGS_SENTENCE = /\.?\s*If configured with a provider `defaultTags`[^.]*\.?/gi;

/**
 * What a nested tag set is, from the schema: a selector segment or name makes it a match rule;
 * then a description that says it matches (and not that it tags); then its structure (a sibling
 * `tagsAll` is the provider's computed copy of a created resource's tags, a sibling
 * `resourceType` makes it a tag specification); then a description that says it tags.
 */
export function nestedRole(segments: readonly string[], name: string, siblings: readonly string[], doc: string): NestedRole {
    if (segments.some((s) => SELECTOR_SEGMENT.test(s)) || SELECTOR_NAME.test(name)) {
        return "selects";
    }
    const purpose = doc.replace(DEFAULT_TAGS_SENTENCE, " ");
    if (OTHER_TAG_SYSTEM_DOC.test(purpose)) {
        return "unclassified";
    }
    const selects = SELECTOR_DOC.test(purpose);
    const creates = CREATES_DOC.test(purpose);
    if (selects && !creates) {
        return "selects";
    }
    if (siblings.includes("tagsAll") || siblings.includes("resourceType") || (creates && !selects)) {
        return "tags";
    }
    return "unclassified";
}

// ---------------------------------------------------------------- the walk

const MAX_DEPTH = 8;

/** Inputs that hold other resources in a document the schema does not type. */
function containerKind(inputs: readonly string[]): ContainerKind | undefined {
    if (inputs.some((name) => /^template(Body|Url|URL)$/.test(name))) {
        return "cloudformation-template";
    }
    // Cloud Control's resource (`typeName` + `desiredState`); pipes' `desiredState` is RUNNING or STOPPED.
    if (inputs.includes("desiredState") && inputs.includes("typeName")) {
        return "cloudcontrol-desired-state";
    }
    // aws-native's ExtensionResource: a CloudFormation `type` and its `properties`, with the tags property named.
    if (inputs.includes("properties") && inputs.includes("tagsProperty")) {
        return "cloudformation-extension";
    }
    return undefined;
}

interface Walk {
    inputs: Interfaces;
    nested: NestedTagSet[];
}

function walkObject(walk: Walk, ref: string, at: string[], seen: ReadonlySet<string>): void {
    const declaration = walk.inputs.byName.get(ref);
    if (!declaration || seen.has(ref) || at.length > MAX_DEPTH) {
        return;
    }
    const inner = new Set(seen).add(ref);
    const properties = propertiesOf(declaration, walk.inputs.source);
    const siblings = properties.map((p) => p.name);
    for (const property of properties) {
        walkProperty(walk, property, at, siblings, inner);
    }
}

/**
 * One property of an input object (`source` is the file declaring it): a tag set is recorded with
 * its role; an object or list of objects is walked. `at` holds the path so far, list segments
 * ending in `[]` (`tagSpecifications[].tags`).
 */
function walkProperty(
    walk: Walk,
    property: Property,
    at: readonly string[],
    siblings: readonly string[],
    seen: ReadonlySet<string>,
    source: ts.SourceFile = walk.inputs.source,
    role?: NestedRole,
): void {
    const shape = shapeOf(property.type, source, walk.inputs);
    if (TAG_NAME.test(property.name) && (shape.kind === "map" || shape.kind === "list" || shape.kind === "any")) {
        const doc = docOf(property.node, source);
        // The provider's defaultTags reach a nested set when the schema says so: a computed tagsAll beside it,
        // or a description that states how its keys combine with the provider's defaultTags.
        const defaults = siblings.includes("tagsAll") || DEFAULT_TAGS_DOC.test(doc);
        const set = tagSetOf([...at, property.name].join("."), shape, defaults);
        if (set) {
            walk.nested.push({ ...set, role: role ?? nestedRole(at.map(bare), property.name, siblings, doc), doc });
        }
    } else if (shape.kind === "object") {
        walkObject(walk, shape.ref, [...at, shape.array ? `${property.name}[]` : property.name], seen);
    }
}

/** A description saying how a tag set's keys combine with the provider's `defaultTags`. */
const DEFAULT_TAGS_DOC = /provider[- ]level|provider `?defaultTags`?/i;

/** A path segment without its list marker (`tagSpecifications[]` → `tagSpecifications`). */
function bare(segment: string): string {
    return segment.endsWith("[]") ? segment.slice(0, -2) : segment;
}

function resourceClasses(source: ts.SourceFile): { className: string; declaration: ts.ClassDeclaration }[] {
    return source.statements
        .filter((s): s is ts.ClassDeclaration => ts.isClassDeclaration(s) && s.name !== undefined)
        .filter((s) => s.heritageClauses?.[0]?.types[0]?.expression.getText(source) === "pulumi.CustomResource")
        .map((declaration) => ({ className: (declaration.name as ts.Identifier).text, declaration }));
}

/** The `static __pulumiType = '…'` of `className` in its compiled module. */
function pulumiTypeOf(moduleText: string, moduleFile: string, className: string): string {
    const start = moduleText.indexOf(`class ${className} extends pulumi.CustomResource`);
    const match = start < 0 ? null : /static __pulumiType = '([^']+)'/.exec(moduleText.slice(start));
    if (!match) {
        throw new Error(`${moduleFile}: no __pulumiType for class ${className}`);
    }
    return match[1];
}

function declarationFiles(root: string): string[] {
    const files: string[] = [];
    for (const entry of fs.readdirSync(root, { withFileTypes: true })) {
        const full = path.join(root, entry.name);
        if (entry.isDirectory()) {
            if (entry.name !== "types" && entry.name !== "node_modules") {
                files.push(...declarationFiles(full));
            }
        } else if (entry.name.endsWith(".d.ts")) {
            files.push(full);
        }
    }
    return files.sort();
}

/** The own tag set of a type: see the module comment. */
function ownTagSet(
    provider: ProviderName,
    className: string,
    properties: readonly Property[],
    hasTagsAll: boolean,
    source: ts.SourceFile,
    inputs: Interfaces,
): TagSetSpec | undefined {
    const shapes = new Map(properties.map((p) => [p.name, shapeOf(p.type, source, inputs)]));
    const tags = shapes.get("tags");
    if (provider === "aws") {
        if (tags?.kind === "map" && hasTagsAll) {
            return tagSetOf("tags", tags, true);
        }
        // List-shaped tags (Auto Scaling groups): the provider's defaultTags never reach them.
        return tags?.kind === "list" ? tagSetOf("tags", tags, false) : undefined;
    }
    // `tags`; else the type's own `<typeName>Tags…` property (Route 53's HostedZone: `hostedZoneTags`; Lex's Bot:
    // `botTags`, not `testBotAliasTags`); else its one typed `…Tags…` property (Cost Explorer's `resourceTags`,
    // Cognito's `userPoolTagsAtCreate`): the property CloudFormation's `tagging.tagProperty` names.
    const typed = properties.map((p) => p.name).filter((n) => n.includes("Tags") && ["map", "list"].includes(shapes.get(n)?.kind ?? ""));
    const named = `${className[0].toLowerCase()}${className.slice(1)}Tags`;
    const name =
        tags && (tags.kind === "map" || tags.kind === "list" || tags.kind === "any")
            ? "tags"
            : (typed.find((n) => n.startsWith(named)) ?? (typed.length === 1 ? typed[0] : undefined));
    if (!name) {
        return undefined;
    }
    const shape = shapes.get(name) as Shape;
    // MergeDefaultTags merges into string maps and key/value arrays; an untyped (any) property keeps what it is given.
    return tagSetOf(name, shape, shape.kind === "map" || shape.kind === "list");
}

/** Derives the tag schema of one provider package installed at `root`. */
export function deriveProvider(provider: ProviderName, root: string): ProviderTagSchema {
    const version = (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { version: string }).version;
    const inputs = inputInterfaces(path.join(root, "types", "input.d.ts"));
    const taggable: Record<string, TypeTagSpec> = {};
    const untaggable: string[] = [];
    const containers: Record<string, ContainerKind> = {};
    for (const file of declarationFiles(root)) {
        const content = fs.readFileSync(file, "utf8");
        if (!content.includes("extends pulumi.CustomResource")) {
            continue;
        }
        const source = ts.createSourceFile(file, content, ts.ScriptTarget.Latest, false);
        const moduleFile = file.replace(/\.d\.ts$/, ".js");
        const moduleText = fs.readFileSync(moduleFile, "utf8");
        for (const { className, declaration } of resourceClasses(source)) {
            const token = pulumiTypeOf(moduleText, moduleFile, className);
            const args = source.statements.find(
                (s): s is ts.InterfaceDeclaration => ts.isInterfaceDeclaration(s) && s.name.text === `${className}Args`,
            );
            const properties = args ? propertiesOf(args, source) : [];
            const hasTagsAll = declaration.members.some((m) => ts.isPropertyDeclaration(m) && m.name.getText(source) === "tagsAll");
            const walk: Walk = { inputs, nested: [] };
            const own = ownTagSet(provider, className, properties, hasTagsAll, source, inputs);
            const siblings = properties.map((p) => p.name);
            for (const property of properties.filter((p) => p.name !== own?.path && p.name !== "tagsAll")) {
                // A classic `tags` map without tagsAll is not the resource's own tags: it selects (inspector resource groups).
                const role = provider === "aws" && property.name === "tags" ? "selects" : undefined;
                walkProperty(walk, property, [], siblings, new Set(), source, role);
            }
            const container = containerKind(properties.map((p) => p.name));
            if (container) {
                containers[token] = container;
            }
            if (own || walk.nested.length > 0) {
                taggable[token] = { ...(own ? { own } : {}), ...(walk.nested.length > 0 ? { nested: walk.nested } : {}) };
            } else {
                untaggable.push(token);
            }
        }
    }
    const sorted = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(byEntryKey));
    return {
        package: `${PACKAGES[provider]}@${version}`,
        taggable: sorted(taggable),
        untaggable: untaggable.sort(),
        containers: sorted(containers),
    };
}

/** The fingerprint of what the derivation reads: each package's version and this script. */
export function inputsFingerprint(versions: Readonly<Record<ProviderName, string>>): string {
    const script = fs.readFileSync(__filename.replace(/\.js$/, ".ts"), "utf8");
    return crypto.createHash("sha256").update(JSON.stringify({ versions, script })).digest("hex");
}

export function installedVersions(): Record<ProviderName, string> {
    const version = (pkg: string) =>
        (JSON.parse(fs.readFileSync(require.resolve(`${pkg}/package.json`), "utf8")) as { version: string }).version;
    return { aws: version(PACKAGES.aws), "aws-native": version(PACKAGES["aws-native"]) };
}

/** Derives the whole schema from the installed packages. */
export function deriveTagSchema(): TagSchema {
    const root = (pkg: string) => path.dirname(require.resolve(`${pkg}/package.json`));
    return {
        generatedBy: "npm run gen:taggable (scripts/aws/taggable-types.ts); do not edit",
        fingerprint: inputsFingerprint(installedVersions()),
        providers: {
            aws: deriveProvider("aws", root(PACKAGES.aws)),
            "aws-native": deriveProvider("aws-native", root(PACKAGES["aws-native"])),
        },
    };
}

export function serialize(schema: TagSchema): string {
    return `${JSON.stringify(schema, null, 1)}\n`;
}

function counts(schema: ProviderTagSchema): string {
    const containers = Object.keys(schema.containers).length;
    return `${Object.keys(schema.taggable).length} with tag sets, ${schema.untaggable.length} untaggable, ${containers} containers (${schema.package})`;
}

if (require.main === module) {
    const schema = deriveTagSchema();
    const written = serialize(schema);
    if (process.argv.includes("--check")) {
        const committed = fs.readFileSync(OUTPUT_FILE, "utf8");
        if (committed !== written) {
            console.error(`${path.relative(process.cwd(), OUTPUT_FILE)} is stale: run npm run gen:taggable`);
            process.exitCode = 1;
        } else {
            console.log(`${path.relative(process.cwd(), OUTPUT_FILE)} is current`);
        }
    } else {
        fs.writeFileSync(OUTPUT_FILE, written);
        for (const provider of Object.keys(schema.providers) as ProviderName[]) {
            console.log(`${provider}: ${counts(schema.providers[provider])}`);
        }
    }
}
