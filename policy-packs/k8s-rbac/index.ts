import { PolicyPack } from "@pulumi/policy";
import { K8S_RBAC_POLICIES, PACK_DESCRIPTION, PACK_NAME } from "./policies";

new PolicyPack(PACK_NAME, { policies: K8S_RBAC_POLICIES, enforcementLevel: "mandatory", description: PACK_DESCRIPTION });
