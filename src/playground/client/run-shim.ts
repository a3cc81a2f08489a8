/**
 * examples/_run.ts as the playground carries it: print() goes to the rank's panel on the page
 * (the worker sets each rank's sink), and runIfMain does nothing (the page's Run button is how a
 * program starts here).
 */
import type { Comm } from "../../comm.js";
import { formatLine } from "./format.js";

export type Main = (comm: Comm, args?: string[]) => Promise<void>;
export type Print = (...parts: unknown[]) => void;

const sinks = new WeakMap<Comm, (line: string) => void>();

/** Where `comm`'s prints go (set by the worker for each rank's world comm). */
export function setSink(comm: Comm, sink: (line: string) => void): void {
  sinks.set(comm, sink);
}

export function printer(comm: Comm): Print {
  return (...parts) => {
    const line = formatLine(parts);
    const sink = sinks.get(comm);
    if (sink) sink(line);
    else console.log(line);
  };
}

export function runIfMain(_url: string, _main: Main): void {}

export function runSim(): never {
  throw new Error("runSim(): in the playground, press Run (the page runs main(comm) on the ranks you choose)");
}
