/**
 * Serializes the WebhookImage provider exactly as `pulumi.dynamic.Resource` does (the closure
 * the engine stores in state as `__provider`) and prints `{text, containsSecrets}` as JSON.
 * Run in its own process (tsx), as the Pulumi program would be.
 */
import * as pulumi from "@pulumi/pulumi";
import { WebhookImageProvider } from "../../../components/webhook-image/provider";

const provider = new WebhookImageProvider();
pulumi.runtime
    .serializeFunction(() => provider, { allowSecrets: true })
    .then((serialized) => {
        process.stdout.write(JSON.stringify({ text: serialized.text, containsSecrets: serialized.containsSecrets }));
    });
