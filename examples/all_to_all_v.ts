/**
 * Seed 001 §9 (AllToAll): all_to_all_single with even splits (run_single), then with variable
 * splits (run_variable_size): rank i sends input_splits[i][j] elements to rank j, and the output
 * splits are the transpose. The split table is the seed's, for 4 ranks.
 */
import { allToAll, allToAllv, type Comm, InvalidArgumentError, tensor, zeros } from "../src/index.js";
import { printer, runIfMain } from "./_run.js";
import { arange, torchStr } from "./_tensor.js";

const INPUTS = [
  [0, 1, 2, 3, 4, 5],
  [10, 11, 12, 13, 14, 15, 16, 17, 18],
  [20, 21, 22, 23, 24],
  [30, 31, 32, 33, 34, 35, 36],
];
const INPUT_SPLITS = [
  [2, 2, 1, 1],
  [3, 2, 2, 2],
  [2, 1, 1, 1],
  [2, 2, 2, 1],
];

export async function main(comm: Comm): Promise<void> {
  const print = printer(comm);
  const { rank, size } = comm;
  if (size !== INPUT_SPLITS.length) {
    throw new InvalidArgumentError(
      { rank, op: "all_to_all_v example", arg: "-n" },
      "the seed's split table is for 4 ranks",
    );
  }
  // run_single: input = arange(4) + rank*4; element j goes to rank j.
  const input = arange("int64", size, rank * size);
  const output = zeros("int64", size);
  await allToAll(comm, output, input);
  print(`Rank ${rank} input: ${torchStr(input)} → output: ${torchStr(output)}`);

  // run_variable_size.
  const inputSplits = INPUT_SPLITS[rank]!;
  const outputSplits = INPUT_SPLITS.map((row) => row[rank]!);
  const vin = tensor("int64", INPUTS[rank]!.map(BigInt));
  const vout = zeros(
    "int64",
    outputSplits.reduce((a, b) => a + b, 0),
  );
  await allToAllv(comm, vout, vin, { inputSplits, outputSplits });
  print(`Rank ${rank} variable output: ${torchStr(vout)}`);
}

runIfMain(import.meta.url, main);
