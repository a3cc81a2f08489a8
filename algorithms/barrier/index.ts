/** The registered barrier algorithms, in the order `cclab verify` lists them. */
import { dissemination } from "./dissemination.js";

export const algorithms = [dissemination];
