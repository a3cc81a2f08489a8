/** The registered allreduce algorithms, in the order `cclab verify` lists them. */
import type { Algorithm } from "../../src/schedule/types.js";
import { binaryTreeAllreduce } from "./binary_tree.js";

export const algorithms: readonly Algorithm[] = [binaryTreeAllreduce];
