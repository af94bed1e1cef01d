/**
 * The serving certificate's expiry as a Prometheus gauge: seconds until notAfter, at scrape time,
 * from a real certificate loaded the way the server loads it.
 */
import { mkdtempSync, rmSync } from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { X509Certificate } from "node:crypto";
import pino from "pino";
import { CertificateFiles } from "../../webhook/certificates";
import { WebhookMetrics } from "../../webhook/metrics";
import { DAY } from "../helpers/clock";
import { createAuthority, issueServingPair, projectPair } from "../helpers/tls-signer";

const EXPIRY = "subscription_webhook_certificate_expiry_seconds";

function sample(text: string, name: string): string | undefined {
    return text.split("\n").find((line) => line.startsWith(`${name} `));
}

describe("the serving certificate expiry gauge", () => {
    let directory: string;
    beforeEach(() => {
        directory = mkdtempSync(path.join(os.tmpdir(), "expiry-metric-"));
    });
    afterEach(() => rmSync(directory, { recursive: true, force: true }));

    test("GIVEN no certificate loaded yet WHEN scraped THEN the gauge is NaN (no alert threshold matches), not 0", async () => {
        const text = await new WebhookMetrics({ processMetrics: false }).registry.metrics();
        expect(text).toContain(`# TYPE ${EXPIRY} gauge`);
        expect(sample(text, EXPIRY)).toBe(`${EXPIRY} Nan`);
    });

    test("GIVEN a loaded serving certificate WHEN scraped at two instants THEN the gauge is notAfter minus each instant, in seconds", async () => {
        const pair = await issueServingPair(await createAuthority(), "0a");
        projectPair(directory, pair, 1);
        const notAfter = Date.parse(new X509Certificate(pair.cert).validTo);
        let now = notAfter - 3 * DAY;
        const metrics = new WebhookMetrics({ processMetrics: false, now: () => now });
        new CertificateFiles(
            path.join(directory, "tls.crt"),
            path.join(directory, "tls.key"),
            () => undefined,
            pino({ level: "silent" }),
            metrics,
        ).load();
        expect(sample(await metrics.registry.metrics(), EXPIRY)).toBe(`${EXPIRY} 259200`);
        now = notAfter + 60_000;
        expect(sample(await metrics.registry.metrics(), EXPIRY)).toBe(`${EXPIRY} -60`);
    });
});
