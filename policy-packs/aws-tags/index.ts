import { servePack } from "../shared/pack";
import { AWS_TAGS_POLICIES, PACK_DESCRIPTION, PACK_NAME } from "./policies";

servePack(PACK_NAME, AWS_TAGS_POLICIES, PACK_DESCRIPTION);
