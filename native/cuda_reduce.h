// Device-buffer reductions for the nccl backend (native/cuda_reduce.cu), compiled only when CMake
// finds the CUDA toolkit. The element arithmetic is native/ops.h's (docs/semantics.md), shared
// with native/reduce.cc, so they equal it and src/core/op.ts element for element: integers wrap,
// float16/bfloat16 combine in float32 and round back per element, NaN results are canonical,
// min/max ignore NaN and order -0 below +0. Every launch goes on the caller's stream and returns
// once enqueued.
#pragma once
#include <cstddef>

struct CUstream_st;

namespace cclab::cuda {

// Same numbering as native/reduce.cc: int8 uint8 int32 uint32 int64 uint64 float16 bfloat16 float32 float64.
enum class DType { I8, U8, I32, U32, I64, U64, F16, BF16, F32, F64 };
// sum prod min max band bor bxor
enum class Combine { Sum, Prod, Min, Max, Band, Bor, Bxor };

size_t DTypeBytes(DType dt);

// dst[i] = dst[i] (combine) src[i] for count elements; returns a cudaError_t (0 = enqueued), or -1
// for a bitwise combine on a floating-point dtype. Partly overlapping dst/src run in element order,
// as the host loop does (one thread); identical or disjoint ranges run in parallel.
int Reduce(DType dt, Combine c, void* dst, const void* src, size_t count, CUstream_st* stream);

// dst[i] = (src[i] * mul) / div for count elements, mul taken in the element type first (ops.h's
// ScaleOne; the caller checks mul is finite and, for 64-bit integers, div a positive integer).
int Scale(DType dt, void* dst, const void* src, size_t count, double mul, double div, CUstream_st* stream);

}  // namespace cclab::cuda
