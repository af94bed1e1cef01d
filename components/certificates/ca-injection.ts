/**
 * CA bundles for existing cluster objects (`caInjection`): each object is read, and one
 * server-side-apply `…Patch` resource per object writes only what the mode needs (see
 * `planExistingInjection`): the bundle field(s) in self-signed mode, the injector's
 * annotation in the delegated modes. Each Patch resource has its own field manager (the
 * provider's default), which owns only those fields, so nothing else on the object is
 * touched (a ConfigMap keeps its other keys).
 *
 * The read is what makes this correct: webhook configurations need their webhooks' names
 * (the list is keyed by name), CRDs their conversion strategy, ConfigMaps their keys. The
 * set of resources depends on config only (a read and a patch per entry) so `pulumi preview`
 * always shows them; only the patch's content depends on the read, and where there is
 * nothing to write (a CRD without webhook conversion...) the patch owns no field and a
 * warning names the object. With `cluster.renderYamlToDirectory` there is no cluster to
 * read or patch: the whole section is skipped with one warning.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { ClusterTarget, skippedWithoutCluster } from "../shared/cluster";
import { attributedTo } from "../shared/resource-errors";
import type { CertificateIssuer } from "./contract";
import { BundleValue, InjectionPlan, injectionOutcome, LiveObject, PATCH_FIELDS, PatchBody, planExistingInjection } from "./injection";
import { CaInjectionEntry, CertificateMode, describeEntry, InjectableKind } from "./rules";

export interface CaInjectionArgs {
    /** The existing objects (validated `caInjection` config). */
    readonly entries: CaInjectionEntry[];
    /** The stack's certificate mode. */
    readonly mode: CertificateMode;
    /** What the provider can do (reads and patches need a live cluster). */
    readonly cluster: ClusterTarget;
    /** The stack's bundle (self-signed mode), made on first use. @default none: no bundle is written (the delegated modes) */
    readonly bundle?: () => BundleValue<pulumi.Output<string>>;
    /** The self-signed issuer, for the serving certificates `caSource.issue` asks the stack to issue. @default none: no entry may ask for one */
    readonly issuer?: CertificateIssuer;
}

/** Resource-name form of an entry: `configmap-openshift-config-trusted-webhook-ca`. */
export function entrySlug(entry: CaInjectionEntry): string {
    return [entry.kind.toLowerCase(), entry.namespace, entry.name].filter(Boolean).join("-");
}

function entryId(entry: CaInjectionEntry): string {
    return entry.namespace ? `${entry.namespace}/${entry.name}` : entry.name;
}

type Opts = pulumi.CustomResourceOptions;

type Reader = (name: string, id: string, opts: Opts) => pulumi.CustomResource;
type PatchMaker = (name: string, args: never, opts: Opts) => pulumi.CustomResource;

/** How each kind is read, and patched (the SDK class of its `…Patch` resource). */
const KINDS: Record<InjectableKind, { read: Reader; patch: PatchMaker }> = {
    APIService: {
        read: (n, id, o) => k8s.apiregistration.v1.APIService.get(n, id, o),
        patch: (n, a, o) => new k8s.apiregistration.v1.APIServicePatch(n, a, o),
    },
    ConfigMap: {
        read: (n, id, o) => k8s.core.v1.ConfigMap.get(n, id, o),
        patch: (n, a, o) => new k8s.core.v1.ConfigMapPatch(n, a, o),
    },
    CustomResourceDefinition: {
        read: (n, id, o) => k8s.apiextensions.v1.CustomResourceDefinition.get(n, id, o),
        patch: (n, a, o) => new k8s.apiextensions.v1.CustomResourceDefinitionPatch(n, a, o),
    },
    MutatingWebhookConfiguration: {
        read: (n, id, o) => k8s.admissionregistration.v1.MutatingWebhookConfiguration.get(n, id, o),
        patch: (n, a, o) => new k8s.admissionregistration.v1.MutatingWebhookConfigurationPatch(n, a, o),
    },
    ValidatingWebhookConfiguration: {
        read: (n, id, o) => k8s.admissionregistration.v1.ValidatingWebhookConfiguration.get(n, id, o),
        patch: (n, a, o) => new k8s.admissionregistration.v1.ValidatingWebhookConfigurationPatch(n, a, o),
    },
};

/** Reads the existing object: its metadata and the field that holds its bundle (what the plan needs). */
function readLive(entry: CaInjectionEntry, name: string, opts: Opts): pulumi.Output<LiveObject> {
    const object = KINDS[entry.kind].read(name, entryId(entry), opts) as unknown as Record<string, pulumi.Output<unknown>>;
    const field = PATCH_FIELDS[entry.kind];
    return pulumi.all({ metadata: object.metadata, [field]: object[field] } as Record<
        string,
        pulumi.Input<unknown>
    >) as unknown as pulumi.Output<LiveObject>;
}

/** The patch body with the server-side-apply options of a patch that writes something. */
function withPatchAnnotations<V>(plan: InjectionPlan<V>): PatchBody<V> {
    if (!plan.writes) {
        return plan.patch;
    }
    const { patch } = plan;
    // Another manager (the object's creator) may own caBundle already: take it over.
    return { ...patch, metadata: { ...patch.metadata, annotations: { ...patch.metadata.annotations, "pulumi.com/patchForce": "true" } } };
}

/** Declares the Patch resource for `entry` whose content is `body`. */
function declarePatch(
    entry: CaInjectionEntry,
    name: string,
    body: pulumi.Output<PatchBody<pulumi.Input<string>>>,
    opts: Opts,
): pulumi.CustomResource {
    const field = PATCH_FIELDS[entry.kind];
    // The object's identity is known from config, so a preview always names the object patched.
    const metadata = { name: entry.name, namespace: entry.namespace, annotations: body.apply((b) => b.metadata.annotations) };
    return KINDS[entry.kind].patch(name, { metadata, [field]: body.apply((b) => b[field]) } as never, opts);
}

/** Injects the CA bundle into the existing objects listed in `caInjection`. */
export class CaInjection extends pulumi.ComponentResource {
    /**
     * What each entry's patch does (`injectionOutcome`), by `<Kind> <namespace>/<name>`; empty
     * without entries or without a live cluster. Taken into the stack outputs: that also keeps the
     * program running until every plan is settled, so a refused entry is reported under this
     * component. Once the program's outputs are resolved, the Node SDK prints a later failure at the
     * Stack with its stack trace instead (cmd/run/index.js, `programRunning`), which the real tier saw.
     */
    readonly outcomes: pulumi.Output<Record<string, string>>;
    /** The serving certificates issued for `caSource.issue`, by `<service>|<secretName>`. */
    private readonly issued = new Set<string>();

    constructor(name: string, args: CaInjectionArgs, opts?: pulumi.ComponentResourceOptions) {
        super("cluster-platform:certificates:CaInjection", name, {}, opts);
        const outcomes: Record<string, pulumi.Output<string>> = {};
        if (args.entries.length > 0 && !args.cluster.live) {
            pulumi.log.warn(skippedWithoutCluster(`caInjection into ${args.entries.map(describeEntry).join(", ")}`), this);
        } else if (args.entries.length > 0) {
            const bundle = args.mode === "self-signed" ? args.bundle?.() : undefined;
            for (const entry of args.entries) {
                outcomes[`${entry.kind} ${entryId(entry)}`] = this.inject(entry, bundle, args);
            }
        }
        this.outcomes = pulumi.output(outcomes);
        this.registerOutputs({});
    }

    /** Reads and patches `entry`; resolves to what the patch does (a refused entry: rejects). */
    private inject(
        entry: CaInjectionEntry,
        stackBundle: BundleValue<pulumi.Output<string>> | undefined,
        args: CaInjectionArgs,
    ): pulumi.Output<string> {
        const slug = entrySlug(entry);
        const live = readLive(entry, `ca-injection-read-${slug}`, { parent: this });
        const bundle = stackBundle && this.bundleOf(entry, slug, stackBundle, args);
        // The plan needs the read values only; the bundle (unknown in a first preview) stays an
        // Output inside the patch, so a preview still shows which fields are written.
        const plan = live.apply((object) =>
            attributedTo(this, () => {
                const planned = planExistingInjection<pulumi.Input<string>>(entry, object, {
                    mode: args.mode,
                    platform: args.cluster.platform,
                    bundle,
                });
                if (planned.warning) {
                    pulumi.log.warn(planned.warning, this);
                }
                return { body: withPatchAnnotations(planned), outcome: injectionOutcome(args.mode, planned) };
            }),
        );
        declarePatch(
            entry,
            `ca-injection-${slug}`,
            plan.apply((p) => p.body),
            { parent: this },
        );
        return plan.apply((p) => p.outcome);
    }

    /**
     * Self-signed mode: the right bundle for `entry`. A trust-bundle ConfigMap and an object whose
     * backend serves the certificate the stack issues here (`caSource.issue`) get the stack's; an
     * object whose CA is named (`caSource.configMap`) gets that CA, read from its ConfigMap.
     */
    private bundleOf(
        entry: CaInjectionEntry,
        slug: string,
        stackBundle: BundleValue<pulumi.Output<string>>,
        args: CaInjectionArgs,
    ): BundleValue<pulumi.Output<string>> {
        const source = entry.caSource;
        if (source?.issue) {
            // Once per Service and Secret, however many entries that backend serves.
            const key = `${source.issue.service}|${source.issue.secretName}`;
            if (!this.issued.has(key)) {
                const [namespace, serviceName] = source.issue.service.split("/");
                const resourcePrefix = `ca-injection-${namespace}-${serviceName}-${source.issue.secretName}`;
                this.issued.add(key);
                args.issuer?.servingCertificate({ serviceName, namespace, secretName: source.issue.secretName, resourcePrefix }, this);
            }
            return stackBundle;
        }
        if (source?.configMap) {
            const { name, key } = source.configMap;
            const caSource = k8s.core.v1.ConfigMap.get(`ca-injection-read-ca-source-${slug}`, name, { parent: this });
            const pem = caSource.data.apply((data) => {
                const value = data?.[key];
                if (typeof value !== "string" || !value.includes("-----BEGIN CERTIFICATE-----")) {
                    throw new pulumi.ResourceError(
                        `caInjection: ${describeEntry(entry)}: caSource.configMap ${JSON.stringify(name)} has no PEM certificate under key ${JSON.stringify(key)}`,
                        caSource,
                    );
                }
                return value;
            });
            return { pem, base64: pem.apply((text) => Buffer.from(text, "utf8").toString("base64")) };
        }
        return stackBundle;
    }
}
