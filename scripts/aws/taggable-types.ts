/**
 * `npm run gen:taggable`: derives which AWS resource types take tags from @pulumi/aws itself,
 * so the list can never go stale by hand. It reads the package's type declarations: every
 * `class X extends pulumi.CustomResource` whose `XArgs` interface has a `tags` input is
 * classified by the shape of that input:
 *
 * - `map`: `{[key: string]: string}` on a class that also has the provider-computed `tagsAll`
 *   output (almost every type). The provider's `defaultTags` reach exactly the resources with
 *   `tagsAll`; a string map without it is not the resource's own tags:
 *   `aws:inspector/resourceGroup:ResourceGroup`'s `tags` "are used to select the EC2 instances
 *   to be included in an Amazon Inspector assessment target" (its declaration's doc), so it is
 *   `other`;
 * - `list`: a list of `{key, value, ...}` blocks (e.g. `aws:autoscaling/group:Group`), with the
 *   item's other required fields recorded so the tagger knows what to fill in;
 * - `other`: a `tags` input that is neither (e.g. a tag *filter*); recorded, never tagged.
 *
 * Type tokens come from each module's `__pulumiType`. Writes
 * `components/aws-tags/taggable-types.json`; a test regenerates it in memory and fails when the
 * committed file differs (after an @pulumi/aws upgrade, run this script).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";
import { byEntryKey } from "../../components/shared/order";

export const OUTPUT_FILE = path.resolve(__dirname, "..", "..", "components", "aws-tags", "taggable-types.json");

/** A list-shaped `tags` input: which item fields hold the key and value, and what else each item requires. */
export interface ListTagShape {
    itemType: string;
    keyField: string;
    valueField: string;
    /** Other required fields of an item, with their TypeScript type (e.g. `propagateAtLaunch: boolean`). */
    requiredFields: Record<string, string>;
}

export interface TaggableTypes {
    source: string;
    generatedBy: string;
    map: string[];
    list: Record<string, ListTagShape>;
    other: Record<string, string>;
}

/** The declaration text of a type node with `pulumi.Input<…>` wrappers and `| undefined` removed. */
function unwrap(node: ts.TypeNode): ts.TypeNode {
    let current = node;
    for (;;) {
        if (ts.isUnionTypeNode(current)) {
            const defined = current.types.filter((t) => t.kind !== ts.SyntaxKind.UndefinedKeyword);
            if (defined.length !== 1) {
                return current;
            }
            current = defined[0];
            continue;
        }
        if (ts.isTypeReferenceNode(current) && current.typeName.getText() === "pulumi.Input" && current.typeArguments?.length === 1) {
            current = current.typeArguments[0];
            continue;
        }
        if (ts.isParenthesizedTypeNode(current)) {
            current = current.type;
            continue;
        }
        return current;
    }
}

function isStringMap(node: ts.TypeNode): boolean {
    if (!ts.isTypeLiteralNode(node) || node.members.length !== 1) {
        return false;
    }
    const member = node.members[0];
    if (!ts.isIndexSignatureDeclaration(member) || !member.type) {
        return false;
    }
    const keyType = member.parameters[0]?.type;
    return keyType?.kind === ts.SyntaxKind.StringKeyword && unwrap(member.type).kind === ts.SyntaxKind.StringKeyword;
}

/** `inputs.autoscaling.GroupTag` for a list of such items, else undefined. */
function listItemTypeName(node: ts.TypeNode): string | undefined {
    if (!ts.isArrayTypeNode(node)) {
        return undefined;
    }
    const item = unwrap(node.elementType);
    if (!ts.isTypeReferenceNode(item)) {
        return undefined;
    }
    const name = item.typeName.getText();
    return name.startsWith("inputs.") ? name.slice("inputs.".length) : undefined;
}

/** Interfaces of `types/input.d.ts` by dotted name (`autoscaling.GroupTag`). */
function inputInterfaces(file: string): Map<string, ts.InterfaceDeclaration> {
    const source = ts.createSourceFile(file, fs.readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
    const found = new Map<string, ts.InterfaceDeclaration>();
    const visit = (statements: ts.NodeArray<ts.Statement>, prefix: string) => {
        for (const statement of statements) {
            if (ts.isModuleDeclaration(statement) && statement.body && ts.isModuleBlock(statement.body)) {
                visit(statement.body.statements, `${prefix}${statement.name.getText()}.`);
            } else if (ts.isInterfaceDeclaration(statement)) {
                found.set(`${prefix}${statement.name.text}`, statement);
            }
        }
    };
    visit(source.statements, "");
    return found;
}

function listShape(itemType: string, declaration: ts.InterfaceDeclaration | undefined): ListTagShape | undefined {
    if (!declaration) {
        return undefined;
    }
    const fields = new Map<string, { required: boolean; type: string }>();
    for (const member of declaration.members) {
        if (ts.isPropertySignature(member) && member.type) {
            fields.set(member.name.getText(), { required: !member.questionToken, type: unwrap(member.type).getText() });
        }
    }
    if (fields.get("key")?.type !== "string" || fields.get("value")?.type !== "string") {
        return undefined;
    }
    const requiredFields: Record<string, string> = {};
    for (const [name, field] of [...fields].sort(byEntryKey)) {
        if (field.required && name !== "key" && name !== "value") {
            requiredFields[name] = field.type;
        }
    }
    return { itemType, keyField: "key", valueField: "value", requiredFields };
}

interface Candidate {
    token: string;
    tags: ts.TypeNode;
    /** Whether the class declares the provider-computed `tagsAll` output. */
    hasTagsAll: boolean;
}

/** Resource classes of one module file whose Args interface declares `tags`. */
function candidatesIn(declarationFile: string): Candidate[] {
    const text = fs.readFileSync(declarationFile, "utf8");
    if (!text.includes("tags?:") && !text.includes("tags:")) {
        return [];
    }
    const source = ts.createSourceFile(declarationFile, text, ts.ScriptTarget.Latest, true);
    const classes = new Map<string, ts.ClassDeclaration>();
    const args = new Map<string, ts.InterfaceDeclaration>();
    for (const statement of source.statements) {
        if (ts.isClassDeclaration(statement) && statement.name) {
            const base = statement.heritageClauses?.[0]?.types[0]?.expression.getText();
            if (base === "pulumi.CustomResource") {
                classes.set(statement.name.text, statement);
            }
        } else if (ts.isInterfaceDeclaration(statement) && statement.name.text.endsWith("Args")) {
            args.set(statement.name.text.slice(0, -"Args".length), statement);
        }
    }
    const candidates: Candidate[] = [];
    for (const [className, declaration] of classes) {
        const tags = args
            .get(className)
            ?.members.find((m): m is ts.PropertySignature => ts.isPropertySignature(m) && m.name.getText() === "tags");
        if (!tags?.type) {
            continue;
        }
        const token = pulumiTypeOf(declarationFile.replace(/\.d\.ts$/, ".js"), className);
        const hasTagsAll = declaration.members.some((m) => ts.isPropertyDeclaration(m) && m.name.getText() === "tagsAll");
        candidates.push({ token, tags: tags.type, hasTagsAll });
    }
    return candidates;
}

/** The `static __pulumiType = '…'` of `className` in its compiled module. */
function pulumiTypeOf(moduleFile: string, className: string): string {
    const text = fs.readFileSync(moduleFile, "utf8");
    const start = text.indexOf(`class ${className} extends pulumi.CustomResource`);
    const match = start < 0 ? null : /static __pulumiType = '([^']+)'/.exec(text.slice(start));
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

/** Derives the taggable types from the @pulumi/aws package installed at `awsRoot`. */
export function deriveTaggableTypes(awsRoot = path.dirname(require.resolve("@pulumi/aws/package.json"))): TaggableTypes {
    const version = (JSON.parse(fs.readFileSync(path.join(awsRoot, "package.json"), "utf8")) as { version: string }).version;
    const map: string[] = [];
    const list: Record<string, ListTagShape> = {};
    const other: Record<string, string> = {};
    let inputs: Map<string, ts.InterfaceDeclaration> | undefined;
    for (const file of declarationFiles(awsRoot)) {
        for (const { token, tags, hasTagsAll } of candidatesIn(file)) {
            const shape = unwrap(tags);
            if (isStringMap(shape)) {
                if (hasTagsAll) {
                    map.push(token);
                } else {
                    other[token] = `${shape.getText().replace(/\s+/g, " ")} without tagsAll: not the resource's own tags`;
                }
                continue;
            }
            const itemType = listItemTypeName(shape);
            if (itemType) {
                inputs ??= inputInterfaces(path.join(awsRoot, "types", "input.d.ts"));
                const found = listShape(itemType, inputs.get(itemType));
                if (found) {
                    list[token] = found;
                    continue;
                }
            }
            other[token] = shape.getText().replace(/\s+/g, " ");
        }
    }
    const sortKeys = <T>(record: Record<string, T>) => Object.fromEntries(Object.entries(record).sort(byEntryKey));
    return {
        source: `@pulumi/aws@${version}`,
        generatedBy: "npm run gen:taggable (scripts/aws/taggable-types.ts); do not edit",
        map: map.sort(),
        list: sortKeys(list),
        other: sortKeys(other),
    };
}

export function serialize(types: TaggableTypes): string {
    return `${JSON.stringify(types, null, 2)}\n`;
}

if (require.main === module) {
    const types = deriveTaggableTypes();
    fs.writeFileSync(OUTPUT_FILE, serialize(types));
    console.log(
        `${path.relative(process.cwd(), OUTPUT_FILE)}: ${types.map.length} map-tagged, ${Object.keys(types.list).length} list-tagged, ${Object.keys(types.other).length} other (${types.source})`,
    );
}
