// Host-buffer reductions shared by every engine binding: dst = dst (op) src and dst = src * mul / div,
// with exactly the per-element rounding and wraparound of src/core/op.ts.
#pragma once
#include <napi.h>

#include "half.h"

namespace cclab {
// Registers reduce(dtype, combine, dst, dOff, src, sOff, count) and
// scale(dtype, dst, dOff, src, sOff, count, mul, div) on `exports` (offsets and counts in elements).
void RegisterReduce(Napi::Env env, Napi::Object exports);
}  // namespace cclab
