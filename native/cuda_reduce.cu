// The nccl backend's local reductions on device memory (Comm.reduceInto and Comm.scale), one
// grid-stride kernel per dtype and combine, launched on the communicator's stream. Results are
// bit-identical to native/reduce.cc (and so to src/core/op.ts): the float16/bfloat16 conversions
// below are reduce.cc's, ported as __host__ __device__ integer code, and nothing is fused or
// flushed (no fast math; nvcc keeps denormals unless told otherwise, and -fmad=false is set).
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cuda_reduce.h"
#include "half.h"

namespace cclab::cuda {

namespace {


template <typename T> struct Unsigned { using type = std::make_unsigned_t<T>; };
template <> struct Unsigned<float> { using type = float; };
template <> struct Unsigned<double> { using type = double; };

template <Combine C, typename T> struct Op;
template <typename T> struct Op<Combine::Sum, T> {
  __device__ static T f(T a, T b) {
    using U = typename Unsigned<T>::type;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  }
};
template <typename T> struct Op<Combine::Prod, T> {
  __device__ static T f(T a, T b) {
    using U = typename Unsigned<T>::type;
    using W = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;
    return static_cast<T>(static_cast<U>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b))));
  }
};
template <> struct Op<Combine::Prod, float> { __device__ static float f(float a, float b) { return __fmul_rn(a, b); } };
template <> struct Op<Combine::Prod, double> { __device__ static double f(double a, double b) { return __dmul_rn(a, b); } };
template <> struct Op<Combine::Sum, float> { __device__ static float f(float a, float b) { return __fadd_rn(a, b); } };
template <> struct Op<Combine::Sum, double> { __device__ static double f(double a, double b) { return __dadd_rn(a, b); } };
template <typename T> struct Op<Combine::Min, T> { __device__ static T f(T a, T b) { return b < a ? b : a; } };
template <typename T> struct Op<Combine::Max, T> { __device__ static T f(T a, T b) { return b > a ? b : a; } };
template <typename T> struct Op<Combine::Band, T> { __device__ static T f(T a, T b) { return a & b; } };
template <typename T> struct Op<Combine::Bor, T> { __device__ static T f(T a, T b) { return a | b; } };
template <typename T> struct Op<Combine::Bxor, T> { __device__ static T f(T a, T b) { return a ^ b; } };

// Element i: plain types combine directly; half types (stored as uint16_t) through float32.
template <Combine C, typename T, int Half>
__device__ inline void Element(T* d, const T* s, size_t i) {
  if constexpr (Half == 0) {
    d[i] = Op<C, T>::f(d[i], s[i]);
  } else {
    const float a = Half == 2 ? BFloat16ToFloat(d[i]) : HalfToFloat(d[i]);
    const float b = Half == 2 ? BFloat16ToFloat(s[i]) : HalfToFloat(s[i]);
    const float r = Op<C, float>::f(a, b);
    d[i] = Half == 2 ? FloatToBFloat16(r) : FloatToHalf(r);
  }
}

template <Combine C, typename T, int Half>
__global__ void ReduceKernel(T* d, const T* s, size_t n) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    Element<C, T, Half>(d, s, i);
}

// Partly overlapping ranges: one thread, in element order, as the host loop.
template <Combine C, typename T, int Half>
__global__ void ReduceSerial(T* d, const T* s, size_t n) {
  for (size_t i = 0; i < n; i++) Element<C, T, Half>(d, s, i);
}

constexpr int kThreads = 256;

unsigned Blocks(size_t n) {
  const size_t b = (n + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 4096 ? (b > 0 ? b : 1) : 4096);
}

template <Combine C, typename T, int Half>
int Launch(void* dv, const void* sv, size_t n, cudaStream_t st) {
  T* d = static_cast<T*>(dv);
  const T* s = static_cast<const T*>(sv);
  const uintptr_t a = reinterpret_cast<uintptr_t>(d), b = reinterpret_cast<uintptr_t>(s), bytes = n * sizeof(T);
  const bool partial = a != b && a < b + bytes && b < a + bytes;
  if (partial) ReduceSerial<C, T, Half><<<1, 1, 0, st>>>(d, s, n);
  else ReduceKernel<C, T, Half><<<Blocks(n), kThreads, 0, st>>>(d, s, n);
  return static_cast<int>(cudaGetLastError());
}

template <Combine C>
int Dispatch(DType dt, void* d, const void* s, size_t n, cudaStream_t st) {
  constexpr bool bitwise = C == Combine::Band || C == Combine::Bor || C == Combine::Bxor;
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

// JavaScript's store of Math.trunc(double) into an N-bit integer TypedArray (reduce.cc's JsToInt).
template <typename T>
__device__ inline T JsToInt(double r) {
  if (!isfinite(r)) return 0;
  double t = trunc(r);
  if (!(fabs(t) < 9.2e18)) t = fmod(t, 4294967296.0);
  return static_cast<T>(static_cast<std::make_unsigned_t<T>>(static_cast<uint64_t>(static_cast<int64_t>(t))));
}

// Kind: 0 integer (JS double semantics), 1 float/double, 2 float16, 3 bfloat16, 4 64-bit integer (BigInt).
template <typename T, int Kind>
__device__ inline void ScaleElement(T* d, const T* s, size_t i, double mul, double div, int64_t imul, int64_t idiv) {
  if constexpr (Kind == 0) {
    d[i] = JsToInt<T>(__ddiv_rn(__dmul_rn(static_cast<double>(s[i]), mul), div));
  } else if constexpr (Kind == 1) {
    d[i] = static_cast<T>(__ddiv_rn(__dmul_rn(static_cast<double>(s[i]), mul), div));
  } else if constexpr (Kind == 2 || Kind == 3) {
    const double v = Kind == 3 ? BFloat16ToFloat(s[i]) : HalfToFloat(s[i]);
    const float r = static_cast<float>(__ddiv_rn(__dmul_rn(v, mul), div));
    d[i] = Kind == 3 ? FloatToBFloat16(r) : FloatToHalf(r);
  } else {
    const __int128 r = static_cast<__int128>(s[i]) * imul / idiv;
    d[i] = static_cast<T>(static_cast<uint64_t>(static_cast<unsigned __int128>(r)));
  }
}

template <typename T, int Kind>
__global__ void ScaleKernel(T* d, const T* s, size_t n, double mul, double div, int64_t imul, int64_t idiv) {
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    ScaleElement<T, Kind>(d, s, i, mul, div, imul, idiv);
}

template <typename T, int Kind>
__global__ void ScaleSerial(T* d, const T* s, size_t n, double mul, double div, int64_t imul, int64_t idiv) {
  for (size_t i = 0; i < n; i++) ScaleElement<T, Kind>(d, s, i, mul, div, imul, idiv);
}

template <typename T, int Kind>
int LaunchScale(void* dv, const void* sv, size_t n, double mul, double div, cudaStream_t st) {
  T* d = static_cast<T*>(dv);
  const T* s = static_cast<const T*>(sv);
  const int64_t imul = static_cast<int64_t>(std::trunc(mul)), idiv = static_cast<int64_t>(div);
  const uintptr_t a = reinterpret_cast<uintptr_t>(d), b = reinterpret_cast<uintptr_t>(s), bytes = n * sizeof(T);
  const bool partial = a != b && a < b + bytes && b < a + bytes;
  if (partial) ScaleSerial<T, Kind><<<1, 1, 0, st>>>(d, s, n, mul, div, imul, idiv);
  else ScaleKernel<T, Kind><<<Blocks(n), kThreads, 0, st>>>(d, s, n, mul, div, imul, idiv);
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
    case Combine::Sum: return Dispatch<Combine::Sum>(dt, dst, src, count, st);
    case Combine::Prod: return Dispatch<Combine::Prod>(dt, dst, src, count, st);
    case Combine::Min: return Dispatch<Combine::Min>(dt, dst, src, count, st);
    case Combine::Max: return Dispatch<Combine::Max>(dt, dst, src, count, st);
    case Combine::Band: return Dispatch<Combine::Band>(dt, dst, src, count, st);
    case Combine::Bor: return Dispatch<Combine::Bor>(dt, dst, src, count, st);
    case Combine::Bxor: return Dispatch<Combine::Bxor>(dt, dst, src, count, st);
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
    case DType::I64: return LaunchScale<int64_t, 4>(d, s, n, mul, div, st);
    case DType::U64: return LaunchScale<uint64_t, 4>(d, s, n, mul, div, st);
    case DType::F16: return LaunchScale<uint16_t, 2>(d, s, n, mul, div, st);
    case DType::BF16: return LaunchScale<uint16_t, 3>(d, s, n, mul, div, st);
    case DType::F32: return LaunchScale<float, 1>(d, s, n, mul, div, st);
    case DType::F64: return LaunchScale<double, 1>(d, s, n, mul, div, st);
  }
  return -1;
}

}  // namespace cclab::cuda
