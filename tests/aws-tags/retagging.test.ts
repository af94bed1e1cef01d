import fc from "fast-check";
import { pinToOperator } from "../../components/aws-tags/retagging";
import { mergeTags } from "../../components/aws-tags/rules";

/**
 * The operators' rules, written from their source (not from the code under test):
 * - csi-operator pkg/driver/aws-ebs/aws_ebs_tags_controller.go: `ec2:CreateTags` with every status
 *   tag on each EBS CSI volume (`newAndUpdatedTags`): status values overwrite, nothing is removed.
 * - cluster-image-registry-operator pkg/operator/awstagcontroller.go `syncInfraTags`: each status
 *   tag that passes `validateUserTag` is added to the bucket's tag set or its value updated, then
 *   `PutBucketTagging` with the whole set.
 */
const csiOperatorRetags = (volume: Record<string, string>, status: Record<string, string>) => ({ ...volume, ...status });
const registryOperatorRetags = (bucket: Record<string, string>, status: Record<string, string>) => {
    const next = { ...bucket };
    for (const [key, value] of Object.entries(status)) {
        const valid =
            /^[0-9A-Za-z_.:/=+-@]{1,128}$/.test(key) &&
            key.toLowerCase() !== "name" &&
            /^[0-9A-Za-z_.:/=+-@]{0,256}$/.test(value) &&
            !/^([^/]*\.)?kubernetes.io\//.test(key) &&
            !/^([^/]*\.)?openshift.io\//.test(key);
        if (valid) {
            next[key] = value;
        }
    }
    return next;
};

const key = fc.constantFrom("team", "costCenter", "owner", "env", "adminContact", "app");
const value = fc.constantFrom("a", "b", "platform", "7536", "jdoe");
const tags = fc.dictionary(key, value, { maxKeys: 6 });

describe("one precedence with the operators that re-tag (issue 29, point 2)", () => {
    test("GIVEN any install-time, user and own tags WHEN csi-operator re-tags a volume the tagged StorageClass made THEN nothing changes: the stack's values are the operator's fixed point", () => {
        fc.assert(
            fc.property(tags, tags, tags, (install, config, resource) => {
                const created = pinToOperator("v", mergeTags({ install, config, resource }), install, "ebsVolumes").tags;
                expect(csiOperatorRetags(created, install)).toEqual(created);
            }),
        );
    });

    test("GIVEN any install-time, user and own tags WHEN the registry operator syncs the bucket THEN it has nothing to update", () => {
        fc.assert(
            fc.property(tags, tags, tags, (install, config, resource) => {
                const created = pinToOperator("b", mergeTags({ install, config, resource }), install, "registryBucket").tags;
                expect(registryOperatorRetags(created, install)).toEqual(created);
            }),
        );
    });

    test("GIVEN keys the install-time tags do not carry THEN the seed's precedence holds for them (user over install, own over user)", () => {
        fc.assert(
            fc.property(tags, tags, tags, (install, config, resource) => {
                const created = pinToOperator("v", mergeTags({ install, config, resource }), install, "ebsVolumes").tags;
                for (const k of Object.keys(created).filter((k) => !(k in install))) {
                    expect(created[k]).toBe(k in resource ? resource[k] : config[k]);
                }
            }),
        );
    });

    test("GIVEN aws.userTags overriding one install-time key THEN exactly one warning names the key, both values and the operator", () => {
        const install = { adminContact: "installer", owner: "x" };
        const pinned = pinToOperator(
            'StorageClass "gp3-csi-tagged"',
            mergeTags({ install, config: { adminContact: "jdoe", owner: "x" } }),
            install,
            "ebsVolumes",
        );
        expect(pinned).toEqual({
            tags: { adminContact: "installer", owner: "x" },
            warnings: [
                `tag "adminContact" on StorageClass "gp3-csi-tagged": "jdoe" from aws.userTags cannot hold, csi-operator's EBSVolumeTagsController (every EBS CSI volume, within 30 minutes) re-applies "installer" from the install-time tags (Infrastructure/cluster status.platformStatus.aws.resourceTags); the stack sets "installer" so the two do not fight`,
            ],
        });
    });
});
