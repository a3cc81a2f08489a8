// The nccl engine: a thin binding of NCCL and of the CUDA runtime calls the nccl backend needs.
// NCCL is never linked: load(paths) dlopen()s the first candidate that works (the TypeScript side
// builds the list: CCLAB_NCCL_LIBRARY, the bare soname, pip's nvidia-nccl-cu13/cu12, CUDA dirs)
// and looks up every function declared in nccl_api.h, so this file compiles with no NCCL and no
// GPU. The CUDA part (device memory, copies, streams, events, the reduction kernels of
// cuda_reduce.cu) is compiled only when CMake found the toolkit (CCLAB_HAVE_CUDA); without it
// those calls throw, saying so, and so do the NCCL calls that need a stream.
//
// Handles: streams, events and communicators are small integers into tables here (0 is never a
// valid handle); device pointers are BigInts; offsets, counts and sizes are plain numbers (bytes
// for offsets, elements for counts, as in nccl.h). NCCL calls return their ncclResult_t when it is
// ncclSuccess or ncclInProgress (non-blocking communicators), and throw anything else as an
// error carrying engine/code/engineMessage/context, which src/native/load.ts turns into EngineError.
#include <dlfcn.h>
#include <napi.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "args.h"
#include "nccl_api.h"

#ifdef CCLAB_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "cuda_reduce.h"
#endif

namespace cclab::nccl {

namespace {

nccl_api::Api api;
void* library = nullptr;
std::string libraryPath;
int libraryVersion = 0;

std::vector<ncclComm_t> comms(1, nullptr);  // handle -> communicator; slot 0 unused

[[noreturn]] void Throw(const Napi::Env& env, const char* engine, int code, const std::string& context,
                        const std::string& message) {
  Napi::Error e =
      Napi::Error::New(env, context + ": " + engine + " error " + std::to_string(code) + ": " + message);
  e.Set("engine", engine);
  e.Set("code", Napi::Number::New(env, code));
  e.Set("engineMessage", message);
  e.Set("context", context);
  throw e;
}

std::string VersionString(int code) {
  const int major = code >= 10000 ? code / 10000 : code / 1000;
  const int minor = code >= 10000 ? (code % 10000) / 100 : (code % 1000) / 100;
  const int patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

// ncclGetLastError returns one process-wide buffer that every WARN of every communicator and
// thread overwrites and nothing clears. Its text belongs to a failure only when it changed since
// the last NCCL call that returned without error, so that is what is remembered here.
std::string seenLastError;

const char* RawLastError(ncclComm_t comm) { return api.getLastError ? api.getLastError(comm) : nullptr; }

// After a call that did not fail: whatever the buffer holds now is old news for the next failure.
void SettleLastError(ncclComm_t comm) {
  const char* s = RawLastError(comm);
  if (s && seenLastError != s) seenLastError = s;
}

// Right after a failing call: the WARN it raised, or "" when the text is unchanged (stale).
std::string FreshLastError(ncclComm_t comm) {
  const char* s = RawLastError(comm);
  if (!s || !*s || seenLastError == s) return "";
  seenLastError = s;
  return seenLastError;
}

std::string NcclMessage(int code, ncclComm_t comm) {
  std::string msg = api.getErrorString ? api.getErrorString(static_cast<ncclResult_t>(code)) : "unknown NCCL error";
  const std::string last = FreshLastError(comm);
  if (!last.empty()) msg += " (" + last + ")";
  return msg;
}

// ncclSuccess and ncclInProgress come back as numbers; anything else is thrown.
int CheckNccl(const Napi::Env& env, ncclResult_t rc, const std::string& context, ncclComm_t comm = nullptr) {
  if (rc != ncclSuccess && rc != ncclInProgress) Throw(env, "nccl", rc, context, NcclMessage(rc, comm));
  SettleLastError(comm);
  return static_cast<int>(rc);
}

void NeedLibrary(const Napi::Env& env, const char* what) {
  if (!library)
    throw Napi::Error::New(env, std::string(what) + ": NCCL is not loaded (call load(candidates) first)");
}

using args::Int;
using args::Size;

[[maybe_unused]] ncclComm_t Comm(const Napi::CallbackInfo& info, size_t i) {
  const int h = Int(info, i, "comm");
  if (h <= 0 || static_cast<size_t>(h) >= comms.size() || comms[h] == nullptr)
    throw Napi::Error::New(info.Env(), "invalid or destroyed communicator handle " + std::to_string(h));
  return comms[h];
}

[[maybe_unused]] ncclDataType_t NcclDType(const Napi::CallbackInfo& info, size_t i) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  if (s == "int8") return ncclInt8;
  if (s == "uint8") return ncclUint8;
  if (s == "int32") return ncclInt32;
  if (s == "uint32") return ncclUint32;
  if (s == "int64") return ncclInt64;
  if (s == "uint64") return ncclUint64;
  if (s == "float16") return ncclFloat16;
  if (s == "bfloat16") return ncclBfloat16;
  if (s == "float32") return ncclFloat32;
  if (s == "float64") return ncclFloat64;
  throw Napi::TypeError::New(info.Env(), "unknown dtype '" + s + "'");
}

[[maybe_unused]] ncclRedOp_t NcclOp(const Napi::CallbackInfo& info, size_t i) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  if (s == "sum") return ncclSum;
  if (s == "prod") return ncclProd;
  if (s == "min") return ncclMin;
  if (s == "max") return ncclMax;
  if (s == "avg") return ncclAvg;
  throw Napi::TypeError::New(info.Env(), "NCCL has no reduce op '" + s + "' (it has sum, prod, min, max and avg)");
}

// ---- loading ----

Napi::Object Describe(const Napi::Env& env) {
  Napi::Object o = Napi::Object::New(env);
  o.Set("ok", true);
  o.Set("path", libraryPath);
  o.Set("version", libraryVersion);
  o.Set("versionString", VersionString(libraryVersion));
  Napi::Object opt = Napi::Object::New(env);
  opt.Set("commInitRankConfig", api.commInitRankConfig != nullptr);
  opt.Set("commFinalize", api.commFinalize != nullptr);
  opt.Set("getLastError", api.getLastError != nullptr);
  opt.Set("alltoAll", api.alltoAll != nullptr);
  opt.Set("gather", api.gather != nullptr);
  opt.Set("scatter", api.scatter != nullptr);
  o.Set("optional", opt);
  return o;
}

// load(candidates: string[]) -> { ok: true, path, version, versionString, optional } | { ok: false, tried }
Napi::Value Load(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (library) return Describe(env);
  if (info.Length() < 1 || !info[0].IsArray()) throw Napi::TypeError::New(env, "load(candidates: string[])");
  Napi::Array paths = info[0].As<Napi::Array>();
  Napi::Array tried = Napi::Array::New(env);
  uint32_t n = 0;
  auto fail = [&](const std::string& path, const std::string& why) {
    Napi::Object t = Napi::Object::New(env);
    t.Set("path", path);
    t.Set("error", why);
    tried.Set(n++, t);
  };
  for (uint32_t k = 0; k < paths.Length(); k++) {
    const std::string path = paths.Get(k).ToString().Utf8Value();
    dlerror();
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char* why = dlerror();
      fail(path, why ? why : "dlopen failed");
      continue;
    }
    nccl_api::Api a;
    std::string missing;
    auto sym = [&](auto& field, const char* name, bool required) {
      field = reinterpret_cast<std::remove_reference_t<decltype(field)>>(dlsym(h, name));
      if (!field && required) missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    sym(a.getVersion, "ncclGetVersion", true);
    sym(a.getErrorString, "ncclGetErrorString", true);
    sym(a.getUniqueId, "ncclGetUniqueId", true);
    sym(a.commInitRank, "ncclCommInitRank", true);
    sym(a.commDestroy, "ncclCommDestroy", true);
    sym(a.commAbort, "ncclCommAbort", true);
    sym(a.commGetAsyncError, "ncclCommGetAsyncError", true);
    sym(a.commCount, "ncclCommCount", true);
    sym(a.send, "ncclSend", true);
    sym(a.recv, "ncclRecv", true);
    sym(a.groupStart, "ncclGroupStart", true);
    sym(a.groupEnd, "ncclGroupEnd", true);
    sym(a.allReduce, "ncclAllReduce", true);
    sym(a.broadcast, "ncclBroadcast", true);
    sym(a.reduce, "ncclReduce", true);
    sym(a.allGather, "ncclAllGather", true);
    sym(a.reduceScatter, "ncclReduceScatter", true);
    sym(a.commInitRankConfig, "ncclCommInitRankConfig", false);
    sym(a.commFinalize, "ncclCommFinalize", false);
    sym(a.getLastError, "ncclGetLastError", false);
    sym(a.commCuDevice, "ncclCommCuDevice", false);
    sym(a.commUserRank, "ncclCommUserRank", false);
    sym(a.alltoAll, "ncclAlltoAll", false);
    sym(a.gather, "ncclGather", false);
    sym(a.scatter, "ncclScatter", false);
    if (!missing.empty()) {
      dlclose(h);
      fail(path, "loaded, but it lacks " + missing + " (not NCCL 2.x, or older than 2.7)");
      continue;
    }
    int version = 0;
    if (a.getVersion(&version) != ncclSuccess) {
      dlclose(h);
      fail(path, "ncclGetVersion failed");
      continue;
    }
    if (version < CclabNcclVersion(2, 10, 0)) {
      dlclose(h);
      fail(path, "NCCL " + VersionString(version) + " is too old: cclab needs 2.10 or newer (bfloat16, avg)");
      continue;
    }
    api = a;
    library = h;
    libraryPath = path;
    libraryVersion = version;
    SettleLastError(nullptr);
    return Describe(env);
  }
  Napi::Object o = Napi::Object::New(env);
  o.Set("ok", false);
  o.Set("tried", tried);
  return o;
}

Napi::Value Loaded(const Napi::CallbackInfo& info) {
  return library ? Napi::Value(Describe(info.Env())) : info.Env().Null();
}

Napi::Value ErrorString(const Napi::CallbackInfo& info) {
  const int code = Int(info, 0, "code");
  if (!api.getErrorString) return Napi::String::New(info.Env(), "NCCL error " + std::to_string(code));
  return Napi::String::New(info.Env(), api.getErrorString(static_cast<ncclResult_t>(code)));
}

Napi::Value GetUniqueId(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  NeedLibrary(env, "getUniqueId");
  ncclUniqueId id;
  std::memset(&id, 0, sizeof id);
  CheckNccl(env, api.getUniqueId(&id), "ncclGetUniqueId");
  Napi::ArrayBuffer ab = Napi::ArrayBuffer::New(env, sizeof id);
  std::memcpy(ab.Data(), &id, sizeof id);
  return Napi::Uint8Array::New(env, sizeof id, ab, 0);
}

#ifdef CCLAB_HAVE_CUDA

std::vector<cudaStream_t> streams(1, nullptr);
std::vector<cudaEvent_t> events(1, nullptr);
std::unordered_map<uintptr_t, bool> allocations;  // device pointer -> allocated stream-ordered

void CheckCuda(const Napi::Env& env, cudaError_t e, const std::string& context) {
  if (e == cudaSuccess) return;
  cudaGetLastError();  // clear a non-sticky error so the next call starts clean
  Throw(env, "cuda", static_cast<int>(e), context, std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e));
}

cudaStream_t Stream(const Napi::CallbackInfo& info, size_t i) {
  const int h = Int(info, i, "stream");
  if (h <= 0 || static_cast<size_t>(h) >= streams.size() || streams[h] == nullptr)
    throw Napi::Error::New(info.Env(), "invalid or destroyed stream handle " + std::to_string(h));
  return streams[h];
}

cudaEvent_t Event(const Napi::CallbackInfo& info, size_t i) {
  const int h = Int(info, i, "event");
  if (h <= 0 || static_cast<size_t>(h) >= events.size() || events[h] == nullptr)
    throw Napi::Error::New(info.Env(), "invalid or destroyed event handle " + std::to_string(h));
  return events[h];
}

uintptr_t PtrValue(const Napi::CallbackInfo& info, size_t i, const char* name) {
  if (i < info.Length() && info[i].IsBigInt()) {
    bool lossless = true;
    const uint64_t v = info[i].As<Napi::BigInt>().Uint64Value(&lossless);
    if (!lossless) throw Napi::RangeError::New(info.Env(), std::string(name) + " is not a pointer");
    return static_cast<uintptr_t>(v);
  }
  throw Napi::TypeError::New(info.Env(), std::string(name) + " must be a device pointer (bigint)");
}

// A device pointer argument plus a byte offset; 0n with offset 0 is null (NCCL's unused buffers).
void* Dev(const Napi::CallbackInfo& info, size_t ptrArg, size_t offArg, const char* name) {
  const uintptr_t p = PtrValue(info, ptrArg, name);
  const size_t off = Size(info, offArg, "byteOffset");
  if (p == 0 && off == 0) return nullptr;
  if (p == 0) throw Napi::RangeError::New(info.Env(), std::string(name) + ": offset into a null pointer");
  return reinterpret_cast<void*>(p + off);
}

struct HostBytes {
  uint8_t* ptr;
  size_t length;
};

HostBytes Host(const Napi::CallbackInfo& info, size_t i, size_t offArg) {
  const args::HostBytes h = args::Host(info, i, offArg, "host buffer");
  return {h.ptr, h.length};
}

cuda::DType KernelDType(const Napi::CallbackInfo& info, size_t i) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  static const char* names[] = {"int8", "uint8", "int32", "uint32", "int64",
                                "uint64", "float16", "bfloat16", "float32", "float64"};
  for (int k = 0; k < 10; k++)
    if (s == names[k]) return static_cast<cuda::DType>(k);
  throw Napi::TypeError::New(info.Env(), "unknown dtype '" + s + "'");
}

cuda::Combine KernelCombine(const Napi::CallbackInfo& info, size_t i) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  static const char* names[] = {"sum", "prod", "min", "max", "band", "bor", "bxor"};
  for (int k = 0; k < 7; k++)
    if (s == names[k]) return static_cast<cuda::Combine>(k);
  throw Napi::TypeError::New(info.Env(), "unknown combine '" + s + "'");
}

// ---- CUDA runtime ----

Napi::Value DriverVersion(const Napi::CallbackInfo& info) {
  int v = 0;
  if (cudaDriverGetVersion(&v) != cudaSuccess) v = 0;
  return Napi::Number::New(info.Env(), v);
}

Napi::Value RuntimeVersion(const Napi::CallbackInfo& info) {
  int v = 0;
  if (cudaRuntimeGetVersion(&v) != cudaSuccess) v = 0;
  return Napi::Number::New(info.Env(), v);
}

Napi::Value DeviceCount(const Napi::CallbackInfo& info) {
  int n = 0;
  CheckCuda(info.Env(), cudaGetDeviceCount(&n), "cudaGetDeviceCount");
  return Napi::Number::New(info.Env(), n);
}

Napi::Value SetDevice(const Napi::CallbackInfo& info) {
  CheckCuda(info.Env(), cudaSetDevice(Int(info, 0, "device")), "cudaSetDevice");
  return info.Env().Undefined();
}

Napi::Value GetDevice(const Napi::CallbackInfo& info) {
  int d = 0;
  CheckCuda(info.Env(), cudaGetDevice(&d), "cudaGetDevice");
  return Napi::Number::New(info.Env(), d);
}

Napi::Value DeviceInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int d = Int(info, 0, "device");
  cudaDeviceProp p;
  CheckCuda(env, cudaGetDeviceProperties(&p, d), "cudaGetDeviceProperties");
  char bus[64] = {0};
  if (cudaDeviceGetPCIBusId(bus, sizeof bus, d) != cudaSuccess) bus[0] = 0;
  int pools = 0;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, d) != cudaSuccess) pools = 0;
  Napi::Object o = Napi::Object::New(env);
  o.Set("name", std::string(p.name));
  o.Set("major", p.major);
  o.Set("minor", p.minor);
  o.Set("totalMemory", static_cast<double>(p.totalGlobalMem));
  o.Set("pciBusId", std::string(bus));
  o.Set("memoryPools", pools != 0);
  return o;
}

bool PoolsOnCurrentDevice() {
  int d = 0, pools = 0;
  if (cudaGetDevice(&d) != cudaSuccess) return false;
  if (cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, d) != cudaSuccess) return false;
  return pools != 0;
}

// malloc(bytes, stream) -> bigint. Stream-ordered (cudaMallocAsync) where the device has memory
// pools, so freeing never waits for the device (a pending NCCL kernel may be waiting on a peer).
Napi::Value Malloc(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t bytes = Size(info, 0, "bytes");
  cudaStream_t s = Stream(info, 1);
  if (bytes == 0) return Napi::BigInt::New(env, static_cast<uint64_t>(0));
  void* p = nullptr;
  const bool async = PoolsOnCurrentDevice();
  CheckCuda(env, async ? cudaMallocAsync(&p, bytes, s) : cudaMalloc(&p, bytes),
            async ? "cudaMallocAsync" : "cudaMalloc");
  allocations[reinterpret_cast<uintptr_t>(p)] = async;
  return Napi::BigInt::New(env, static_cast<uint64_t>(reinterpret_cast<uintptr_t>(p)));
}

Napi::Value Free(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const uintptr_t p = PtrValue(info, 0, "ptr");
  cudaStream_t s = Stream(info, 1);
  if (p == 0) return env.Undefined();
  auto it = allocations.find(p);
  if (it == allocations.end()) throw Napi::Error::New(env, "free: not a pointer from malloc (or freed twice)");
  const bool async = it->second;
  allocations.erase(it);
  void* ptr = reinterpret_cast<void*>(p);
  CheckCuda(env, async ? cudaFreeAsync(ptr, s) : cudaFree(ptr), async ? "cudaFreeAsync" : "cudaFree");
  return env.Undefined();
}

// memcpyHtoD(dst, dstOff, src, srcByteOffset, bytes, stream): returns once the copy is done (the
// backend calls it only on an idle stream, so this never waits on communication).
Napi::Value MemcpyHtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* dst = Dev(info, 0, 1, "dst");
  HostBytes src = Host(info, 2, 3);
  const size_t bytes = Size(info, 4, "bytes");
  cudaStream_t s = Stream(info, 5);
  if (bytes > src.length) throw Napi::RangeError::New(env, "memcpyHtoD: source has fewer bytes than asked for");
  if (bytes == 0) return env.Undefined();
  CheckCuda(env, cudaMemcpyAsync(dst, src.ptr, bytes, cudaMemcpyHostToDevice, s), "cudaMemcpyAsync(HtoD)");
  CheckCuda(env, cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return env.Undefined();
}

// memcpyDtoH(dst, dstByteOffset, src, srcOff, bytes, stream): returns once the copy is done.
Napi::Value MemcpyDtoH(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  HostBytes dst = Host(info, 0, 1);
  void* src = Dev(info, 2, 3, "src");
  const size_t bytes = Size(info, 4, "bytes");
  cudaStream_t s = Stream(info, 5);
  if (bytes > dst.length) throw Napi::RangeError::New(env, "memcpyDtoH: destination has fewer bytes than asked for");
  if (bytes == 0) return env.Undefined();
  CheckCuda(env, cudaMemcpyAsync(dst.ptr, src, bytes, cudaMemcpyDeviceToHost, s), "cudaMemcpyAsync(DtoH)");
  CheckCuda(env, cudaStreamSynchronize(s), "cudaStreamSynchronize");
  return env.Undefined();
}

// memcpyDtoD(dst, dstOff, src, srcOff, bytes, stream): enqueued.
Napi::Value MemcpyDtoD(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* dst = Dev(info, 0, 1, "dst");
  void* src = Dev(info, 2, 3, "src");
  const size_t bytes = Size(info, 4, "bytes");
  cudaStream_t s = Stream(info, 5);
  if (bytes == 0 || dst == src) return env.Undefined();
  CheckCuda(env, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, s), "cudaMemcpyAsync(DtoD)");
  return env.Undefined();
}

// memset(ptr, off, byteValue, bytes, stream): enqueued.
Napi::Value Memset(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* p = Dev(info, 0, 1, "ptr");
  const int value = Int(info, 2, "value");
  const size_t bytes = Size(info, 3, "bytes");
  cudaStream_t s = Stream(info, 4);
  if (bytes == 0) return env.Undefined();
  CheckCuda(env, cudaMemsetAsync(p, value, bytes, s), "cudaMemsetAsync");
  return env.Undefined();
}

Napi::Value StreamCreate(const Napi::CallbackInfo& info) {
  cudaStream_t s = nullptr;
  CheckCuda(info.Env(), cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
  streams.push_back(s);
  return Napi::Number::New(info.Env(), static_cast<double>(streams.size() - 1));
}

Napi::Value StreamDestroy(const Napi::CallbackInfo& info) {
  cudaStream_t s = Stream(info, 0);
  streams[Int(info, 0, "stream")] = nullptr;
  CheckCuda(info.Env(), cudaStreamDestroy(s), "cudaStreamDestroy");
  return info.Env().Undefined();
}

// streamQuery(stream) -> true once everything enqueued on it has completed.
Napi::Value StreamQuery(const Napi::CallbackInfo& info) {
  const cudaError_t e = cudaStreamQuery(Stream(info, 0));
  if (e == cudaErrorNotReady) return Napi::Boolean::New(info.Env(), false);
  CheckCuda(info.Env(), e, "cudaStreamQuery");
  return Napi::Boolean::New(info.Env(), true);
}

// Blocks the event loop: for tools and tests only.
Napi::Value StreamSynchronize(const Napi::CallbackInfo& info) {
  CheckCuda(info.Env(), cudaStreamSynchronize(Stream(info, 0)), "cudaStreamSynchronize");
  return info.Env().Undefined();
}

Napi::Value EventCreate(const Napi::CallbackInfo& info) {
  cudaEvent_t e = nullptr;
  CheckCuda(info.Env(), cudaEventCreateWithFlags(&e, cudaEventDisableTiming), "cudaEventCreateWithFlags");
  events.push_back(e);
  return Napi::Number::New(info.Env(), static_cast<double>(events.size() - 1));
}

Napi::Value EventRecord(const Napi::CallbackInfo& info) {
  CheckCuda(info.Env(), cudaEventRecord(Event(info, 0), Stream(info, 1)), "cudaEventRecord");
  return info.Env().Undefined();
}

Napi::Value EventQuery(const Napi::CallbackInfo& info) {
  const cudaError_t e = cudaEventQuery(Event(info, 0));
  if (e == cudaErrorNotReady) return Napi::Boolean::New(info.Env(), false);
  CheckCuda(info.Env(), e, "cudaEventQuery");
  return Napi::Boolean::New(info.Env(), true);
}

Napi::Value EventDestroy(const Napi::CallbackInfo& info) {
  cudaEvent_t e = Event(info, 0);
  events[Int(info, 0, "event")] = nullptr;
  CheckCuda(info.Env(), cudaEventDestroy(e), "cudaEventDestroy");
  return info.Env().Undefined();
}

// localReduce(dtype, combine, dst, dOff, src, sOff, count, stream): dst = dst (combine) src, enqueued.
Napi::Value LocalReduce(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const cuda::DType dt = KernelDType(info, 0);
  const cuda::Combine c = KernelCombine(info, 1);
  void* d = Dev(info, 2, 3, "dst");
  void* s = Dev(info, 4, 5, "src");
  const size_t count = Size(info, 6, "count");
  cudaStream_t st = Stream(info, 7);
  const int rc = cuda::Reduce(dt, c, d, s, count, st);
  if (rc < 0) throw Napi::TypeError::New(env, "reduce op is bitwise and does not apply to a floating-point dtype");
  CheckCuda(env, static_cast<cudaError_t>(rc), "reduce kernel launch");
  return env.Undefined();
}

// localScale(dtype, dst, dOff, src, sOff, count, mul, div, stream): dst = src * mul / div, enqueued.
Napi::Value LocalScale(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const cuda::DType dt = KernelDType(info, 0);
  void* d = Dev(info, 1, 2, "dst");
  void* s = Dev(info, 3, 4, "src");
  const size_t count = Size(info, 5, "count");
  if (!info[6].IsNumber() || !info[7].IsNumber()) throw Napi::TypeError::New(env, "mul and div must be numbers");
  const double mul = info[6].As<Napi::Number>().DoubleValue();
  const double div = info[7].As<Napi::Number>().DoubleValue();
  cudaStream_t st = Stream(info, 8);
  if (dt == cuda::DType::I64 || dt == cuda::DType::U64) {
    const double m = std::trunc(mul);
    if (!(std::fabs(m) <= 9007199254740991.0) || div != std::trunc(div) || !(std::fabs(div) <= 9007199254740991.0) ||
        div == 0)
      throw Napi::RangeError::New(env, "scale of a 64-bit integer dtype needs safe-integer mul and a non-zero integer div");
  }
  const int rc = cuda::Scale(dt, d, s, count, mul, div, st);
  CheckCuda(env, static_cast<cudaError_t>(rc), "scale kernel launch");
  return env.Undefined();
}

// ---- NCCL ----

// commInitRank(nranks, id: Uint8Array(128), rank, blocking) -> handle. Non-blocking (NCCL >= 2.14,
// ncclCommInitRankConfig with blocking = 0): returns at once; poll commGetAsyncError until it is
// no longer ncclInProgress before using the communicator.
Napi::Value CommInitRank(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  NeedLibrary(env, "commInitRank");
  const int nranks = Int(info, 0, "nranks");
  if (!info[1].IsTypedArray()) throw Napi::TypeError::New(env, "id must be a Uint8Array of 128 bytes");
  auto ta = info[1].As<Napi::TypedArray>();
  if (ta.ByteLength() != sizeof(ncclUniqueId)) throw Napi::RangeError::New(env, "id must be 128 bytes");
  ncclUniqueId id;
  std::memcpy(&id, static_cast<uint8_t*>(ta.ArrayBuffer().Data()) + ta.ByteOffset(), sizeof id);
  const int rank = Int(info, 2, "rank");
  const bool blocking = info.Length() < 4 || info[3].ToBoolean().Value();
  ncclComm_t c = nullptr;
  ncclResult_t rc;
  if (!blocking && api.commInitRankConfig) {
    cclabNcclConfig config;
    config.size = sizeof config;
    config.magic = CCLAB_NCCL_API_MAGIC;
    config.version = CclabNcclVersion(2, 17, 0);
    config.blocking = 0;
    config.cgaClusterSize = CCLAB_NCCL_CONFIG_UNDEF_INT;
    config.minCTAs = CCLAB_NCCL_CONFIG_UNDEF_INT;
    config.maxCTAs = CCLAB_NCCL_CONFIG_UNDEF_INT;
    config.netName = nullptr;
    rc = api.commInitRankConfig(&c, nranks, id, rank, &config);
  } else {
    rc = api.commInitRank(&c, nranks, id, rank);
  }
  if (rc != ncclSuccess && rc != ncclInProgress) {
    const std::string msg = NcclMessage(rc, c);
    if (c) api.commAbort(c);
    Throw(env, "nccl", rc, "ncclCommInitRank", msg);
  }
  SettleLastError(c);
  comms.push_back(c);
  return Napi::Number::New(env, static_cast<double>(comms.size() - 1));
}

// commGetAsyncError(comm) -> ncclResult_t. It does not settle ncclGetLastError: a background
// thread's WARN lands there before the error it explains is reported here.
Napi::Value CommGetAsyncError(const Napi::CallbackInfo& info) {
  ncclComm_t c = Comm(info, 0);
  ncclResult_t state = ncclSuccess;
  const ncclResult_t rc = api.commGetAsyncError(c, &state);
  if (rc != ncclSuccess) return Napi::Number::New(info.Env(), rc);
  return Napi::Number::New(info.Env(), state);
}

// lastError(comm): ncclGetLastError's text if it changed since the last NCCL call that did not fail
// ('' when unchanged, i.e. stale): read it right after commGetAsyncError reported the error.
Napi::Value LastError(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), FreshLastError(Comm(info, 0)));
}

Napi::Value CommCount(const Napi::CallbackInfo& info) {
  ncclComm_t c = Comm(info, 0);
  int n = 0;
  CheckNccl(info.Env(), api.commCount(c, &n), "ncclCommCount", c);
  return Napi::Number::New(info.Env(), n);
}

// commFinalize(comm) -> ncclResult_t (ncclInProgress on a non-blocking comm: poll commGetAsyncError).
Napi::Value CommFinalize(const Napi::CallbackInfo& info) {
  ncclComm_t c = Comm(info, 0);
  if (!api.commFinalize) return Napi::Number::New(info.Env(), 0);
  return Napi::Number::New(info.Env(), CheckNccl(info.Env(), api.commFinalize(c), "ncclCommFinalize", c));
}

Napi::Value CommDestroy(const Napi::CallbackInfo& info) {
  ncclComm_t c = Comm(info, 0);
  comms[Int(info, 0, "comm")] = nullptr;
  CheckNccl(info.Env(), api.commDestroy(c), "ncclCommDestroy");
  return info.Env().Undefined();
}

Napi::Value CommAbort(const Napi::CallbackInfo& info) {
  ncclComm_t c = Comm(info, 0);
  comms[Int(info, 0, "comm")] = nullptr;
  CheckNccl(info.Env(), api.commAbort(c), "ncclCommAbort");
  return info.Env().Undefined();
}

Napi::Value GroupStart(const Napi::CallbackInfo& info) {
  NeedLibrary(info.Env(), "groupStart");
  CheckNccl(info.Env(), api.groupStart(), "ncclGroupStart");
  return info.Env().Undefined();
}

Napi::Value GroupEnd(const Napi::CallbackInfo& info) {
  NeedLibrary(info.Env(), "groupEnd");
  return Napi::Number::New(info.Env(), CheckNccl(info.Env(), api.groupEnd(), "ncclGroupEnd"));
}

// send(ptr, off, count, dtype, peer, comm, stream)
Napi::Value Send(const Napi::CallbackInfo& info) {
  void* p = Dev(info, 0, 1, "sendbuff");
  ncclComm_t c = Comm(info, 5);
  const int rc = CheckNccl(info.Env(),
                           api.send(p, Size(info, 2, "count"), NcclDType(info, 3), Int(info, 4, "peer"), c,
                                    Stream(info, 6)),
                           "ncclSend", c);
  return Napi::Number::New(info.Env(), rc);
}

// recv(ptr, off, count, dtype, peer, comm, stream)
Napi::Value Recv(const Napi::CallbackInfo& info) {
  void* p = Dev(info, 0, 1, "recvbuff");
  ncclComm_t c = Comm(info, 5);
  const int rc = CheckNccl(info.Env(),
                           api.recv(p, Size(info, 2, "count"), NcclDType(info, 3), Int(info, 4, "peer"), c,
                                    Stream(info, 6)),
                           "ncclRecv", c);
  return Napi::Number::New(info.Env(), rc);
}

// ---- NCCL's own collectives: the oracle for cclab's algorithms (stream-ordered) ----
// One entry for all of them:
//   collective(fn, sptr, soff, rptr, roff, count, dtype, op, root, comm, stream)
// fn is the C function's name; the rest are the arguments NCCL's collectives take, in nccl.h's
// order (sendbuff, recvbuff, count, datatype, op, root, comm, stream), and each function reads
// the ones it has. In place is sendbuff == recvbuff, or the rank's block of the larger buffer
// (ncclAllGather, ncclReduceScatter, ncclGather). src/backends/nccl/builtin.ts (NCCL_BUILTINS)
// says what cclab passes for each collective. ncclSend/ncclRecv stay apart: they are point-to-point
// and are grouped (ncclGroupStart/End), which the backend's device does for every send and receive.

enum class Fn { AllReduce, Broadcast, Reduce, AllGather, ReduceScatter, AlltoAll, Gather, Scatter };

const struct {
  const char* name;
  Fn fn;
} kCollectives[] = {
    {"ncclAllReduce", Fn::AllReduce}, {"ncclBroadcast", Fn::Broadcast},         {"ncclReduce", Fn::Reduce},
    {"ncclAllGather", Fn::AllGather}, {"ncclReduceScatter", Fn::ReduceScatter}, {"ncclAlltoAll", Fn::AlltoAll},
    {"ncclGather", Fn::Gather},       {"ncclScatter", Fn::Scatter},
};

Napi::Value Collective(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string name = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const auto* it = std::find_if(std::begin(kCollectives), std::end(kCollectives),
                                [&](const auto& k) { return name == k.name; });
  if (it == std::end(kCollectives)) throw Napi::TypeError::New(env, "no NCCL collective '" + name + "'");
  NeedLibrary(env, name.c_str());
  const bool present = it->fn == Fn::AlltoAll ? api.alltoAll != nullptr
                       : it->fn == Fn::Gather ? api.gather != nullptr
                       : it->fn == Fn::Scatter ? api.scatter != nullptr
                                               : true;
  if (!present) throw Napi::Error::New(env, name + " needs NCCL 2.28 or newer");
  const void* s = Dev(info, 1, 2, "sendbuff");
  void* r = Dev(info, 3, 4, "recvbuff");
  const size_t count = Size(info, 5, "count");
  const ncclDataType_t dt = NcclDType(info, 6);
  auto op = [&] { return NcclOp(info, 7); };
  auto root = [&] { return Int(info, 8, "root"); };
  ncclComm_t c = Comm(info, 9);
  cudaStream_t st = Stream(info, 10);
  ncclResult_t rc = ncclSuccess;
  switch (it->fn) {
    case Fn::AllReduce:
      rc = api.allReduce(s, r, count, dt, op(), c, st);
      break;
    case Fn::Broadcast:
      rc = api.broadcast(s, r, count, dt, root(), c, st);
      break;
    case Fn::Reduce:
      rc = api.reduce(s, r, count, dt, op(), root(), c, st);
      break;
    case Fn::AllGather:
      rc = api.allGather(s, r, count, dt, c, st);
      break;
    case Fn::ReduceScatter:
      rc = api.reduceScatter(s, r, count, dt, op(), c, st);
      break;
    case Fn::AlltoAll:
      rc = api.alltoAll(s, r, count, dt, c, st);
      break;
    case Fn::Gather:
      rc = api.gather(s, r, count, dt, root(), c, st);
      break;
    case Fn::Scatter:
      rc = api.scatter(s, r, count, dt, root(), c, st);
      break;
  }
  return Napi::Number::New(env, CheckNccl(env, rc, name, c));
}

#else  // no CUDA: every device call says why it cannot run

Napi::Value NoCuda(const Napi::CallbackInfo& info) {
  throw Napi::Error::New(info.Env(),
                         "cclab's native addon was built without CUDA (CMake found no CUDA toolkit): install the "
                         "CUDA toolkit (nvcc on PATH), then npm run build:native");
}

Napi::Value DriverVersion(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), 0); }
Napi::Value RuntimeVersion(const Napi::CallbackInfo& info) { return Napi::Number::New(info.Env(), 0); }

#endif

}  // namespace

bool CudaCompiled() {
#ifdef CCLAB_HAVE_CUDA
  return true;
#else
  return false;
#endif
}

// Ready for communication: CUDA compiled in and an NCCL library loaded in this process.
bool Ready() { return CudaCompiled() && library != nullptr; }

std::string LoadedVersion() { return library ? VersionString(libraryVersion) : ""; }

void Register(Napi::Env env, Napi::Object exports) {
  using Fn = Napi::Value (*)(const Napi::CallbackInfo&);
  const struct {
    const char* name;
    Fn fn;
  } always[] = {
      {"load", Load},
      {"loaded", Loaded},
      {"errorString", ErrorString},
      {"getUniqueId", GetUniqueId},
      {"driverVersion", DriverVersion},
      {"runtimeVersion", RuntimeVersion},
  };
  for (const auto& f : always) exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
#ifdef CCLAB_HAVE_CUDA
  const struct {
    const char* name;
    Fn fn;
  } device[] = {
      {"deviceCount", DeviceCount},
      {"setDevice", SetDevice},
      {"getDevice", GetDevice},
      {"deviceInfo", DeviceInfo},
      {"malloc", Malloc},
      {"free", Free},
      {"memcpyHtoD", MemcpyHtoD},
      {"memcpyDtoH", MemcpyDtoH},
      {"memcpyDtoD", MemcpyDtoD},
      {"memset", Memset},
      {"streamCreate", StreamCreate},
      {"streamDestroy", StreamDestroy},
      {"streamQuery", StreamQuery},
      {"streamSynchronize", StreamSynchronize},
      {"eventCreate", EventCreate},
      {"eventRecord", EventRecord},
      {"eventQuery", EventQuery},
      {"eventDestroy", EventDestroy},
      {"localReduce", LocalReduce},
      {"localScale", LocalScale},
      {"commInitRank", CommInitRank},
      {"commGetAsyncError", CommGetAsyncError},
      {"lastError", LastError},
      {"commCount", CommCount},
      {"commFinalize", CommFinalize},
      {"commDestroy", CommDestroy},
      {"commAbort", CommAbort},
      {"groupStart", GroupStart},
      {"groupEnd", GroupEnd},
      {"send", Send},
      {"recv", Recv},
      {"collective", Collective},
  };
  for (const auto& f : device) exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
  exports.Set("cuda", true);
  exports.Set("cudaRuntimeVersion", CUDART_VERSION);
#else
  const char* device[] = {"deviceCount", "setDevice", "getDevice", "deviceInfo", "malloc", "free",
                          "memcpyHtoD", "memcpyDtoH", "memcpyDtoD", "memset", "streamCreate",
                          "streamDestroy", "streamQuery", "streamSynchronize", "eventCreate", "eventRecord",
                          "eventQuery", "eventDestroy", "localReduce", "localScale", "commInitRank",
                          "commGetAsyncError", "lastError", "commCount", "commFinalize", "commDestroy",
                          "commAbort", "groupStart", "groupEnd", "send", "recv", "collective"};
  for (const char* name : device) exports.Set(name, Napi::Function::New(env, NoCuda, name));
  exports.Set("cuda", false);
  exports.Set("cudaRuntimeVersion", 0);
#endif
}

}  // namespace cclab::nccl
