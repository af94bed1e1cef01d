import { servePack } from "../shared/pack";
import { K8S_RBAC_POLICIES, PACK_DESCRIPTION, PACK_NAME } from "./policies";

servePack(PACK_NAME, K8S_RBAC_POLICIES, PACK_DESCRIPTION);
