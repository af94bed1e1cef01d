/**
 * The production dependency closure of a set of packages, read from npm's package-lock.json
 * (lockfile v2/v3 `packages` map): every package a root needs at run time, found the way Node's
 * resolver finds it (the nearest `node_modules` up the tree), without dev-only packages.
 * Pure: the lockfile comes in as data.
 */

export interface LockfilePackage {
    /** Set when the package is installed under another name (an `npm:` alias). */
    name?: string;
    version?: string;
    dev?: boolean;
    optional?: boolean;
    link?: boolean;
    resolved?: string;
    os?: string[];
    cpu?: string[];
    dependencies?: Record<string, string>;
    devDependencies?: Record<string, string>;
    optionalDependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

export interface Lockfile {
    lockfileVersion?: number;
    packages?: Record<string, LockfilePackage>;
}

/** The platform packages are installed for, in npm's terms (`process.platform`, `process.arch`). */
export interface NpmPlatform {
    os: string;
    cpu: string;
}

export interface Closure {
    /** Lockfile locations (`node_modules/a`, `node_modules/a/node_modules/b`), sorted. */
    locations: string[];
    problems: string[];
}

/** The location of package `name` as required from the package at `from` ("" for the project). */
export function resolveFrom(packages: Record<string, LockfilePackage>, from: string, name: string): string | undefined {
    let base = from;
    for (;;) {
        const candidate = base === "" ? `node_modules/${name}` : `${base}/node_modules/${name}`;
        if (packages[candidate] !== undefined) {
            return candidate;
        }
        if (base === "") {
            return undefined;
        }
        const cut = base.lastIndexOf("/node_modules/");
        base = cut < 0 ? "" : base.slice(0, cut);
    }
}

/** Whether an `os`/`cpu` list (npm's syntax: names, or `!name` exclusions) admits `value`. */
function admits(list: string[] | undefined, value: string): boolean {
    if (list === undefined || list.length === 0) {
        return true;
    }
    if (list.includes(`!${value}`)) {
        return false;
    }
    const positives = list.filter((item) => !item.startsWith("!"));
    return positives.length === 0 || positives.includes(value);
}

export function installsOn(pkg: LockfilePackage, platform: NpmPlatform): boolean {
    return admits(pkg.os, platform.os) && admits(pkg.cpu, platform.cpu);
}

/**
 * Every location the `roots` (package names required by the application) need at run time
 * on `platform`. Optional dependencies missing from the lockfile or built for another platform
 * are left out, as npm leaves them out; a missing required one is a problem.
 */
export function productionClosure(lockfile: Lockfile, roots: ReadonlyArray<string>, platform: NpmPlatform): Closure {
    const problems: string[] = [];
    const packages = lockfile.packages;
    if (packages === undefined || (lockfile.lockfileVersion ?? 0) < 2) {
        return {
            locations: [],
            problems: [
                "package-lock.json has no `packages` map (lockfileVersion 2 or later, npm 7+): run npm install once with npm 7 or later",
            ],
        };
    }
    const project = packages[""] ?? {};
    const seen = new Set<string>();
    const queue: string[] = [];
    const visit = (location: string) => {
        if (!seen.has(location)) {
            seen.add(location);
            queue.push(location);
        }
    };
    for (const root of [...roots].sort()) {
        if (project.dependencies?.[root] === undefined && project.optionalDependencies?.[root] === undefined) {
            const where = project.devDependencies?.[root] !== undefined ? "a devDependency" : "not a dependency";
            problems.push(`the application requires ${JSON.stringify(root)}, which is ${where} in package.json: add it to "dependencies"`);
            continue;
        }
        const location = resolveFrom(packages, "", root);
        if (location === undefined) {
            problems.push(`${JSON.stringify(root)} is in package.json but not in package-lock.json: run npm install`);
            continue;
        }
        visit(location);
    }
    while (queue.length > 0) {
        const location = queue.shift() as string;
        const pkg = packages[location];
        if (pkg.link) {
            problems.push(
                `${location} is a link (a workspace or \`file:\` dependency), which the image cannot carry: publish it or vendor it`,
            );
            continue;
        }
        if (pkg.dev === true) {
            problems.push(
                `${location} is marked dev-only in package-lock.json but a production package needs it: run npm install to repair the lockfile`,
            );
        }
        const required: Array<[string, boolean]> = [
            ...Object.keys(pkg.dependencies ?? {}).map((name): [string, boolean] => [name, false]),
            ...Object.keys(pkg.optionalDependencies ?? {}).map((name): [string, boolean] => [name, true]),
            ...Object.keys(pkg.peerDependencies ?? {}).map((name): [string, boolean] => [
                name,
                pkg.peerDependenciesMeta?.[name]?.optional === true,
            ]),
        ];
        for (const [name, optional] of required) {
            const found = resolveFrom(packages, location, name);
            if (found === undefined) {
                if (!optional) {
                    problems.push(`${location} needs ${JSON.stringify(name)}, which package-lock.json does not list: run npm install`);
                }
                continue;
            }
            if (optional && !installsOn(packages[found], platform)) {
                continue;
            }
            visit(found);
        }
    }
    return { locations: [...seen].sort(), problems };
}

/** The package name npm installed at a lockfile location (`node_modules/@s/a/node_modules/b` → `b`). */
export function packageNameAt(packages: Record<string, LockfilePackage>, location: string): string {
    return packages[location]?.name ?? location.slice(location.lastIndexOf("node_modules/") + "node_modules/".length);
}

/** The package name a bare module specifier loads (`@scope/name/sub` → `@scope/name`), or undefined for paths. */
export function packageNameOf(specifier: string): string | undefined {
    if (specifier.startsWith(".") || specifier.startsWith("/") || specifier.startsWith("node:")) {
        return undefined;
    }
    const parts = specifier.split("/");
    return specifier.startsWith("@") ? (parts.length >= 2 ? `${parts[0]}/${parts[1]}` : undefined) : parts[0];
}
