/**
 * `cclab verify --backend mpi|nccl`: the differential tests against the engine's own
 * collectives, run in real processes. Each engine's runner lives with its backend; this file
 * only routes, and says plainly why a backend cannot run here.
 */
import type { VerifyOptions } from "./run.js";

export async function verifyBackend(o: VerifyOptions): Promise<number> {
  switch (o.backend) {
    case "mpi": {
      const { verifyMpi } = await import("./mpi.js");
      return verifyMpi(o);
    }
    case "nccl": {
      const { verifyNccl } = await import("./nccl.js");
      return verifyNccl(o);
    }
    default:
      console.error(`cclab verify: unknown backend '${o.backend}'; expected sim, mpi or nccl`);
      return 2;
  }
}
