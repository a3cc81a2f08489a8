/**
 * Units for the network model's flags and reports. Inside the model time is in microseconds and
 * bandwidth in bytes per microsecond (= MB/s); users write '400Gb/s', '50GB/s', '25 GB/s',
 * '100ns', '1.5us'. Prefixes are decimal (K = 10^3, M = 10^6, G = 10^9, T = 10^12), as network
 * vendors quote them; the case of the final letter says bits (b) or bytes (B). Binary prefixes
 * (KiB/s, MiB/s, GiB/s, TiB/s) are accepted too and mean powers of 1024.
 */
import { InvalidArgumentError } from "../../core/errors.js";

const PREFIX: Readonly<Record<string, number>> = { "": 1, k: 1e3, m: 1e6, g: 1e9, t: 1e12 };
const BINARY: Readonly<Record<string, number>> = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40 };

const NUMBER = "([0-9]+(?:\\.[0-9]*)?(?:[eE][+-]?[0-9]+)?|\\.[0-9]+(?:[eE][+-]?[0-9]+)?)";
const BANDWIDTH_RE = new RegExp(`^${NUMBER}\\s*([kKmMgGtT]?)(i?)([bB])(?:/s|ps)$`);
const TIME_RE = new RegExp(`^${NUMBER}\\s*(ns|us|µs|μs|ms|s)$`);

/** Microseconds per unit of time. */
const TIME_UNIT: Readonly<Record<string, number>> = { ns: 1e-3, us: 1, µs: 1, μs: 1, ms: 1e3, s: 1e6 };

function bad(flag: string, what: string, text: unknown): InvalidArgumentError {
  const shown = typeof text === "string" ? `'${text}'` : String(text);
  return new InvalidArgumentError({ op: flag }, `expected ${what}, got ${shown}`);
}

/**
 * A bandwidth with its unit ('400Gb/s', '50GB/s', '25 GB/s', '100Gbps', '10GiB/s') in bytes per
 * microsecond. `flag` names the flag or field in the error ('--link'). Zero, negative and
 * unit-less values are refused: a bare number could mean bits or bytes.
 */
export function parseBandwidth(text: string, flag: string): number {
  const m = typeof text === "string" ? BANDWIDTH_RE.exec(text.trim()) : null;
  if (!m) throw bad(flag, "a bandwidth like 400Gb/s or 50GB/s", text);
  const [, num, prefix, binary, unit] = m as unknown as [string, string, string, string, string];
  const p = prefix.toLowerCase();
  if (binary && !p) throw bad(flag, "a bandwidth like 400Gb/s or 50GB/s", text);
  const scale = binary ? (BINARY[p] as number) : (PREFIX[p] as number);
  const bytesPerSecond = Number(num) * scale * (unit === "b" ? 1 / 8 : 1);
  if (!(bytesPerSecond > 0) || !Number.isFinite(bytesPerSecond))
    throw bad(flag, "a positive, finite bandwidth like 400Gb/s or 50GB/s", text);
  return bytesPerSecond / 1e6;
}

/**
 * A time with its unit ('100ns', '1.5us', '1.5µs', '2ms', '0.001s') in microseconds. A bare '0'
 * is accepted (zero in any unit); other unit-less numbers and negative times are refused.
 */
export function parseTime(text: string, flag: string): number {
  if (typeof text === "string" && /^\s*0*\.?0*\s*$/.test(text) && /0/.test(text)) return 0;
  const m = typeof text === "string" ? TIME_RE.exec(text.trim()) : null;
  if (!m) throw bad(flag, "a time like 100ns, 1.5us or 2ms", text);
  const [, num, unit] = m as unknown as [string, string, string];
  const us = Number(num) * (TIME_UNIT[unit] as number);
  if (!Number.isFinite(us)) throw bad(flag, "a finite time like 100ns, 1.5us or 2ms", text);
  return us;
}

/** Four significant digits at most, no trailing zeros: 400, 1.5, 0.3333. */
function short(x: number): string {
  return String(Number(x.toPrecision(4)));
}

/**
 * A bandwidth (bytes per microsecond) for reports, with the largest decimal prefix that keeps the
 * number at 1 or more: '400 Gb/s' in bits, '50 GB/s' in bytes (the default).
 */
export function formatBandwidth(bytesPerUs: number, unit: "bits" | "bytes" = "bytes"): string {
  const perSecond = bytesPerUs * 1e6 * (unit === "bits" ? 8 : 1);
  const letter = unit === "bits" ? "b" : "B";
  if (!Number.isFinite(perSecond)) return `${perSecond} ${letter}/s`;
  for (const [p, scale] of [
    ["T", 1e12],
    ["G", 1e9],
    ["M", 1e6],
    ["K", 1e3],
  ] as const) {
    if (Math.abs(perSecond) >= scale) return `${short(perSecond / scale)} ${p}${letter}/s`;
  }
  return `${short(perSecond)} ${letter}/s`;
}

/** A time (microseconds) for reports: '100 ns', '1.5 µs', '2 ms', '1.2 s'; zero is '0 µs'. */
export function formatTime(us: number): string {
  const a = Math.abs(us);
  if (a === 0 || !Number.isFinite(us)) return `${us} µs`;
  if (a < 1) return `${short(us * 1e3)} ns`;
  if (a < 1e3) return `${short(us)} µs`;
  if (a < 1e6) return `${short(us / 1e3)} ms`;
  return `${short(us / 1e6)} s`;
}
