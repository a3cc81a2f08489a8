// Native local reductions on host buffers for every dtype and combine: simple restrict loops that
// -O3 vectorises, over the element operations of ops.h (docs/semantics.md), so results equal
// reduceArrays/scaleArrays in src/core/op.ts bit for bit.
#include "reduce.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "ops.h"

namespace cclab {

namespace {

enum class DT { I8, U8, I32, U32, I64, U64, F16, BF16, F32, F64 };

bool ParseDType(const std::string& s, DT* out) {
  static const char* names[] = {"int8",    "uint8",    "int32",   "uint32",  "int64",
                                "uint64",  "float16",  "bfloat16", "float32", "float64"};
  for (int i = 0; i < 10; i++)
    if (s == names[i]) return *out = static_cast<DT>(i), true;
  return false;
}
bool ParseCombine(const std::string& s, Combine* out) {
  static const char* names[] = {"sum", "prod", "min", "max", "band", "bor", "bxor"};
  for (int i = 0; i < 7; i++)
    if (s == names[i]) return *out = static_cast<Combine>(i), true;
  return false;
}
size_t DTBytes(DT d) {
  switch (d) {
    case DT::I8: case DT::U8: return 1;
    case DT::F16: case DT::BF16: return 2;
    case DT::I32: case DT::U32: case DT::F32: return 4;
    default: return 8;
  }
}

template <Combine C, typename T>
void Loop(T* __restrict d, const T* __restrict s, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = Op<C, T>::f(d[i], s[i]);
}
// dst and src may be the same memory (x op x); no restrict then.
template <Combine C, typename T>
void LoopAliased(T* d, const T* s, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = Op<C, T>::f(d[i], s[i]);
}

// NCCL's reduceCopy: d = a op s, a third operand so the first need not be copied into d first.
template <Combine C, typename T>
void Loop3(T* __restrict d, const T* __restrict a, const T* __restrict s, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = Op<C, T>::f(a[i], s[i]);
}
// d may be a or s (element i is read before it is written); no restrict then.
template <Combine C, typename T>
void Loop3Aliased(T* d, const T* a, const T* s, size_t n) {
  for (size_t i = 0; i < n; i++) d[i] = Op<C, T>::f(a[i], s[i]);
}

template <Combine C, typename T>
void Run(void* d, const void* a, const void* s, size_t n, bool aliased) {
  if (a == d) {
    if (aliased) LoopAliased<C, T>(static_cast<T*>(d), static_cast<const T*>(s), n);
    else Loop<C, T>(static_cast<T*>(d), static_cast<const T*>(s), n);
  } else if (aliased) {
    Loop3Aliased<C, T>(static_cast<T*>(d), static_cast<const T*>(a), static_cast<const T*>(s), n);
  } else {
    Loop3<C, T>(static_cast<T*>(d), static_cast<const T*>(a), static_cast<const T*>(s), n);
  }
}

template <Combine C, bool BF>
void RunHalf(void* dv, const void* av, const void* sv, size_t n) {
  uint16_t* d = static_cast<uint16_t*>(dv);
  const uint16_t* a = static_cast<const uint16_t*>(av);
  const uint16_t* s = static_cast<const uint16_t*>(sv);
  for (size_t i = 0; i < n; i++) d[i] = HalfOp<C, BF>(a[i], s[i]);
}

template <Combine C>
bool Dispatch(DT dt, void* d, const void* a, const void* s, size_t n, bool aliased) {
  constexpr bool bitwise = C == Combine::Band || C == Combine::Bor || C == Combine::Bxor;
  switch (dt) {
    case DT::I8: Run<C, int8_t>(d, a, s, n, aliased); return true;
    case DT::U8: Run<C, uint8_t>(d, a, s, n, aliased); return true;
    case DT::I32: Run<C, int32_t>(d, a, s, n, aliased); return true;
    case DT::U32: Run<C, uint32_t>(d, a, s, n, aliased); return true;
    case DT::I64: Run<C, int64_t>(d, a, s, n, aliased); return true;
    case DT::U64: Run<C, uint64_t>(d, a, s, n, aliased); return true;
    default: break;
  }
  if constexpr (bitwise) {
    return false;
  } else {
    switch (dt) {
      case DT::F16: RunHalf<C, false>(d, a, s, n); return true;
      case DT::BF16: RunHalf<C, true>(d, a, s, n); return true;
      case DT::F32: Run<C, float>(d, a, s, n, aliased); return true;
      case DT::F64: Run<C, double>(d, a, s, n, aliased); return true;
      default: return false;
    }
  }
}

// d = a op s, element-wise; a == d is the two-operand d = d op s. `aliased`: the regions overlap.
bool ReduceHost(DT dt, Combine c, void* d, const void* a, const void* s, size_t n, bool aliased) {
  switch (c) {
    case Combine::Sum: return Dispatch<Combine::Sum>(dt, d, a, s, n, aliased);
    case Combine::Prod: return Dispatch<Combine::Prod>(dt, d, a, s, n, aliased);
    case Combine::Min: return Dispatch<Combine::Min>(dt, d, a, s, n, aliased);
    case Combine::Max: return Dispatch<Combine::Max>(dt, d, a, s, n, aliased);
    case Combine::Band: return Dispatch<Combine::Band>(dt, d, a, s, n, aliased);
    case Combine::Bor: return Dispatch<Combine::Bor>(dt, d, a, s, n, aliased);
    case Combine::Bxor: return Dispatch<Combine::Bxor>(dt, d, a, s, n, aliased);
  }
  return false;
}

// dst = (src * mul) / div with mul taken in the element type (P1); element by element in order,
// so dst may alias src.
template <typename T>
void ScaleLoop(void* dv, const void* sv, size_t n, double mul, double div) {
  T* d = static_cast<T*>(dv);
  const T* s = static_cast<const T*>(sv);
  T m;
  if constexpr (kFloat<T>) m = static_cast<T>(mul);
  else m = IntScalar<T>(mul);
  for (size_t i = 0; i < n; i++) d[i] = ScaleOne<T>(s[i], m, div);
}
template <bool BF>
void ScaleHalfLoop(void* dv, const void* sv, size_t n, double mul, double div) {
  uint16_t* d = static_cast<uint16_t*>(dv);
  const uint16_t* s = static_cast<const uint16_t*>(sv);
  const float m = HalfValue<BF>(HalfBits<BF>(static_cast<float>(mul)));  // via float32, as NCCL and torch
  for (size_t i = 0; i < n; i++) d[i] = ScaleHalf<BF>(s[i], m, div);
}

struct HostSpan {
  uint8_t* base;
  size_t bytes;
};

HostSpan Span(const Napi::Env& env, const Napi::Value& v, const char* arg) {
  if (!v.IsTypedArray()) throw Napi::TypeError::New(env, std::string(arg) + " must be a TypedArray");
  Napi::TypedArray ta = v.As<Napi::TypedArray>();
  auto ab = ta.ArrayBuffer();
  return {static_cast<uint8_t*>(ab.Data()) + ta.ByteOffset(), ta.ByteLength()};
}

size_t Index(const Napi::Env& env, const Napi::Value& v, const char* arg) {
  if (!v.IsNumber()) throw Napi::TypeError::New(env, std::string(arg) + " must be a number");
  const double x = v.As<Napi::Number>().DoubleValue();
  if (!(x >= 0) || x != std::floor(x) || x > 9007199254740991.0)
    throw Napi::RangeError::New(env, std::string(arg) + " must be a non-negative integer");
  return static_cast<size_t>(x);
}

DT DTypeArg(const Napi::Env& env, const Napi::Value& v) {
  DT dt;
  if (!v.IsString() || !ParseDType(v.As<Napi::String>().Utf8Value(), &dt))
    throw Napi::TypeError::New(env, "unknown dtype");
  return dt;
}

// Checks [off, off + count) elements lie inside the array and returns the start.
uint8_t* Elements(const Napi::Env& env, const HostSpan& s, DT dt, size_t off, size_t count, const char* arg) {
  const size_t b = DTBytes(dt);
  if ((off + count) * b > s.bytes)
    throw Napi::RangeError::New(env, std::string(arg) + ": elements [" + std::to_string(off) + ", " +
                                         std::to_string(off + count) + ") are outside the array");
  return s.base + off * b;
}

// reduce(dtype, combine, dst, dOff, src, sOff, count[, a, aOff]): dst = dst op src, or dst = a op src.
Napi::Value Reduce(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 7) throw Napi::TypeError::New(env, "reduce(dtype, combine, dst, dOff, src, sOff, count[, a, aOff])");
  const DT dt = DTypeArg(env, info[0]);
  Combine c;
  if (!info[1].IsString() || !ParseCombine(info[1].As<Napi::String>().Utf8Value(), &c))
    throw Napi::TypeError::New(env, "unknown combine");
  const HostSpan ds = Span(env, info[2], "dst"), ss = Span(env, info[4], "src");
  const size_t count = Index(env, info[6], "count");
  uint8_t* d = Elements(env, ds, dt, Index(env, info[3], "dOff"), count, "dst");
  const uint8_t* s = Elements(env, ss, dt, Index(env, info[5], "sOff"), count, "src");
  const size_t bytes = count * DTBytes(dt);
  const uint8_t* a = d;
  if (info.Length() >= 9 && !info[7].IsUndefined()) {
    const HostSpan as = Span(env, info[7], "a");
    a = Elements(env, as, dt, Index(env, info[8], "aOff"), count, "a");
  }
  const auto overlap = [bytes](const uint8_t* x, const uint8_t* y) { return x < y + bytes && y < x + bytes; };
  // d = d op s runs element by element in order, so any overlap is defined; with a third operand
  // only whole-region aliasing is (d is s, or d is a), which is all plans ever make.
  if (a != d && ((overlap(d, s) && d != s) || overlap(d, a)))
    throw Napi::RangeError::New(env, "reduce: dst partly overlaps an operand");
  const bool aliased = overlap(d, s) || (a != d && overlap(a, s));
  if (!ReduceHost(dt, c, d, a, s, count, aliased))
    throw Napi::TypeError::New(env, "reduce op is bitwise and does not apply to a floating-point dtype");
  return env.Undefined();
}

Napi::Value Scale(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 8) throw Napi::TypeError::New(env, "scale(dtype, dst, dOff, src, sOff, count, mul, div)");
  const DT dt = DTypeArg(env, info[0]);
  const HostSpan ds = Span(env, info[1], "dst"), ss = Span(env, info[3], "src");
  const size_t count = Index(env, info[5], "count");
  uint8_t* d = Elements(env, ds, dt, Index(env, info[2], "dOff"), count, "dst");
  const uint8_t* s = Elements(env, ss, dt, Index(env, info[4], "sOff"), count, "src");
  if (!info[6].IsNumber() || !info[7].IsNumber()) throw Napi::TypeError::New(env, "mul and div must be numbers");
  const double mul = info[6].As<Napi::Number>().DoubleValue();
  const double div = info[7].As<Napi::Number>().DoubleValue();
  if (!std::isfinite(mul) || !std::isfinite(div) || div == 0)
    throw Napi::RangeError::New(env, "scale needs a finite mul and a finite non-zero div");
  if ((dt == DT::I64 || dt == DT::U64) && !(div >= 1 && div == std::trunc(div) && div <= 9007199254740991.0))
    throw Napi::RangeError::New(env, "scale of a 64-bit integer dtype needs a positive integer div");
  switch (dt) {
    case DT::I8: ScaleLoop<int8_t>(d, s, count, mul, div); break;
    case DT::U8: ScaleLoop<uint8_t>(d, s, count, mul, div); break;
    case DT::I32: ScaleLoop<int32_t>(d, s, count, mul, div); break;
    case DT::U32: ScaleLoop<uint32_t>(d, s, count, mul, div); break;
    case DT::I64: ScaleLoop<int64_t>(d, s, count, mul, div); break;
    case DT::U64: ScaleLoop<uint64_t>(d, s, count, mul, div); break;
    case DT::F16: ScaleHalfLoop<false>(d, s, count, mul, div); break;
    case DT::BF16: ScaleHalfLoop<true>(d, s, count, mul, div); break;
    case DT::F32: ScaleLoop<float>(d, s, count, mul, div); break;
    case DT::F64: ScaleLoop<double>(d, s, count, mul, div); break;
  }
  return env.Undefined();
}

}  // namespace

int ReduceCode(const std::string& dtype, const std::string& combine) {
  DT dt;
  Combine c;
  if (!ParseDType(dtype, &dt) || !ParseCombine(combine, &c)) return -1;
  const bool bitwise = c == Combine::Band || c == Combine::Bor || c == Combine::Bxor;
  const bool fl = dt == DT::F16 || dt == DT::BF16 || dt == DT::F32 || dt == DT::F64;
  if (bitwise && fl) return -1;
  return static_cast<int>(dt) * 8 + static_cast<int>(c);
}
size_t ReduceCodeBytes(int code) { return code >= 0 && code < 80 ? DTBytes(static_cast<DT>(code / 8)) : 1; }
bool ReduceByCode(int code, void* d, const void* a, const void* s, size_t n, bool aliased) {
  if (code < 0 || code / 8 > static_cast<int>(DT::F64) || code % 8 > static_cast<int>(Combine::Bxor)) return false;
  return ReduceHost(static_cast<DT>(code / 8), static_cast<Combine>(code % 8), d, a, s, n, aliased);
}

void RegisterReduce(Napi::Env env, Napi::Object exports) {
  exports.Set("reduce", Napi::Function::New(env, Reduce, "reduce"));
  exports.Set("scale", Napi::Function::New(env, Scale, "scale"));
}

}  // namespace cclab
