// The element arithmetic of docs/semantics.md, defined once for the host reductions (reduce.cc,
// and mpi.cc's float16/bfloat16 MPI ops) and the CUDA kernels (cuda_reduce.cu); bit for bit
// what src/core/op.ts computes. Rule names in comments (I1, F3, ...) are the document's.
//   - integers wrap: computed in the unsigned type, so overflow is defined (I1);
//   - floats round once to the element type; float16/bfloat16 are computed in float32 and
//     rounded back (F1); every NaN result is the canonical NaN (F2);
//   - min/max ignore a NaN operand and order -0 below +0 (F3), so both are commutative bit for bit;
//   - scale: the scalar is taken in the element type (P1), then multiplied in it; integer
//     division truncates toward zero (A1).
//   - float16 / bfloat16 <-> float32 conversions, bit for bit as src/core/dtype.ts: round to
//     nearest even; any NaN becomes the canonical NaN 0x7fff, as CUDA's __float2half_rn and
//     __float2bfloat16 make it (F2). Integer code only, so one copy serves host and device.
// Callers compile without fast math and without FMA contraction (CMakeLists.txt).
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#ifdef __CUDACC__
#define CCLAB_HD __host__ __device__
#else
#define CCLAB_HD
#endif

namespace cclab {

// ---- float16 / bfloat16 <-> float32 conversions ----

// The same bytes as another type of the same size (std::bit_cast, usable in device code).
template <typename To, typename From>
CCLAB_HD inline To BitCast(From x) {
  static_assert(sizeof(To) == sizeof(From), "BitCast needs types of one size");
  To t;
  memcpy(&t, &x, sizeof(To));
  return t;
}
CCLAB_HD inline uint32_t Bits(float f) { return BitCast<uint32_t>(f); }
CCLAB_HD inline float FromBits(uint32_t u) { return BitCast<float>(u); }

CCLAB_HD inline uint16_t FloatToHalf(float value) {
  const uint32_t x = Bits(value);
  const uint32_t sign = (x >> 16) & 0x8000;
  const int32_t exp = (x >> 23) & 0xff;
  uint32_t mant = x & 0x7fffff;
  if (exp == 0xff) return mant ? 0x7fff : sign | 0x7c00;
  int32_t e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const uint32_t shift = 14 - e;
    const uint32_t half = 1u << (shift - 1);
    const uint32_t rest = mant & ((1u << shift) - 1);
    uint32_t r = mant >> shift;
    if (rest > half || (rest == half && (r & 1))) r++;
    return sign | r;
  }
  const uint32_t rest = mant & 0x1fff;
  mant >>= 13;
  if (rest > 0x1000 || (rest == 0x1000 && (mant & 1))) {
    mant++;
    if (mant == 0x400) {
      mant = 0;
      e++;
      if (e >= 0x1f) return sign | 0x7c00;
    }
  }
  return sign | (e << 10) | mant;
}

CCLAB_HD inline float HalfToFloat(uint16_t bits) {
  const float sign = (bits & 0x8000) ? -1.0f : 1.0f;
  const uint32_t exp = (bits >> 10) & 0x1f;
  const uint32_t mant = bits & 0x3ff;
  if (exp == 0) return sign * static_cast<float>(mant) * 0x1p-24f;
  if (exp == 0x1f) return mant ? FromBits(0x7fc00000u) : sign * FromBits(0x7f800000u);
  return FromBits(((bits & 0x8000u) << 16) | ((exp - 15 + 127) << 23) | (mant << 13));
}

CCLAB_HD inline uint16_t FloatToBFloat16(float value) {
  const uint32_t x = Bits(value);
  if ((x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff)) return 0x7fff;
  const uint32_t rounded = x + 0x7fff + ((x >> 16) & 1);
  return (rounded >> 16) & 0xffff;
}

CCLAB_HD inline float BFloat16ToFloat(uint16_t bits) { return FromBits(static_cast<uint32_t>(bits) << 16); }

// ---- element operations ----

// sum prod min max band bor bxor (the order of the names in src/core/op.ts's Combine)
enum class Combine { Sum, Prod, Min, Max, Band, Bor, Bxor };

// F2: a NaN result becomes the canonical NaN (CUDA's 0x7fffffff for float32; all ones for float64).
CCLAB_HD inline float Canonical(float r) { return r != r ? FromBits(0x7fffffffu) : r; }
CCLAB_HD inline double Canonical(double r) { return r != r ? BitCast<double>(0x7fffffffffffffffull) : r; }


// F3: fminf/fmaxf with -0 < +0 (PTX min.f32/max.f32, __hmin/__hmax). Both NaN: a NaN (made
// canonical by the caller). Written as selects so that -O3 vectorises the loops: zeros are
// resolved arithmetically, -((-a) + (-b)) is -0 if either zero is -0 and a + b is +0 if either is +0.
template <typename T>
CCLAB_HD inline T FMin(T a, T b) {
  T r = b < a ? b : a;
  r = (a == 0 && b == 0) ? -((-a) + (-b)) : r;
  return a != a ? b : r;
}
template <typename T>
CCLAB_HD inline T FMax(T a, T b) {
  T r = b > a ? b : a;
  r = (a == 0 && b == 0) ? a + b : r;
  return a != a ? b : r;
}

template <typename T>
struct Unsigned {
  using type = std::make_unsigned_t<T>;
};

template <typename T>
constexpr bool kFloat = std::is_floating_point_v<T>;

// Float a + b or a * b, rounded once (on the device explicitly, so nothing contracts), NaN canonical.
template <Combine C, typename T>
CCLAB_HD inline T FloatArith(T a, T b) {
#ifdef __CUDA_ARCH__
  if constexpr (sizeof(T) == 4) return Canonical(C == Combine::Sum ? __fadd_rn(a, b) : __fmul_rn(a, b));
  else return Canonical(C == Combine::Sum ? __dadd_rn(a, b) : __dmul_rn(a, b));
#else
  return Canonical(C == Combine::Sum ? a + b : a * b);
#endif
}

// One element: dst (op) src; the primary template is sum and prod. Integers in the unsigned type
// (I1); int8*int8 is promoted to 32 bits and still wraps.
template <Combine C, typename T>
struct Op {
  static_assert(C == Combine::Sum || C == Combine::Prod, "min, max and the bitwise ops are specialised below");
  CCLAB_HD static inline T f(T a, T b) {
    if constexpr (kFloat<T>) {
      return FloatArith<C>(a, b);
    } else {
      using U = typename Unsigned<T>::type;
      using W = std::conditional_t<(sizeof(T) < 4), uint32_t, U>;  // int8*int8 would promote to signed int
      const W x = static_cast<U>(a), y = static_cast<U>(b);
      return static_cast<T>(static_cast<U>(C == Combine::Sum ? x + y : x * y));
    }
  }
};
template <typename T>
struct Op<Combine::Min, T> {
  CCLAB_HD static inline T f(T a, T b) {
    if constexpr (kFloat<T>) return Canonical(FMin(a, b));
    else return b < a ? b : a;
  }
};
template <typename T>
struct Op<Combine::Max, T> {
  CCLAB_HD static inline T f(T a, T b) {
    if constexpr (kFloat<T>) return Canonical(FMax(a, b));
    else return b > a ? b : a;
  }
};
template <typename T>
struct Op<Combine::Band, T> {
  CCLAB_HD static inline T f(T a, T b) { return a & b; }
};
template <typename T>
struct Op<Combine::Bor, T> {
  CCLAB_HD static inline T f(T a, T b) { return a | b; }
};
template <typename T>
struct Op<Combine::Bxor, T> {
  CCLAB_HD static inline T f(T a, T b) { return a ^ b; }
};

// float16 (BF = false) / bfloat16 (BF = true) stored as raw bits: combined in float32, rounded back (F1).
template <bool BF>
CCLAB_HD inline float HalfValue(uint16_t h) {
  return BF ? BFloat16ToFloat(h) : HalfToFloat(h);
}
template <bool BF>
CCLAB_HD inline uint16_t HalfBits(float f) {
  return BF ? FloatToBFloat16(f) : FloatToHalf(f);
}
template <Combine C, bool BF>
CCLAB_HD inline uint16_t HalfOp(uint16_t a, uint16_t b) {
  const float x = HalfValue<BF>(a), y = HalfValue<BF>(b);
  if constexpr (C == Combine::Min || C == Combine::Max) {
    // The result is an operand (F3), so pick its bits instead of converting back: equal values
    // differ in bits only as -0 and +0, where or/and of the bits picks -0 for min, +0 for max.
    if (x != x && y != y) return 0x7fff;  // the canonical NaN of both half types (F2)
    if (x == y) return C == Combine::Min ? (a | b) : (a & b);
    return Op<C, float>::f(x, y) == x ? a : b;
  } else {
    return HalfBits<BF>(Op<C, float>::f(x, y));
  }
}

// trunc(x) modulo 2^64, as BigInt.asUintN(64, BigInt(Math.trunc(x))) (x finite).
CCLAB_HD inline uint64_t WrapU64(double x) {
  double t = ::trunc(x);
  t = ::fmod(t, 18446744073709551616.0);  // exact: |t| < 2^64 after it
  return t >= 0 ? static_cast<uint64_t>(t) : static_cast<uint64_t>(0) - static_cast<uint64_t>(-t);
}

// P1: the scalar x taken in integer type T: truncated toward zero, wrapped to T's width.
template <typename T>
CCLAB_HD inline T IntScalar(double x) {
  return static_cast<T>(static_cast<typename Unsigned<T>::type>(WrapU64(x)));
}

// JavaScript's store of a double into an N-bit integer TypedArray after Math.trunc: NaN and
// infinities become 0, everything else is reduced modulo 2^N (ToInt8/ToUint8/ToInt32/ToUint32).
template <typename T>
CCLAB_HD inline T JsToInt(double r) {
  if (((BitCast<uint64_t>(r) >> 52) & 0x7ff) == 0x7ff) return 0;  // NaN, infinity
  return IntScalar<T>(r);
}

// One element of scale: (x * m) / div in T, with m already the scalar in T (P1). Integers: the
// product wraps (I1) and the division truncates toward zero (A1); 8- and 32-bit integers divide
// in double as JavaScript does, 64-bit ones exactly. Floats: each step rounds once (F1), NaN
// canonical (F2).
template <typename T>
CCLAB_HD inline T ScaleOne(T x, T m, double div) {
  if constexpr (kFloat<T>) {
    T r = Canonical(static_cast<T>(x * m));
    return div == 1 ? r : Canonical(static_cast<T>(r / static_cast<T>(div)));
  } else {
    const T p = Op<Combine::Prod, T>::f(x, m);
    if (div == 1) return p;
    if constexpr (sizeof(T) == 8) return static_cast<T>(p / static_cast<T>(div));
    else return JsToInt<T>(static_cast<double>(p) / div);
  }
}
template <bool BF>
CCLAB_HD inline uint16_t ScaleHalf(uint16_t x, float m, double div) {
  const uint16_t p = HalfBits<BF>(HalfValue<BF>(x) * m);
  return div == 1 ? p : HalfBits<BF>(HalfValue<BF>(p) / static_cast<float>(div));
}

}  // namespace cclab
