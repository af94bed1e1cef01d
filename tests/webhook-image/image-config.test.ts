import fc from "fast-check";
import { composeImage, composeImageConfig, composeIndex, mergeEnv, nodeExecutable } from "../../components/webhook-image/image-config";
import { canonicalJson } from "../../components/shared/canonical-json";
import { ImageConfig, MEDIA_TYPES } from "../../components/webhook-image/oci";

const BASE_CONFIG: ImageConfig = {
    created: "2024-05-01T10:00:00Z",
    architecture: "amd64",
    os: "linux",
    config: {
        User: "65532",
        Env: ["PATH=/usr/bin:/bin", "NODE_ENV=development", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"],
        Entrypoint: ["/nodejs/bin/node"],
        Cmd: ["--version"],
        WorkingDir: "/home/nonroot",
        Labels: { maintainer: "base", "org.opencontainers.image.source": "https://base.example" },
        ExposedPorts: { "8080/tcp": {} },
    },
    rootfs: { type: "layers", diff_ids: ["sha256:base"] },
    history: [{ created: "2024-05-01T10:00:00Z", created_by: "base layer" }],
};
const LAYERS = [
    { digest: "sha256:deps-gz", size: 10, diffId: "sha256:deps", createdBy: "dependencies" },
    { digest: "sha256:app-gz", size: 5, diffId: "sha256:app", createdBy: "application" },
];
const SETTINGS = {
    script: "/app/webhook/main.js",
    user: "65532:65532",
    workingDir: "/app",
    env: { NODE_ENV: "production", EXTRA: "1" },
    labels: { "org.opencontainers.image.source": "https://example.com/repo", "org.opencontainers.image.revision": "abc" },
};

describe("image config, manifest and index", () => {
    test("GIVEN a base config WHEN the webhook's is composed THEN runtime settings replace the base's, env and labels merge, Cmd is dropped and history and diff IDs extend", () => {
        expect(composeImageConfig(BASE_CONFIG, LAYERS, SETTINGS)).toEqual({
            created: "1970-01-01T00:00:00Z",
            architecture: "amd64",
            os: "linux",
            "os.version": undefined,
            "os.features": undefined,
            variant: undefined,
            config: {
                User: "65532:65532",
                ExposedPorts: { "8080/tcp": {} },
                Env: ["PATH=/usr/bin:/bin", "NODE_ENV=production", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt", "EXTRA=1"],
                Entrypoint: ["/nodejs/bin/node", "/app/webhook/main.js"],
                WorkingDir: "/app",
                Labels: {
                    maintainer: "base",
                    "org.opencontainers.image.source": "https://example.com/repo",
                    "org.opencontainers.image.revision": "abc",
                },
                Volumes: undefined,
                StopSignal: undefined,
            },
            rootfs: { type: "layers", diff_ids: ["sha256:base", "sha256:deps", "sha256:app"] },
            history: [
                { created: "2024-05-01T10:00:00Z", created_by: "base layer" },
                { created: "1970-01-01T00:00:00Z", created_by: "dependencies" },
                { created: "1970-01-01T00:00:00Z", created_by: "application" },
            ],
        });
    });

    test.each([
        ["distroless (entrypoint node)", { Entrypoint: ["/nodejs/bin/node"] }, "/nodejs/bin/node"],
        ["official node (docker-entrypoint.sh, CMD node)", { Entrypoint: ["docker-entrypoint.sh"], Cmd: ["node"] }, "node"],
        ["a custom node path in CMD", { Cmd: ["/opt/node/bin/node"] }, "/opt/node/bin/node"],
        ["no hint", { Entrypoint: ["/bin/sh", "-c"] }, "node"],
        ["no config", undefined, "node"],
    ])("GIVEN a base with %s WHEN the Node.js executable is chosen THEN it is %s", (_what, config, expected) => {
        expect(nodeExecutable(config)).toBe(expected);
    });

    test("GIVEN any base env and overrides WHEN merged THEN each override appears exactly once with its value and the base's other entries keep their order", () => {
        const name = fc.stringMatching(/^[A-Z][A-Z_]{0,5}$/);
        fc.assert(
            fc.property(
                fc.uniqueArray(fc.tuple(name, fc.string({ maxLength: 5 })), { selector: ([n]) => n, maxLength: 6 }),
                fc.dictionary(name, fc.string({ maxLength: 5 }), { maxKeys: 4 }),
                (base, overrides) => {
                    const merged = mergeEnv(
                        base.map(([n, v]) => `${n}=${v}`),
                        overrides,
                    );
                    for (const [n, v] of Object.entries(overrides)) {
                        expect(merged.filter((e) => e.startsWith(`${n}=`))).toEqual([`${n}=${v}`]);
                    }
                    const untouched = base.filter(([n]) => !(n in overrides)).map(([n, v]) => `${n}=${v}`);
                    expect(merged.filter((e) => untouched.includes(e))).toEqual(untouched);
                },
            ),
        );
    });

    test("GIVEN an OCI base manifest WHEN the image is composed THEN the manifest keeps the base layers, adds ours as OCI gzip layers and names the base in annotations", () => {
        const baseLayer = { mediaType: MEDIA_TYPES.ociLayerGzip, digest: "sha256:baselayer", size: 100 };
        const image = composeImage(
            {
                name: `registry.example/base:1@sha256:${"0".repeat(64)}`,
                manifestDigest: "sha256:basemanifest",
                config: BASE_CONFIG,
                manifest: {
                    schemaVersion: 2,
                    mediaType: MEDIA_TYPES.ociManifest,
                    config: { mediaType: MEDIA_TYPES.ociConfig, digest: "sha256:c", size: 1 },
                    layers: [baseLayer],
                },
            },
            LAYERS,
            SETTINGS,
        );
        expect(JSON.parse(image.manifest.bytes.toString())).toEqual({
            annotations: {
                "org.opencontainers.image.base.digest": "sha256:basemanifest",
                "org.opencontainers.image.base.name": "registry.example/base:1",
            },
            config: { digest: image.config.descriptor.digest, mediaType: MEDIA_TYPES.ociConfig, size: image.config.bytes.length },
            layers: [
                baseLayer,
                { mediaType: MEDIA_TYPES.ociLayerGzip, digest: "sha256:deps-gz", size: 10 },
                { mediaType: MEDIA_TYPES.ociLayerGzip, digest: "sha256:app-gz", size: 5 },
            ],
            mediaType: MEDIA_TYPES.ociManifest,
            schemaVersion: 2,
        });
        expect(image.manifest.bytes.toString()).toBe(canonicalJson(JSON.parse(image.manifest.bytes.toString())));
        expect(image.manifest.descriptor.platform).toEqual({ os: "linux", architecture: "amd64", variant: undefined });
    });

    test("GIVEN Docker and OCI platform manifests WHEN indexed THEN Docker ones make a manifest list and OCI ones an OCI index", () => {
        const docker = {
            mediaType: MEDIA_TYPES.dockerManifest,
            digest: "sha256:d",
            size: 1,
            platform: { os: "linux", architecture: "amd64" },
        };
        const oci = { ...docker, mediaType: MEDIA_TYPES.ociManifest };
        expect(JSON.parse(composeIndex([docker]).bytes.toString()).mediaType).toBe(MEDIA_TYPES.dockerManifestList);
        expect(JSON.parse(composeIndex([oci]).bytes.toString()).mediaType).toBe(MEDIA_TYPES.ociIndex);
    });

    test('GIVEN a member named "__proto__" (as JSON.parse makes it) WHEN serialized canonically THEN it stays a member', () => {
        expect(canonicalJson(JSON.parse('{"b":1,"__proto__":{"x":[1]}}'))).toBe('{"__proto__":{"x":[1]},"b":1}');
    });

    test("GIVEN any JSON value WHEN serialized canonically THEN key order does not matter and the text parses back to the value", () => {
        fc.assert(
            fc.property(fc.jsonValue(), (value) => {
                const reordered = JSON.parse(
                    JSON.stringify(value, (_k, v: unknown) =>
                        v !== null && typeof v === "object" && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).reverse()) : v,
                    ),
                );
                expect(canonicalJson(reordered)).toBe(canonicalJson(value));
                expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
            }),
        );
    });
});
