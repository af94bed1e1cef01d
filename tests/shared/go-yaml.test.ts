/**
 * Bundle YAML read as OLM's Go tooling reads it (components/shared/go-yaml.ts). The expected
 * answers were computed by Go, not by the code under test: tests/catalog/oracle/ runs
 * k8s.io/apimachinery's NewYAMLOrJSONDecoder (as opm decodes a bundle file) and sigs.k8s.io/yaml
 * v1.6.0's YAMLToJSON over each made-up manifest of yaml-cases.json and wrote
 * yaml-cases.expected.json (`go run . yaml yaml-cases.json`); values are compared by the SHA-256 of
 * Go's canonical JSON. `npm run test:catalog` runs the same comparison over every manifest of the
 * 248 community bundles.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { goDecodeManifest, goDocumentCount, goYamlDocuments, resolvePlain } from "../../components/shared/go-yaml";
import { goJson, goJsonSha256 } from "../helpers/go-json";
import { ROOT } from "../helpers/root";

interface Decoded {
    error?: string;
    empty?: boolean;
    sha256?: string;
    value?: unknown;
}
interface YamlCase {
    name: string;
    yaml: string;
    expected: { opm: Decoded; documents: Decoded[] };
}

const CASES: YamlCase[] = JSON.parse(fs.readFileSync(path.join(ROOT, "tests/catalog/oracle/yaml-cases.expected.json"), "utf8"));

type Result = { ok: true; value: unknown } | { ok: false; error: string };

/** Accept/refuse and the value (by hash), as one comparable line; a decoded file may hold no object. */
function outcome(result: Result, noObject = false): string {
    if (!result.ok) return "refused";
    return noObject && result.value === null ? "no object" : goJsonSha256(result.value);
}
function expectedOutcome(decoded: Decoded): string {
    return decoded.error !== undefined ? "refused" : decoded.empty ? "no object" : (decoded.sha256 as string);
}

describe("YAML as OLM's Go tooling reads it (answers computed by Go)", () => {
    test("GIVEN the made-up manifests WHEN the table is read THEN it covers every class it names", () => {
        expect(CASES.length).toBeGreaterThanOrEqual(50);
        expect(CASES.filter((c) => c.expected.opm.error !== undefined).length).toBeGreaterThanOrEqual(10);
    });

    test.each(CASES.map((c) => [c.name, c] as const))("GIVEN %s WHEN decoded as opm decodes a bundle file THEN Go's answer", (_, c) => {
        const result = goDecodeManifest(c.yaml);
        expect(outcome(result, true)).toEqual(expectedOutcome(c.expected.opm));
        if (result.ok && result.value !== null) {
            expect(goJson(result.value)).toEqual(goJson(c.expected.opm.value)); // the same value, readable when it differs
        }
    });

    test.each(CASES.map((c) => [c.name, c] as const))("GIVEN %s WHEN split into documents THEN each is Go's", (_, c) => {
        expect(goYamlDocuments(c.yaml).map((d) => outcome(d))).toEqual(c.expected.documents.map(expectedOutcome));
        const readable = c.expected.documents.filter((d) => d.error === undefined).length;
        expect(goDocumentCount(c.yaml)).toBeGreaterThanOrEqual(readable);
    });

    test("GIVEN YAML 1.1 plain scalars WHEN resolved THEN as go.yaml.in/yaml/v2 resolves them", () => {
        expect([
            resolvePlain("on"),
            resolvePlain("Y"),
            resolvePlain("off"),
            resolvePlain("~"),
            resolvePlain("0755"),
            resolvePlain("0x1F"),
        ]).toEqual([true, true, false, null, 493n, 31n]);
        expect([
            resolvePlain("1_000"),
            resolvePlain("08"),
            resolvePlain(".5"),
            resolvePlain("2001-12-14"),
            resolvePlain("1e"),
            resolvePlain("tRue"),
        ]).toEqual([1000n, 8, 0.5, "2001-12-14", "1e", "tRue"]);
    });
});
