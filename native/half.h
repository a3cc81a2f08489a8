// float16 / bfloat16 <-> float32 conversions, bit for bit as src/core/dtype.ts (round to nearest
// even; any NaN becomes the canonical NaN 0x7fff, as CUDA's __float2half_rn and __float2bfloat16
// make it: docs/semantics.md F2). Integer code only, so one copy serves the host reductions
// (reduce.cc, mpi.cc) and the CUDA kernels (cuda_reduce.cu).
#pragma once
#include <cstdint>
#include <cstring>

#ifdef __CUDACC__
#define CCLAB_HD __host__ __device__
#else
#define CCLAB_HD
#endif

namespace cclab {

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

}  // namespace cclab
