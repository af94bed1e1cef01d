/**
 * Every link between the repository's Markdown pages resolves: the file exists and, for a
 * `#fragment`, the target page has a heading with that anchor. Anchors follow GitHub's rule
 * (github-slugger): lowercase, punctuation other than `-` and `_` dropped, each space a `-`, and a
 * repeated heading gets `-1`, `-2`, ...
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { ROOT } from "../helpers/render";

const markdownFiles = execFileSync("git", ["ls-files", "*.md"], { cwd: ROOT, encoding: "utf8" })
    .split("\n")
    .filter((file) => file !== "" && fs.existsSync(path.join(ROOT, file)));

/** Lines outside fenced code blocks: a `#` comment in a shell block is not a heading, a `[x](y)` there not a link. */
function proseLines(text: string): string[] {
    let fenced = false;
    return text.split("\n").filter((line) => {
        if (line.startsWith("```")) {
            fenced = !fenced;
            return false;
        }
        return !fenced;
    });
}

export function githubAnchors(text: string): Set<string> {
    const anchors = new Set<string>();
    const seen = new Map<string, number>();
    for (const line of proseLines(text)) {
        const heading = /^#{1,6} (.*)$/.exec(line);
        if (!heading) {
            continue;
        }
        const base = heading[1]
            .trim()
            .toLowerCase()
            .replace(/[^\p{L}\p{N}\p{M} _-]/gu, "")
            .replace(/ /g, "-");
        const count = seen.get(base) ?? 0;
        seen.set(base, count + 1);
        anchors.add(count === 0 ? base : `${base}-${count}`);
    }
    return anchors;
}

function localLinks(text: string): string[] {
    // Inline code may show link syntax as an example; it is not a link.
    const prose = proseLines(text).map((line) => line.replace(/`[^`]*`/g, ""));
    return [...prose.join("\n").matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]).filter((target) => !/^[a-z]+:/i.test(target));
}

describe("Markdown links", () => {
    test("GIVEN the README and the docs WHEN listed THEN the README points to every docs page", () => {
        const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
        const pages = markdownFiles.filter((file) => file.startsWith("docs/"));
        expect(pages.length).toBeGreaterThan(10);
        expect(pages.filter((page) => !readme.includes(`](${page})`))).toEqual([]);
    });

    test("GIVEN every tracked Markdown file WHEN its local links are followed THEN each file and anchor exists", () => {
        const broken: string[] = [];
        for (const file of markdownFiles) {
            const text = fs.readFileSync(path.join(ROOT, file), "utf8");
            for (const link of localLinks(text)) {
                const [target, fragment] = link.split("#", 2);
                const resolved = target === "" ? file : path.join(path.dirname(file), decodeURIComponent(target));
                if (!fs.existsSync(path.join(ROOT, resolved))) {
                    broken.push(`${file}: ${link}: no file ${resolved}`);
                } else if (fragment !== undefined && !githubAnchors(fs.readFileSync(path.join(ROOT, resolved), "utf8")).has(fragment)) {
                    broken.push(`${file}: ${link}: no heading with anchor #${fragment} in ${resolved}`);
                }
            }
        }
        expect(broken).toEqual([]);
    });

    test("GIVEN headings GitHub renders WHEN their anchors are made THEN they are GitHub's", () => {
        // Anchors read off github.com for headings of this kind.
        const text =
            "# Config reference\n## `npm run bench:render`\n## Running the stacks: by hand, from CI, with PKO\n## Operations\n## Operations\n```\n# not a heading\n```";
        expect(githubAnchors(text)).toEqual(
            new Set([
                "config-reference",
                "npm-run-benchrender",
                "running-the-stacks-by-hand-from-ci-with-pko",
                "operations",
                "operations-1",
            ]),
        );
    });

    test("GIVEN the README WHEN its lines are counted THEN a newcomer reads it in minutes (at most 600 lines)", () => {
        const lines = fs.readFileSync(path.join(ROOT, "README.md"), "utf8").split("\n").length;
        expect(lines).toBeLessThanOrEqual(600);
    });
});
