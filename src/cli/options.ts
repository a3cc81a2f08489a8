/** Parsers for CLI option values, with messages that name the flag. */
import { InvalidArgumentError as CommanderError } from "commander";

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

/** 1K, 64M, 1G, 8 (bytes): nccl-tests' size syntax. */
export function sizeOption(flag: string) {
  return (value: string): number => {
    const m = /^(\d+(?:\.\d+)?)([KMG]?)B?$/i.exec(value.trim());
    if (!m) throw new CommanderError(`${flag} must be a size like 8, 1K, 64M or 1G, got '${value}'`);
    const mult = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3 }[(m[2] ?? "").toUpperCase() as "" | "K" | "M" | "G"];
    return Math.round(Number(m[1]) * mult);
  };
}
