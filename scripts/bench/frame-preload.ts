/**
 * bench:webhook's frame (`node --require dist/scripts/bench/frame-preload.js dist/webhook/main.js`):
 * the webhook's own process and server (main.ts, server.ts, its informers, metrics and certificate
 * watch, all as the image runs them) with the handler's work replaced by exactly the true floor's
 * (floor-server.ts): parse the body, then answer the webhook's bytes for the benchmark's request
 * around its uid. What this process costs over the true floor is what the webhook costs before it
 * decides anything; what the webhook costs over this process is the decision and its answer.
 * Env (besides the webhook's own): FRAME_RESPONSE_FILE, the true floor's RESPONSE_FILE (JSON [before, after]).
 */
import * as fs from "node:fs";
import { AdmissionHandler, type HandlerResult } from "../../webhook/admission";
import { answerAround } from "./true-floor";

const template = JSON.parse(fs.readFileSync(String(process.env.FRAME_RESPONSE_FILE), "utf8")) as [string, string];
const decide = AdmissionHandler.prototype.handleText;

AdmissionHandler.prototype.handleText = async function (this: AdmissionHandler, text: string): Promise<HandlerResult> {
    let review: { request?: { uid?: unknown } };
    try {
        review = JSON.parse(text);
    } catch {
        // The real handler's answer to a body that is not JSON (a 400 naming the parse error).
        return decide.call(this, text);
    }
    return { status: 200, body: answerAround(template, review.request?.uid), outcome: "patched" };
};
