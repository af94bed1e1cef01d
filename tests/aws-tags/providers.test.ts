import * as aws from "@pulumi/aws";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { stackAwsProvider } from "../../components/aws-tags/providers";

/** The transformation alone, on the arguments the SDK passes a stack transformation (no engine needed). */
describe("the stack's AWS provider for resources declared without one", () => {
    const stack = new aws.Provider("aws", { region: "us-east-1" });
    const other = new aws.Provider("other", { region: "eu-west-1" });
    const kubernetes = new k8s.Provider("kubernetes", {});
    const transform = stackAwsProvider(stack);
    const run = (type: string, opts: pulumi.ResourceOptions) =>
        transform({ type, name: "r", props: {}, opts, resource: undefined as unknown as pulumi.Resource });

    test("GIVEN a top-level AWS resource without a provider THEN it gets the stack's provider", () => {
        expect(run("aws:sns/topic:Topic", {})?.opts).toEqual({ provider: stack });
    });

    test("GIVEN its own provider, an AWS provider in its providers list or map, or another package THEN it is left alone", () => {
        expect(run("aws:sns/topic:Topic", { provider: other })).toBeUndefined();
        expect(run("aws:sns/topic:Topic", { providers: [other] } as pulumi.ComponentResourceOptions)).toBeUndefined();
        expect(run("aws:sns/topic:Topic", { providers: { aws: other } } as pulumi.ComponentResourceOptions)).toBeUndefined();
        expect(run("kubernetes:core/v1:ConfigMap", {})).toBeUndefined();
    });

    test("GIVEN only a Kubernetes provider in its providers list THEN the AWS resource still gets the stack's AWS provider", () => {
        expect(run("aws:sns/topic:Topic", { providers: [kubernetes] } as pulumi.ComponentResourceOptions)?.opts).toEqual({
            providers: [kubernetes],
            provider: stack,
        });
    });
});
