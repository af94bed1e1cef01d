/**
 * A strict RFC 6902 applier for tests (add, replace, remove, test): it throws where the API
 * server's patcher would fail, e.g. adding below a missing parent or replacing a missing member.
 */
type Json = unknown;

function parsePointer(pointer: string): string[] {
    if (pointer === "") return [];
    if (!pointer.startsWith("/")) throw new Error(`invalid pointer ${pointer}`);
    return pointer
        .slice(1)
        .split("/")
        .map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function parentOf(document: Json, tokens: string[], pointer: string): Json {
    let node = document;
    for (const token of tokens.slice(0, -1)) {
        if (Array.isArray(node)) node = node[Number(token)];
        else if (node && typeof node === "object") node = (node as Record<string, Json>)[token];
        else throw new Error(`path ${pointer}: parent missing`);
        if (node === undefined) throw new Error(`path ${pointer}: parent missing`);
    }
    return node;
}

function arrayIndex(array: Json[], token: string, pointer: string, allowEnd: boolean): number {
    if (token === "-" && allowEnd) return array.length;
    if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`path ${pointer}: bad array index`);
    const index = Number(token);
    if (index > array.length || (!allowEnd && index === array.length)) throw new Error(`path ${pointer}: index out of range`);
    return index;
}

export interface PatchOperation {
    op: string;
    path: string;
    value?: Json;
}

/** Applies the patch to a deep copy of the document and returns the copy. */
export function applyJsonPatch<T>(document: T, operations: readonly PatchOperation[]): T {
    let result: Json = structuredClone(document);
    for (const operation of operations) {
        const tokens = parsePointer(operation.path);
        if (tokens.length === 0) {
            if (operation.op === "add" || operation.op === "replace") result = structuredClone(operation.value);
            else throw new Error(`unsupported op on root: ${operation.op}`);
            continue;
        }
        const parent = parentOf(result, tokens, operation.path);
        const last = tokens[tokens.length - 1];
        const value = structuredClone(operation.value);
        if (Array.isArray(parent)) {
            if (operation.op === "add") parent.splice(arrayIndex(parent, last, operation.path, true), 0, value);
            else if (operation.op === "replace") parent[arrayIndex(parent, last, operation.path, false)] = value;
            else if (operation.op === "remove") parent.splice(arrayIndex(parent, last, operation.path, false), 1);
            else throw new Error(`unsupported op ${operation.op}`);
        } else if (parent && typeof parent === "object") {
            const record = parent as Record<string, Json>;
            if (operation.op === "add") record[last] = value;
            else if (operation.op === "replace" || operation.op === "remove") {
                if (!(last in record)) throw new Error(`path ${operation.path}: member missing`);
                if (operation.op === "replace") record[last] = value;
                else delete record[last];
            } else throw new Error(`unsupported op ${operation.op}`);
        } else throw new Error(`path ${operation.path}: parent is not a container`);
    }
    return result as T;
}
