/** The registered barrier algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { dissemination } from "./dissemination.js";

export const algorithms: readonly Algorithm[] = [dissemination];
