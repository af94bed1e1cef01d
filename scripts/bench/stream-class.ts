/** The class of a request of bench:webhook's realistic stream: its namespace and which inject annotations it has. */
export type StreamRequest = { namespace?: string; object?: { metadata?: { annotations?: Record<string, string> } } } | undefined;

export function streamClass(request: StreamRequest): string {
    const annotations = request?.object?.metadata?.annotations ?? {};
    const asks = ["subscription.openshift.io/inject-bundle", "subscription.openshift.io/inject-cluster-bundle"].filter(
        (key) => key in annotations,
    );
    return `${request?.namespace ?? ""}|${asks.join(",")}`;
}
