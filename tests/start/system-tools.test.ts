import { requireTools } from "../helpers/system-tools";

describe("suites that need Debian tools", () => {
    const path = process.env.PATH;
    afterEach(() => {
        process.env.PATH = path;
    });

    test("GIVEN a PATH without skopeo and htpasswd WHEN a suite requires them THEN it fails with one line per tool naming its Debian package and the install command", () => {
        process.env.PATH = "/nonexistent";
        expect(() => requireTools("skopeo", "htpasswd")).toThrow(
            new Error(
                "skopeo is not installed (Debian package skopeo): install it with `sudo apt-get install -y --no-install-recommends skopeo`, or run `npm test` as root to have it installed; " +
                    "htpasswd is not installed (Debian package apache2-utils): install it with `sudo apt-get install -y --no-install-recommends apache2-utils`, or run `npm test` as root to have it installed",
            ),
        );
    });
});
