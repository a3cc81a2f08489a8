// Host-buffer reductions shared by every engine binding: dst = dst (op) src and dst = src * mul / div,
// with exactly the per-element rounding and wraparound of src/core/op.ts.
#pragma once
#include <napi.h>

namespace cclab {
// Registers reduce(dtype, combine, dst, dOff, src, sOff, count) and
// scale(dtype, dst, dOff, src, sOff, count, mul, div) on `exports` (offsets and counts in elements).
void RegisterReduce(Napi::Env env, Napi::Object exports);

// float16 / bfloat16 <-> float32, bit-for-bit as src/core/dtype.ts (round to nearest even).
float HalfToFloat(uint16_t bits);
uint16_t FloatToHalf(float value);
float BFloat16ToFloat(uint16_t bits);
uint16_t FloatToBFloat16(float value);
}  // namespace cclab
