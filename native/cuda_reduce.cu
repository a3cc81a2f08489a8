// The nccl backend's local reductions on device memory (Comm.reduceInto and Comm.scale), one
// grid-stride kernel per dtype and combine, launched on the communicator's stream. The element
// arithmetic is ops.h's (docs/semantics.md), the one the host reductions (reduce.cc) use, so
// results are bit-identical to them and to src/core/op.ts; nothing is fused or flushed (no fast
// math; nvcc keeps denormals unless told otherwise, and -fmad=false is set).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_reduce.h"
#include "ops.h"

namespace cclab::cuda {

namespace {

using cclab::HalfOp;
using cclab::Op;
using Elementwise = cclab::Combine;  // same numbering as cuda::Combine

// Element i: plain types combine directly; half types (stored as uint16_t) through float32.
template <Elementwise C, typename T, int Half>
__device__ inline void Element(T* d, const T* s, size_t i) {
  if constexpr (Half == 0) d[i] = Op<C, T>::f(d[i], s[i]);
  else d[i] = HalfOp<C, Half == 2>(d[i], s[i]);
}

template <Elementwise C, typename T, int Half>
__global__ void ReduceKernel(T* d, const T* s, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    Element<C, T, Half>(d, s, i);
}

// Partly overlapping ranges: one thread, in element order, as the host loop.
template <Elementwise C, typename T, int Half>
__global__ void ReduceSerial(T* d, const T* s, size_t n) {
  for (size_t i = 0; i < n; i++) Element<C, T, Half>(d, s, i);
}

constexpr int kThreads = 256;

unsigned Blocks(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

template <Elementwise C, typename T, int Half>
int Launch(void* dv, const void* sv, size_t n, cudaStream_t st) {
  T* d = static_cast<T*>(dv);
  const T* s = static_cast<const T*>(sv);
  const uintptr_t a = reinterpret_cast<uintptr_t>(d), b = reinterpret_cast<uintptr_t>(s), bytes = n * sizeof(T);
  const bool partial = a != b && a < b + bytes && b < a + bytes;
  if (partial) ReduceSerial<C, T, Half><<<1, 1, 0, st>>>(d, s, n);
  else ReduceKernel<C, T, Half><<<Blocks(n), kThreads, 0, st>>>(d, s, n);
  return static_cast<int>(cudaGetLastError());
}

template <Elementwise C>
int Dispatch(DType dt, void* d, const void* s, size_t n, cudaStream_t st) {
  constexpr bool bitwise = C == Elementwise::Band || C == Elementwise::Bor || C == Elementwise::Bxor;
  switch (dt) {
    case DType::I8: return Launch<C, int8_t, 0>(d, s, n, st);
    case DType::U8: return Launch<C, uint8_t, 0>(d, s, n, st);
    case DType::I32: return Launch<C, int32_t, 0>(d, s, n, st);
    case DType::U32: return Launch<C, uint32_t, 0>(d, s, n, st);
    case DType::I64: return Launch<C, int64_t, 0>(d, s, n, st);
    case DType::U64: return Launch<C, uint64_t, 0>(d, s, n, st);
    default: break;
  }
  if constexpr (bitwise) {
    return -1;
  } else {
    switch (dt) {
      case DType::F16: return Launch<C, uint16_t, 1>(d, s, n, st);
      case DType::BF16: return Launch<C, uint16_t, 2>(d, s, n, st);
      case DType::F32: return Launch<C, float, 0>(d, s, n, st);
      case DType::F64: return Launch<C, double, 0>(d, s, n, st);
      default: return -1;
    }
  }
}

// Element i of scale (ops.h's ScaleOne/ScaleHalf). Kind: 0 plain type, 2 float16, 3 bfloat16;
// m is the scalar already taken in the element type (or in float32 for the half types).
template <typename T, int Kind, typename M>
__device__ inline void ScaleElement(T* d, const T* s, size_t i, M m, double div) {
  if constexpr (Kind == 0) d[i] = cclab::ScaleOne<T>(s[i], m, div);
  else d[i] = cclab::ScaleHalf<Kind == 3>(s[i], m, div);
}

template <typename T, int Kind, typename M>
__global__ void ScaleKernel(T* d, const T* s, size_t n, M m, double div) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    ScaleElement<T, Kind, M>(d, s, i, m, div);
}

template <typename T, int Kind, typename M>
__global__ void ScaleSerial(T* d, const T* s, size_t n, M m, double div) {
  for (size_t i = 0; i < n; i++) ScaleElement<T, Kind, M>(d, s, i, m, div);
}

// The scalar in the element type (P1), computed once on the host: integers truncate and wrap,
// floats round, float16/bfloat16 round through float32.
template <typename T, int Kind>
auto ElementScalar(double mul) {
  if constexpr (Kind == 2 || Kind == 3) return cclab::HalfValue<Kind == 3>(cclab::HalfBits<Kind == 3>(static_cast<float>(mul)));
  else if constexpr (cclab::kFloat<T>) return static_cast<T>(mul);
  else return cclab::IntScalar<T>(mul);
}

template <typename T, int Kind>
int LaunchScale(void* dv, const void* sv, size_t n, double mul, double div, cudaStream_t st) {
  T* d = static_cast<T*>(dv);
  const T* s = static_cast<const T*>(sv);
  const auto m = ElementScalar<T, Kind>(mul);
  using M = decltype(m);
  const uintptr_t a = reinterpret_cast<uintptr_t>(d), b = reinterpret_cast<uintptr_t>(s), bytes = n * sizeof(T);
  const bool partial = a != b && a < b + bytes && b < a + bytes;
  if (partial) ScaleSerial<T, Kind, std::remove_const_t<M>><<<1, 1, 0, st>>>(d, s, n, m, div);
  else ScaleKernel<T, Kind, std::remove_const_t<M>><<<Blocks(n), kThreads, 0, st>>>(d, s, n, m, div);
  return static_cast<int>(cudaGetLastError());
}

}  // namespace

size_t DTypeBytes(DType dt) {
  switch (dt) {
    case DType::I8:
    case DType::U8: return 1;
    case DType::F16:
    case DType::BF16: return 2;
    case DType::I32:
    case DType::U32:
    case DType::F32: return 4;
    default: return 8;
  }
}

int Reduce(DType dt, Combine c, void* dst, const void* src, size_t count, CUstream_st* stream) {
  if (count == 0) return 0;
  cudaStream_t st = stream;
  switch (c) {
    case Combine::Sum: return Dispatch<Elementwise::Sum>(dt, dst, src, count, st);
    case Combine::Prod: return Dispatch<Elementwise::Prod>(dt, dst, src, count, st);
    case Combine::Min: return Dispatch<Elementwise::Min>(dt, dst, src, count, st);
    case Combine::Max: return Dispatch<Elementwise::Max>(dt, dst, src, count, st);
    case Combine::Band: return Dispatch<Elementwise::Band>(dt, dst, src, count, st);
    case Combine::Bor: return Dispatch<Elementwise::Bor>(dt, dst, src, count, st);
    case Combine::Bxor: return Dispatch<Elementwise::Bxor>(dt, dst, src, count, st);
  }
  return -1;
}

int Scale(DType dt, void* d, const void* s, size_t n, double mul, double div, CUstream_st* stream) {
  if (n == 0) return 0;
  cudaStream_t st = stream;
  switch (dt) {
    case DType::I8: return LaunchScale<int8_t, 0>(d, s, n, mul, div, st);
    case DType::U8: return LaunchScale<uint8_t, 0>(d, s, n, mul, div, st);
    case DType::I32: return LaunchScale<int32_t, 0>(d, s, n, mul, div, st);
    case DType::U32: return LaunchScale<uint32_t, 0>(d, s, n, mul, div, st);
    case DType::I64: return LaunchScale<int64_t, 0>(d, s, n, mul, div, st);
    case DType::U64: return LaunchScale<uint64_t, 0>(d, s, n, mul, div, st);
    case DType::F16: return LaunchScale<uint16_t, 2>(d, s, n, mul, div, st);
    case DType::BF16: return LaunchScale<uint16_t, 3>(d, s, n, mul, div, st);
    case DType::F32: return LaunchScale<float, 0>(d, s, n, mul, div, st);
    case DType::F64: return LaunchScale<double, 0>(d, s, n, mul, div, st);
  }
  return -1;
}

}  // namespace cclab::cuda
