import { PolicyPack } from "@pulumi/policy";
import { AWS_TAGS_POLICIES, PACK_DESCRIPTION, PACK_NAME } from "./policies";

new PolicyPack(PACK_NAME, { policies: AWS_TAGS_POLICIES, enforcementLevel: "mandatory", description: PACK_DESCRIPTION });
