// Host-buffer reductions shared by every engine binding: dst = dst (op) src and dst = src * mul / div,
// with exactly the per-element rounding and wraparound of src/core/op.ts.
#pragma once
#include <napi.h>

#include <string>

namespace cclab {
// Registers reduce(dtype, combine, dst, dOff, src, sOff, count) and
// scale(dtype, dst, dOff, src, sOff, count, mul, div) on `exports` (offsets and counts in elements).
void RegisterReduce(Napi::Env env, Napi::Object exports);
// The same kernels for a binding's leaner call (mpi.cc's plan runner): a dtype and combine by name
// as one code (-1 if unknown or a bitwise combine of a float dtype), its element size, and
// d = a op s by code over n elements (a == d: d = d op s; `aliased`: the regions overlap), false
// for a code that names no reduction.
int ReduceCode(const std::string& dtype, const std::string& combine);
size_t ReduceCodeBytes(int code);
bool ReduceByCode(int code, void* d, const void* a, const void* s, size_t n, bool aliased);
}  // namespace cclab
