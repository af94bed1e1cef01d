/**
 * Resources that write one tag onto another resource (side channels): `aws:ec2/tag:Tag` (any EC2
 * resource id), `aws:autoscaling/tag:Tag` (an Auto Scaling group, with `propagateAtLaunch`), and
 * the other `<service>/tag:Tag` types of @pulumi/aws (ecs, dynamodb, ec2transitgateway…). The tag
 * they write reaches AWS without passing through the tagged resource's `tags`, so the pack judges
 * it where it is declared, by the same rules. Pure.
 */
import { asObject, known, Obj, UNKNOWN } from "../shared/values";

export interface SideChannelTag {
    key: string | typeof UNKNOWN;
    value: string | typeof UNKNOWN;
    /** For autoscaling tags: whether the tag reaches the group's instances. */
    propagateAtLaunch?: boolean | typeof UNKNOWN;
}

const SIDE_CHANNEL = /^aws:[A-Za-z0-9]+\/tag:Tag$/;

const text = (read: () => unknown): string | typeof UNKNOWN => {
    const value = known(read);
    return value === UNKNOWN ? UNKNOWN : String(value ?? "");
};

/** The tag a side-channel resource writes, or undefined for other types. */
export function sideChannelTags(args: { type: string; props: Obj }): SideChannelTag | undefined {
    if (!SIDE_CHANNEL.test(args.type)) {
        return undefined;
    }
    if (args.type === "aws:autoscaling/tag:Tag") {
        const tag = asObject(args.props.tag) ?? {};
        const flag = known(() => tag.propagateAtLaunch);
        return { key: text(() => tag.key), value: text(() => tag.value), propagateAtLaunch: flag === UNKNOWN ? UNKNOWN : flag === true };
    }
    return { key: text(() => args.props.key), value: text(() => args.props.value) };
}
