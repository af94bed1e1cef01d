/**
 * The image provider's diff (components/webhook-image/diff.ts): what a preview shows for the
 * published image. Only the content, the destination and the delete policy count; a destination
 * change is a new image elsewhere, so it replaces.
 */
import { diffImage } from "../../components/webhook-image/diff";
import type { WebhookImageInputs, WebhookImageOutputs } from "../../components/webhook-image/operations";

const NEWS: WebhookImageInputs = {
    projectDirectory: ".",
    outputDirectory: "dist",
    application: "webhook",
    entrypoint: "webhook/main.js",
    baseImage: `registry.example/base/node:22@sha256:${"1".repeat(64)}`,
    platforms: ["linux/amd64"],
    user: 65532,
    env: { NODE_ENV: "production" },
    labels: {},
    repository: "registry.example/webhook",
    output: "registry",
    contentHash: `sha256:${"a".repeat(64)}`,
    layers: { dependencies: `sha256:${"c".repeat(64)}`, application: `sha256:${"e".repeat(64)}` },
    deleteOnDestroy: false,
};
const OLDS: WebhookImageOutputs = {
    ...NEWS,
    digest: `sha256:${"d".repeat(64)}`,
    mediaType: "application/vnd.oci.image.manifest.v1+json",
    imageRef: "r",
};
const NO_CHANGE = { changes: false, replaces: [], deleteBeforeReplace: false };

describe("diffImage", () => {
    test("GIVEN the published image's inputs WHEN nothing that decides its bytes, place or delete policy changed THEN no change, wherever the project is checked out", () => {
        expect(diffImage(OLDS, NEWS)).toEqual(NO_CHANGE);
        expect(diffImage(OLDS, { ...NEWS, projectDirectory: "/elsewhere/checkout" })).toEqual(NO_CHANGE);
    });

    test("GIVEN the published image WHEN its content hash or delete policy changes THEN an update in place", () => {
        const update = { changes: true, replaces: [], deleteBeforeReplace: false };
        expect(diffImage(OLDS, { ...NEWS, contentHash: `sha256:${"b".repeat(64)}` })).toEqual(update);
        expect(diffImage(OLDS, { ...NEWS, deleteOnDestroy: true })).toEqual(update);
    });

    test("GIVEN the published image WHEN its repository, output or layout directory changes THEN each changed one replaces it, an absent directory equal to an undefined one", () => {
        expect(
            diffImage(OLDS, { ...NEWS, repository: "registry.example/other", output: "oci-layout", layoutDirectory: "out/layout" }),
        ).toEqual({
            changes: true,
            replaces: ["repository", "output", "layoutDirectory"],
            deleteBeforeReplace: false,
        });
        expect(diffImage({ ...OLDS, layoutDirectory: undefined }, NEWS)).toEqual(NO_CHANGE);
    });

    test("GIVEN state without a digest (a create that never finished) WHEN diffed THEN a change, so the image is published", () => {
        expect(diffImage({ ...OLDS, digest: undefined }, NEWS)).toEqual({ changes: true, replaces: [], deleteBeforeReplace: false });
    });
});
