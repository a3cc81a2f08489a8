/** Pictures: time-space diagrams of traces, deadlock wait-for graphs, model charts. Pure string builders. */
export { type ChartOptions, lineChartSvg, type Marker, type Series } from "./chart.js";
export { blockedText, deadlockDot, deadlockSvg, type WaitFor, waitForGraph } from "./deadlock.js";
export { commonDetail, type Message, pairMessages, stepDetail, stepOf, stepStarts } from "./diagram.js";
export { bytesText, esc, htmlPage, svgSize, timeText } from "./svg.js";
export { type FormulaBytes, traceTable } from "./table.js";
export { type TraceSvgOptions, traceSvg } from "./trace.js";
