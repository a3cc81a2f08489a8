/** Parsers for CLI option values, with messages that name the flag. */
import { InvalidArgumentError as CommanderError } from "commander";
import { parseBytes } from "../bench/metrics.js";

export function intOption(flag: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new CommanderError(`${flag} must be an integer in [${min}, ${max}], got '${value}'`);
    }
    return n;
  };
}

export function numberOption(flag: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0) throw new CommanderError(`${flag} must be a non-negative number, got '${value}'`);
    return n;
  };
}

/** 1K, 64M, 1G, 8 (bytes): nccl-tests' size syntax (parseBytes, shared with cclab bench). */
export function sizeOption(flag: string) {
  return (value: string): number => {
    try {
      return parseBytes(value);
    } catch (e) {
      throw new CommanderError(`${flag}: ${(e as Error).message}`);
    }
  };
}
