// Argument readers shared by the engine bindings (mpi.cc, nccl.cc): numbers that must be 32-bit
// integers or sizes up to 2^53, and host memory given as a TypedArray or ArrayBuffer plus a byte
// offset. Each throws a JS TypeError or RangeError naming the argument.
#pragma once
#include <napi.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>

namespace cclab::args {

// info[i] as a 32-bit integer.
inline int Int(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i >= info.Length() || !info[i].IsNumber())
    throw Napi::TypeError::New(info.Env(), std::string(name) + " must be a number");
  const double x = info[i].As<Napi::Number>().DoubleValue();
  if (x != std::floor(x) || x < -2147483648.0 || x > 2147483647.0)
    throw Napi::RangeError::New(info.Env(), std::string(name) + " must be a 32-bit integer");
  return static_cast<int>(x);
}

// info[i] as a non-negative integer up to 2^53 (byte offsets, byte sizes, element counts).
inline size_t Size(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i >= info.Length() || !info[i].IsNumber())
    throw Napi::TypeError::New(info.Env(), std::string(name) + " must be a number");
  const double x = info[i].As<Napi::Number>().DoubleValue();
  if (!(x >= 0) || x != std::floor(x) || x > 9007199254740991.0)
    throw Napi::RangeError::New(info.Env(), std::string(name) + " must be a non-negative integer");
  return static_cast<size_t>(x);
}

// Host memory from `offset` bytes into a TypedArray or ArrayBuffer to the end of its view.
// `base` is null only where the array has no storage (length 0).
struct HostBytes {
  uint8_t* base;
  uint8_t* ptr;
  size_t length;
};

// info[i] with the byte offset info[offArg]; `what` names the argument in errors ("buffer").
inline HostBytes Host(const Napi::CallbackInfo& info, size_t i, size_t offArg, const char* what) {
  Napi::Env env = info.Env();
  Napi::Value v = info[i];
  uint8_t* base;
  size_t len;
  if (v.IsTypedArray()) {
    auto ta = v.As<Napi::TypedArray>();
    base = static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset();
    len = ta.ByteLength();
  } else if (v.IsArrayBuffer()) {
    auto ab = v.As<Napi::ArrayBuffer>();
    base = static_cast<uint8_t*>(ab.Data());
    len = ab.ByteLength();
  } else {
    throw Napi::TypeError::New(env, std::string(what) + " must be a TypedArray or ArrayBuffer");
  }
  const size_t off = Size(info, offArg, "byteOffset");
  if (off > len) throw Napi::RangeError::New(env, "byteOffset is outside the " + std::string(what));
  return {base, base == nullptr ? nullptr : base + off, len - off};
}

}  // namespace cclab::args
