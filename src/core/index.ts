export * from "./buffer.js";
export * from "./dtype.js";
export * from "./errors.js";
export * from "./op.js";
