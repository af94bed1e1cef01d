import fc from "fast-check";
import { assetNames, fitName, registryBucketName, registryTrustPolicy } from "../../components/aws-assets/assets";
import { isDns1123Label } from "../../components/shared/k8s-names";

describe("asset names", () => {
    test("GIVEN a cluster name THEN every physical name derives from it", () => {
        expect(assetNames("prod-east")).toEqual({
            ecrRepository: "prod-east/subscription-webhook",
            bucketBase: "prod-east-image-registry",
            kmsAlias: "alias/prod-east-image-registry",
            roleName: "prod-east-image-registry",
            policyName: "prod-east-image-registry",
        });
        expect(registryBucketName("prod-east", "123456789012", "ap-southeast-2")).toBe(
            "prod-east-image-registry-123456789012-ap-southeast-2",
        );
    });

    test("GIVEN any valid cluster name THEN the bucket name fits S3's 63 characters and the role name IAM's 64, and distinct clusters get distinct names", () => {
        const label = fc.stringMatching(/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/).filter(isDns1123Label);
        fc.assert(
            fc.property(label, label, (a, b) => {
                const bucket = registryBucketName(a, "123456789012", "ap-southeast-2");
                expect(bucket.length).toBeLessThanOrEqual(63);
                expect(bucket).toMatch(/^[a-z0-9][a-z0-9-]*[a-z0-9]$/);
                expect(assetNames(a).roleName.length).toBeLessThanOrEqual(64);
                expect(assetNames(a).ecrRepository).toMatch(/^[a-z0-9]+(?:[._-][a-z0-9]+)*\/[a-z0-9]+(?:[._-][a-z0-9]+)*$/);
                if (a !== b) {
                    expect(registryBucketName(b, "123456789012", "ap-southeast-2")).not.toBe(bucket);
                }
            }),
        );
    });

    test("GIVEN a name too long THEN it is cut and ends with a hash of the whole", () => {
        expect(fitName("abc", 5)).toBe("abc");
        expect(fitName(`${"a".repeat(30)}-image-registry`, 20)).toBe("aaaaaaaaaaaaa-5c02b1");
    });

    test("GIVEN the cluster's OIDC provider THEN the registry role trusts only the image registry's service accounts through it", () => {
        const arn = "arn:aws:iam::123456789012:oidc-provider/oidc.example.com/prod-east";
        expect(JSON.parse(registryTrustPolicy({ oidcProviderArn: arn }))).toEqual({
            Version: "2012-10-17",
            Statement: [
                {
                    Effect: "Allow",
                    Principal: { Federated: arn },
                    Action: "sts:AssumeRoleWithWebIdentity",
                    Condition: {
                        StringEquals: {
                            "oidc.example.com/prod-east:sub": [
                                "system:serviceaccount:openshift-image-registry:cluster-image-registry-operator",
                                "system:serviceaccount:openshift-image-registry:registry",
                            ],
                        },
                    },
                },
            ],
        });
    });

    test("GIVEN a named IAM role THEN the registry role trusts that role alone, through sts:AssumeRole", () => {
        const arn = "arn:aws:iam::123456789012:role/registry-admin";
        expect(JSON.parse(registryTrustPolicy({ principalArn: arn }))).toEqual({
            Version: "2012-10-17",
            Statement: [{ Effect: "Allow", Principal: { AWS: arn }, Action: "sts:AssumeRole" }],
        });
    });
});
