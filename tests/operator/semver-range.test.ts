import fc from "fast-check";
import { compareSemVer, inSemVerRange, parseSemVer, parseSemVerRange, type SemVer } from "../../components/operator/semver-range";

const VERSIONS = [
    "0.9.0",
    "1.0.0",
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta.1",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.1.0",
    "1.2.0",
    "1.2.3",
    "1.2.9",
    "1.3.0",
    "1.3.0-rc.1",
    "2.0.0",
    "2.1.0",
];

/**
 * Which of VERSIONS each range holds, or "error" when it does not parse: computed by Go with
 * github.com/blang/semver/v4 v4.0.0 (OLM's library), `ParseRange(r)` then `r(MustParse(v))`,
 * quirks included (`!=1.2.x` holds nothing: both halves of its expansion land in one conjunction),
 * with pre-release order (`1.0.0-alpha < 1.0.0-alpha.1 < 1.0.0-alpha.beta`), plain `!=`, every
 * operator on an exact version, and one-character pieces (dropped, as range.go's splitAndTrim drops them).
 */
const BLANG: Record<string, string[] | "error"> = {
    "!=1.0.0-alpha.1": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "1.2.3",
        "1.2.9",
        "1.3.0",
        "1.3.0-rc.1",
        "2.0.0",
        "2.1.0",
    ],
    "!=1.2.3": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "1.2.9",
        "1.3.0",
        "1.3.0-rc.1",
        "2.0.0",
        "2.1.0",
    ],
    "!=1.2.3 !=2.0.0": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "1.2.9",
        "1.3.0",
        "1.3.0-rc.1",
        "2.1.0",
    ],
    "!=1.2.x": [],
    "!=1.x.0": "error",
    "1.0.0 ||": "error",
    "1.0.0 ||  2.0.0": ["1.0.0", "2.0.0"],
    "1.2.3": ["1.2.3"],
    "1.2.3 x <2.0.0": ["1.2.3"],
    "1.2.x": ["1.2.0", "1.2.3", "1.2.9", "1.3.0-rc.1"],
    "1.2.x <1.2.5": ["1.2.0", "1.2.3"],
    "1.x.0": "error",
    "1.x.3": "error",
    "<  2.0.0 >=  1.2.0": ["1.2.0", "1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1"],
    "<1.0.0-alpha.1": ["0.9.0", "1.0.0-alpha"],
    "<1.0.0-beta.2": ["0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.1"],
    "<1.x.0": ["0.9.0", "1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.1", "1.0.0-beta.11", "1.0.0-rc.1"],
    "<=1.2.3": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "1.2.3",
    ],
    "<=1.x": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.1.0",
        "1.2.0",
        "1.2.3",
        "1.2.9",
        "1.3.0",
        "1.3.0-rc.1",
    ],
    "<=1.x.0": "error",
    "=1.2.3": ["1.2.3"],
    "=1.x.x": ["1.0.0"],
    "==1.2.3": ["1.2.3"],
    ">  1.2.9": ["1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    ">0.0.0 !1.1.0": [
        "0.9.0",
        "1.0.0",
        "1.0.0-alpha",
        "1.0.0-alpha.1",
        "1.0.0-alpha.beta",
        "1.0.0-beta.1",
        "1.0.0-beta.11",
        "1.0.0-rc.1",
        "1.2.0",
        "1.2.3",
        "1.2.9",
        "1.3.0",
        "1.3.0-rc.1",
        "2.0.0",
        "2.1.0",
    ],
    ">1.0.0-alpha <1.0.0-alpha.beta": ["1.0.0-alpha.1"],
    ">1.2.x": ["1.3.0", "2.0.0", "2.1.0"],
    ">1.x.0": "error",
    ">=  1.0.0": ["1.0.0", "1.1.0", "1.2.0", "1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    ">= 1.0.0 < 1.3.0": ["1.0.0", "1.1.0", "1.2.0", "1.2.3", "1.2.9", "1.3.0-rc.1"],
    ">=1.0": "error",
    ">=1.0.0 !=1.2.3 <2.0.0": ["1.0.0", "1.1.0", "1.2.0", "1.2.9", "1.3.0", "1.3.0-rc.1"],
    ">=1.0.0 <1.1.0 || >=2.0.0": ["1.0.0", "2.0.0", "2.1.0"],
    ">=1.0.0 <1.3.0": ["1.0.0", "1.1.0", "1.2.0", "1.2.3", "1.2.9", "1.3.0-rc.1"],
    ">=1.0.0 ab": "error",
    ">=1.0.0 x": ["1.0.0", "1.1.0", "1.2.0", "1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    ">=1.0.0-alpha <1.0.0": ["1.0.0-alpha", "1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.1", "1.0.0-beta.11", "1.0.0-rc.1"],
    ">=1.0.0-alpha.1 <1.0.0-beta.11": ["1.0.0-alpha.1", "1.0.0-alpha.beta", "1.0.0-beta.1"],
    ">=1.2.3 a": ["1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    ">=1.x.0": ["1.0.0", "1.1.0", "1.2.0", "1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    ">=x": "error",
    "a >=1.2.3": ["1.2.3", "1.2.9", "1.3.0", "1.3.0-rc.1", "2.0.0", "2.1.0"],
    "x 1.2.3": ["1.2.3"],
    "x.1.2": ["1.2.0"],
    xx: "error",
    "|| 1.0.0": "error",
    "~1.2.0": "error",
};

/**
 * Every pair of VERSIONS as `<a> <Compare(a, b)> <b>`, computed by Go with blang/semver v4.0.0:
 * `MustParse(a).Compare(MustParse(b))` (SemVer 2.0.0 precedence: numeric identifiers below
 * alphanumeric ones, a shorter pre-release below a longer one it prefixes).
 */
const BLANG_ORDER: string[] = [
    "0.9.0 -1 1.0.0",
    "0.9.0 -1 1.0.0-alpha",
    "0.9.0 -1 1.0.0-alpha.1",
    "0.9.0 -1 1.0.0-alpha.beta",
    "0.9.0 -1 1.0.0-beta.1",
    "0.9.0 -1 1.0.0-beta.11",
    "0.9.0 -1 1.0.0-rc.1",
    "0.9.0 -1 1.1.0",
    "0.9.0 -1 1.2.0",
    "0.9.0 -1 1.2.3",
    "0.9.0 -1 1.2.9",
    "0.9.0 -1 1.3.0",
    "0.9.0 -1 1.3.0-rc.1",
    "0.9.0 -1 2.0.0",
    "0.9.0 -1 2.1.0",
    "1.0.0 1 1.0.0-alpha",
    "1.0.0 1 1.0.0-alpha.1",
    "1.0.0 1 1.0.0-alpha.beta",
    "1.0.0 1 1.0.0-beta.1",
    "1.0.0 1 1.0.0-beta.11",
    "1.0.0 1 1.0.0-rc.1",
    "1.0.0 -1 1.1.0",
    "1.0.0 -1 1.2.0",
    "1.0.0 -1 1.2.3",
    "1.0.0 -1 1.2.9",
    "1.0.0 -1 1.3.0",
    "1.0.0 -1 1.3.0-rc.1",
    "1.0.0 -1 2.0.0",
    "1.0.0 -1 2.1.0",
    "1.0.0-alpha -1 1.0.0-alpha.1",
    "1.0.0-alpha -1 1.0.0-alpha.beta",
    "1.0.0-alpha -1 1.0.0-beta.1",
    "1.0.0-alpha -1 1.0.0-beta.11",
    "1.0.0-alpha -1 1.0.0-rc.1",
    "1.0.0-alpha -1 1.1.0",
    "1.0.0-alpha -1 1.2.0",
    "1.0.0-alpha -1 1.2.3",
    "1.0.0-alpha -1 1.2.9",
    "1.0.0-alpha -1 1.3.0",
    "1.0.0-alpha -1 1.3.0-rc.1",
    "1.0.0-alpha -1 2.0.0",
    "1.0.0-alpha -1 2.1.0",
    "1.0.0-alpha.1 -1 1.0.0-alpha.beta",
    "1.0.0-alpha.1 -1 1.0.0-beta.1",
    "1.0.0-alpha.1 -1 1.0.0-beta.11",
    "1.0.0-alpha.1 -1 1.0.0-rc.1",
    "1.0.0-alpha.1 -1 1.1.0",
    "1.0.0-alpha.1 -1 1.2.0",
    "1.0.0-alpha.1 -1 1.2.3",
    "1.0.0-alpha.1 -1 1.2.9",
    "1.0.0-alpha.1 -1 1.3.0",
    "1.0.0-alpha.1 -1 1.3.0-rc.1",
    "1.0.0-alpha.1 -1 2.0.0",
    "1.0.0-alpha.1 -1 2.1.0",
    "1.0.0-alpha.beta -1 1.0.0-beta.1",
    "1.0.0-alpha.beta -1 1.0.0-beta.11",
    "1.0.0-alpha.beta -1 1.0.0-rc.1",
    "1.0.0-alpha.beta -1 1.1.0",
    "1.0.0-alpha.beta -1 1.2.0",
    "1.0.0-alpha.beta -1 1.2.3",
    "1.0.0-alpha.beta -1 1.2.9",
    "1.0.0-alpha.beta -1 1.3.0",
    "1.0.0-alpha.beta -1 1.3.0-rc.1",
    "1.0.0-alpha.beta -1 2.0.0",
    "1.0.0-alpha.beta -1 2.1.0",
    "1.0.0-beta.1 -1 1.0.0-beta.11",
    "1.0.0-beta.1 -1 1.0.0-rc.1",
    "1.0.0-beta.1 -1 1.1.0",
    "1.0.0-beta.1 -1 1.2.0",
    "1.0.0-beta.1 -1 1.2.3",
    "1.0.0-beta.1 -1 1.2.9",
    "1.0.0-beta.1 -1 1.3.0",
    "1.0.0-beta.1 -1 1.3.0-rc.1",
    "1.0.0-beta.1 -1 2.0.0",
    "1.0.0-beta.1 -1 2.1.0",
    "1.0.0-beta.11 -1 1.0.0-rc.1",
    "1.0.0-beta.11 -1 1.1.0",
    "1.0.0-beta.11 -1 1.2.0",
    "1.0.0-beta.11 -1 1.2.3",
    "1.0.0-beta.11 -1 1.2.9",
    "1.0.0-beta.11 -1 1.3.0",
    "1.0.0-beta.11 -1 1.3.0-rc.1",
    "1.0.0-beta.11 -1 2.0.0",
    "1.0.0-beta.11 -1 2.1.0",
    "1.0.0-rc.1 -1 1.1.0",
    "1.0.0-rc.1 -1 1.2.0",
    "1.0.0-rc.1 -1 1.2.3",
    "1.0.0-rc.1 -1 1.2.9",
    "1.0.0-rc.1 -1 1.3.0",
    "1.0.0-rc.1 -1 1.3.0-rc.1",
    "1.0.0-rc.1 -1 2.0.0",
    "1.0.0-rc.1 -1 2.1.0",
    "1.1.0 -1 1.2.0",
    "1.1.0 -1 1.2.3",
    "1.1.0 -1 1.2.9",
    "1.1.0 -1 1.3.0",
    "1.1.0 -1 1.3.0-rc.1",
    "1.1.0 -1 2.0.0",
    "1.1.0 -1 2.1.0",
    "1.2.0 -1 1.2.3",
    "1.2.0 -1 1.2.9",
    "1.2.0 -1 1.3.0",
    "1.2.0 -1 1.3.0-rc.1",
    "1.2.0 -1 2.0.0",
    "1.2.0 -1 2.1.0",
    "1.2.3 -1 1.2.9",
    "1.2.3 -1 1.3.0",
    "1.2.3 -1 1.3.0-rc.1",
    "1.2.3 -1 2.0.0",
    "1.2.3 -1 2.1.0",
    "1.2.9 -1 1.3.0",
    "1.2.9 -1 1.3.0-rc.1",
    "1.2.9 -1 2.0.0",
    "1.2.9 -1 2.1.0",
    "1.3.0 1 1.3.0-rc.1",
    "1.3.0 -1 2.0.0",
    "1.3.0 -1 2.1.0",
    "1.3.0-rc.1 -1 2.0.0",
    "1.3.0-rc.1 -1 2.1.0",
    "2.0.0 -1 2.1.0",
];

function version(text: string): SemVer {
    const parsed = parseSemVer(text);
    if (parsed instanceof Error) {
        throw parsed;
    }
    return parsed;
}

describe("olm.skipRange as OLM evaluates it (blang/semver v4)", () => {
    test.each(Object.keys(BLANG))(
        "GIVEN the range %j WHEN each version is tested THEN the versions in it are exactly blang/semver's",
        (text) => {
            const range = parseSemVerRange(text);
            const got = range instanceof Error ? "error" : VERSIONS.filter((v) => inSemVerRange(version(v), range));
            expect(got).toEqual(BLANG[text]);
        },
    );

    test("GIVEN version strings WHEN parsed THEN they are strict as blang's Parse is (Go: 1.0 false, 01.0.0 false, 1.0.0-01 false, 1.0.0+build.1 true, 1.0.0-rc.1+b true, v1.0.0 false)", () => {
        expect(
            ["1.0", "01.0.0", "1.0.0-01", "1.0.0+build.1", "1.0.0-rc.1+b", "v1.0.0"].map((v) => !(parseSemVer(v) instanceof Error)),
        ).toEqual([false, false, false, true, true, false]);
    });

    test("GIVEN every pair of the table's versions WHEN compared THEN the order is blang/semver's", () => {
        const got = BLANG_ORDER.map((line) => {
            const [a, , b] = line.split(" ");
            return `${a} ${compareSemVer(version(a), version(b))} ${b}`;
        });
        expect(got).toEqual(BLANG_ORDER);
        expect(BLANG_ORDER).toHaveLength((VERSIONS.length * (VERSIONS.length - 1)) / 2);
    });

    test("GIVEN malformed build metadata and pre-release identifiers WHEN parsed THEN each is accepted or refused as blang's Parse does", () => {
        // Computed by Go: semver.Parse(v) == nil, github.com/blang/semver/v4 v4.0.0.
        const blang: Record<string, boolean> = {
            "+1.0.0": false,
            "-1.0.0": false,
            "1.0.0+": false,
            "1.0.0+b_1": false,
            "1.0.0+build..1": false,
            "1.0.0+build.1-x": true,
            "1.0.0-": false,
            "1.0.0-a_b": false,
            "1.0.0-alpha..1": false,
        };
        expect(Object.fromEntries(Object.keys(blang).map((v) => [v, !(parseSemVer(v) instanceof Error)]))).toEqual(blang);
    });

    test('GIVEN a piece with no version in it WHEN the range is parsed THEN the error names that piece (blang: "Could not get version from string"), which the upgrade check shows', () => {
        for (const [range, piece] of [
            [">=1.0.0 ab", "ab"],
            [">=x", ">=x"],
        ]) {
            const parsed = parseSemVerRange(range);
            expect(parsed).toBeInstanceOf(Error);
            expect((parsed as Error).message).toBe(`no version in ${JSON.stringify(piece)}`);
        }
    });

    test("GIVEN any two versions WHEN compared THEN the order is antisymmetric, build metadata is ignored, and a pre-release sorts below its release", () => {
        const identifier = fc.oneof(fc.nat(20).map(String), fc.constantFrom("alpha", "beta", "rc"));
        const semver = fc
            .tuple(fc.nat(3), fc.nat(3), fc.nat(3), fc.array(identifier, { maxLength: 2 }))
            .map(([a, b, c, pre]) => `${a}.${b}.${c}${pre.length > 0 ? `-${pre.join(".")}` : ""}`);
        fc.assert(
            fc.property(semver, semver, (a, b) => {
                // Equal versions compare 0 both ways (-0 would fail toBe's Object.is).
                const back = compareSemVer(version(b), version(a));
                expect(compareSemVer(version(a), version(b))).toBe(back === 0 ? 0 : -back);
                expect(compareSemVer(version(`${a}+build.7`), version(a))).toBe(0);
                const release = a.split("-")[0];
                expect(compareSemVer(version(a), version(release))).toBe(a === release ? 0 : -1);
            }),
        );
    });
});
