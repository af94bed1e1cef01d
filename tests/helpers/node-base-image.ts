/**
 * The base image tests build on, made without the code under test: a root filesystem with this
 * machine's own `node` binary at /nodejs/bin/node (the distroless layout) and the shared
 * libraries `ldd` lists, an /etc/passwd with the nonroot user 65532 and a /tmp, packed by GNU
 * tar and gzip into an OCI image layout (an index over a runnable linux/amd64 image and an
 * arm64 twin with the same layer, to exercise platform selection), and pushed with skopeo.
 */
import { execFile, execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import { keptDirectory, linkTree } from "./kept-cache";

const sha256 = (data: Buffer | string) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

function blob(layout: string, data: Buffer | string): { digest: string; size: number } {
    const bytes = Buffer.isBuffer(data) ? data : Buffer.from(data);
    const digest = sha256(bytes);
    mkdirSync(path.join(layout, "blobs", "sha256"), { recursive: true });
    writeFileSync(path.join(layout, "blobs", "sha256", digest.slice(7)), bytes);
    return { digest, size: bytes.length };
}

/** The libraries the dynamic loader resolves for `binary`, as absolute paths. */
function sharedLibraries(binary: string): string[] {
    const out = execFileSync("ldd", [binary], { encoding: "utf8" });
    return [...out.matchAll(/(\/[^\s)]+)/g)].map((m) => m[1]).filter((p) => !p.includes("vdso"));
}

export interface NodeBaseLayout {
    /** The OCI image layout directory. */
    layout: string;
    /** Its ref name in index.json. */
    ref: string;
    /** The root filesystem it packs (to compare against). */
    rootfs: string;
}

const REF = "test";

/**
 * Builds the base image's OCI layout under `workDirectory` (`base-layout/`, and the root
 * filesystem it packs, `base-rootfs/`). Under the suite the layout is made once per node binary
 * and its libraries and this file's text (tests/helpers/kept-cache.ts; gzip of the 100 MB
 * binary alone is 2 s of CPU, and six files of the suite build this base) and linked here.
 */
export function buildNodeBaseLayout(workDirectory: string): NodeBaseLayout {
    const node = execFileSync("readlink", ["-f", process.execPath], { encoding: "utf8" }).trim();
    const libraries = sharedLibraries(node);
    const identity = (file: string) => {
        const stat = statSync(file);
        return `${file} ${stat.ino} ${stat.size} ${stat.mtimeMs}`;
    };
    const kept = keptDirectory("node-base-layout", [readFileSync(__filename, "utf8"), ...[node, ...libraries].map(identity)], (directory) =>
        writeNodeBaseLayout(directory, node, libraries),
    );
    if (kept === undefined) {
        return writeNodeBaseLayout(workDirectory, node, libraries);
    }
    for (const name of ["base-layout", "base-rootfs"]) {
        linkTree(path.join(kept, name), path.join(workDirectory, name));
    }
    return { layout: path.join(workDirectory, "base-layout"), ref: REF, rootfs: path.join(workDirectory, "base-rootfs") };
}

function writeNodeBaseLayout(workDirectory: string, node: string, libraries: readonly string[]): NodeBaseLayout {
    const rootfs = path.join(workDirectory, "base-rootfs");
    mkdirSync(path.join(rootfs, "nodejs", "bin"), { recursive: true });
    copyFileSync(node, path.join(rootfs, "nodejs", "bin", "node"));
    chmodSync(path.join(rootfs, "nodejs", "bin", "node"), 0o755);
    for (const library of libraries) {
        mkdirSync(path.join(rootfs, path.dirname(library)), { recursive: true });
        copyFileSync(library, path.join(rootfs, library));
    }
    mkdirSync(path.join(rootfs, "etc"), { recursive: true });
    writeFileSync(
        path.join(rootfs, "etc", "passwd"),
        "root:x:0:0:root:/root:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n",
    );
    writeFileSync(path.join(rootfs, "etc", "group"), "root:x:0:\nnonroot:x:65532:\n");
    mkdirSync(path.join(rootfs, "home", "nonroot"), { recursive: true });
    mkdirSync(path.join(rootfs, "tmp"), { recursive: true });
    chmodSync(path.join(rootfs, "tmp"), 0o1777);

    const tarFile = path.join(workDirectory, "base-layer.tar");
    execFileSync("tar", [
        "--create",
        "--file",
        tarFile,
        "--sort=name",
        "--owner=0",
        "--group=0",
        "--numeric-owner",
        "--mtime=@0",
        "-C",
        rootfs,
        ".",
    ]);
    const tarBytes = readFileSync(tarFile);
    const gz = execFileSync("gzip", ["-1", "-n", "-c", tarFile], { maxBuffer: 512 * 1024 * 1024 });
    rmSync(tarFile);

    const layout = path.join(workDirectory, "base-layout");
    mkdirSync(layout, { recursive: true });
    writeFileSync(path.join(layout, "oci-layout"), JSON.stringify({ imageLayoutVersion: "1.0.0" }));
    const layer = { mediaType: "application/vnd.oci.image.layer.v1.tar+gzip", ...blob(layout, gz) };
    const manifests = ["amd64", "arm64"].map((architecture) => {
        const config = blob(
            layout,
            JSON.stringify({
                architecture,
                os: "linux",
                created: "2024-01-01T00:00:00Z",
                config: {
                    User: "65532",
                    Env: [
                        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
                        "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt",
                    ],
                    Entrypoint: ["/nodejs/bin/node"],
                    WorkingDir: "/home/nonroot",
                    Labels: { "org.example.base": "test-node" },
                },
                rootfs: { type: "layers", diff_ids: [sha256(tarBytes)] },
                history: [{ created: "2024-01-01T00:00:00Z", created_by: "tests: node binary, its libraries, passwd, tmp" }],
            }),
        );
        const manifest = blob(
            layout,
            JSON.stringify({
                schemaVersion: 2,
                mediaType: "application/vnd.oci.image.manifest.v1+json",
                config: { mediaType: "application/vnd.oci.image.config.v1+json", ...config },
                layers: [layer],
            }),
        );
        return { mediaType: "application/vnd.oci.image.manifest.v1+json", ...manifest, platform: { architecture, os: "linux" } };
    });
    const index = blob(layout, JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests }));
    const ref = REF;
    writeFileSync(
        path.join(layout, "index.json"),
        JSON.stringify({
            schemaVersion: 2,
            manifests: [
                {
                    mediaType: "application/vnd.oci.image.index.v1+json",
                    ...index,
                    annotations: { "org.opencontainers.image.ref.name": ref },
                },
            ],
        }),
    );
    return { layout, ref, rootfs };
}

/**
 * Copies the base layout's image (the whole index, or with `format: "v2s2"` only the amd64
 * image converted to Docker's schema 2) to `registry/repository:tag` with skopeo; returns the
 * pinned reference `registry/repository:tag@sha256:...` and the digest.
 */
export async function pushBase(
    base: NodeBaseLayout,
    registry: string,
    repository: string,
    format: "oci-index" | "v2s2",
    env: NodeJS.ProcessEnv = process.env,
): Promise<{ pinned: string; digest: string }> {
    const digestFile = path.join(path.dirname(base.layout), `digest-${format}`);
    const destination = `docker://${registry}/${repository}:${format}`;
    const args =
        format === "oci-index"
            ? ["copy", "--all", "--dest-tls-verify=false", "--digestfile", digestFile, `oci:${base.layout}:${base.ref}`, destination]
            : [
                  "copy",
                  "--override-arch",
                  "amd64",
                  "--override-os",
                  "linux",
                  "--format",
                  "v2s2",
                  "--dest-tls-verify=false",
                  "--digestfile",
                  digestFile,
                  `oci:${base.layout}:${base.ref}`,
                  destination,
              ];
    // Asynchronously: the registry may call back into a token service running in this process.
    await promisify(execFile)("skopeo", args, { env });
    const digest = readFileSync(digestFile, "utf8").trim();
    return { pinned: `${registry}/${repository}:${format}@${digest}`, digest };
}
