// Generated from src/native/run-layout.ts by `npx tsx src/tools/run-layout.ts`; do not edit by hand
// (test/run-layout.test.ts fails when this file and the TypeScript differ). The plan runner's
// ctrl and desc slots: what src/backends/mpi/plan-run.ts writes and mpi.cc reads.
#pragma once

#include <cstddef>

namespace cclab::run {

constexpr size_t kCtrlCount = 0;
constexpr size_t kCtrlPosts = 1;
constexpr size_t kCtrlBudgetUs = 2;
constexpr size_t kCtrlYieldCpu = 3;
constexpr size_t kCtrlSleepUs = 4;
constexpr size_t kCtrlMinDone = 5;
constexpr size_t kCtrlUseWake = 6;
constexpr size_t kCtrlMemLo = 7;
constexpr size_t kCtrlLength = 13;
constexpr size_t kDescKind = 0;
constexpr size_t kDescMem = 1;
constexpr size_t kDescOffset = 2;
constexpr size_t kDescBytes = 3;
constexpr size_t kDescPeer = 4;
constexpr size_t kDescTag = 5;
constexpr size_t kDescStride = 6;
constexpr double kDescSend = 0;
constexpr double kDescRecv = 1;

}  // namespace cclab::run
