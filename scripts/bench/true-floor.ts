/**
 * The true floor's answer, shared by the floor server (floor-server.ts) and the frame
 * (frame-preload.ts) so that both do exactly the same work: the webhook's bytes for a request,
 * precomputed as the text before and after its uid, with this request's uid spliced in as the
 * JSON string content it is.
 */
export function answerAround(template: readonly [string, string], uid: unknown): string {
    return `${template[0]}${JSON.stringify(String(uid)).slice(1, -1)}${template[1]}`;
}
