// The mpi engine: a binding of the MPI C API (point-to-point calls in the C API's order), the
// plan runner's native half (runBind/runProgress: a call's transfers posted from the desc records
// and its requests tested in one call, in the ctrl/desc slots of run_layout.h; localReduce for its
// reductions), and MPI's own collectives as the oracle. Communicators, requests and matched
// messages are small integer handles into tables here; buffers are TypedArrays (or ArrayBuffers)
// addressed by byte offset, kept alive while a request is pending.
// Errors return (MPI_ERRORS_RETURN) and are thrown as JS errors carrying engine/code/engineMessage,
// which src/native/load.ts turns into EngineError. Nothing here blocks except wait() and the
// built-in collectives (the oracle); progress() waits for at most its budget, and the TypeScript
// side calls it from the event loop.
#include <mpi.h>

#include <sched.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "args.h"
#include "mpi_engine.h"
#include "ops.h"
#include "reduce.h"
#include "run_layout.h"

namespace cclab::mpi {

namespace {

std::vector<MPI_Comm> comms;  // handle -> communicator; 0 is MPI_COMM_WORLD once initialised

struct Pending {
  MPI_Request request;
  Napi::Reference<Napi::Value> keep;  // the buffer, alive until completion
};
std::unordered_map<int32_t, Pending> requests;
std::unordered_map<int32_t, MPI_Message> messages;
int32_t nextRequest = 1, nextMessage = 1;

// The next free handle of `table`: 1 .. INT32_MAX, wrapping around and skipping handles still in
// use (a long job makes billions of requests; the JavaScript side reads negative values as "none").
template <typename Table>
int32_t NewHandle(int32_t& next, const Table& table) {
  for (;;) {
    const int32_t id = next;
    next = next == INT32_MAX ? 1 : next + 1;
    if (table.find(id) == table.end()) return id;
  }
}

// MPI has no float16/bfloat16: they travel as MPI_UINT16_T and reduce with these user-defined ops
// (combined in float32, rounded back per element as reduce.cc does). Index: [bf16][combine].
MPI_Op halfOps[2][4] = {{MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL},
                        {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL}};

bool Usable() {
  int init = 0, fin = 0;
  MPI_Initialized(&init);
  MPI_Finalized(&fin);
  return init && !fin;
}

std::string ErrorString(int code) {
  // Open MPI aborts the process on MPI_Error_string before MPI_Init.
  if (!Usable()) return "MPI error " + std::to_string(code) + " (MPI is not initialised)";
  char buf[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, buf, &len) != MPI_SUCCESS) return "unknown MPI error";
  return std::string(buf, len);
}

[[noreturn]] void Throw(const Napi::Env& env, int code, const std::string& context) {
  int cls = code;
  if (Usable()) MPI_Error_class(code, &cls);
  const std::string msg = ErrorString(code);
  Napi::Error e = Napi::Error::New(env, context + ": mpi error " + std::to_string(code) + ": " + msg);
  e.Set("engine", "mpi");
  e.Set("code", Napi::Number::New(env, code));
  e.Set("errorClass", Napi::Number::New(env, cls));
  e.Set("engineMessage", msg);
  e.Set("context", context);
  throw e;
}

inline void Check(const Napi::Env& env, int rc, const char* context) {
  if (rc != MPI_SUCCESS) Throw(env, rc, context);
}

using args::Int;

// The communicator of handle h, or an error naming it where it is none or was freed.
MPI_Comm CommOf(const Napi::Env& env, int h) {
  if (h < 0 || static_cast<size_t>(h) >= comms.size() || comms[h] == MPI_COMM_NULL)
    throw Napi::Error::New(env, "invalid or freed communicator handle " + std::to_string(h));
  return comms[h];
}

MPI_Comm Comm(const Napi::CallbackInfo& info, size_t i) { return CommOf(info.Env(), Int(info, i, "comm")); }

struct Bytes {
  void* ptr;
  size_t length;  // bytes from ptr to the end of the underlying view
};

// A TypedArray/ArrayBuffer argument plus a byte offset; null/undefined (only) -> nullptr.
Bytes Buffer(const Napi::CallbackInfo& info, size_t i, size_t offsetArg, bool nullable = false) {
  Napi::Value v = info[i];
  if (nullable && (v.IsNull() || v.IsUndefined())) return {nullptr, 0};
  const args::HostBytes h = args::Host(info, i, offsetArg, "buffer");
  // An empty array may have no storage (Data() is null), but nullptr is reserved for a missing
  // argument (MPI_IN_PLACE in the collectives): give it a valid address MPI will never touch.
  static uint8_t empty;
  if (h.base == nullptr) return {&empty, 0};
  return {h.ptr, h.length};
}

void NeedBytes(const Napi::Env& env, const Bytes& b, size_t bytes, const char* what) {
  if (b.ptr != nullptr && bytes > b.length)
    throw Napi::RangeError::New(env, std::string(what) + ": " + std::to_string(bytes) +
                                         " bytes do not fit in the buffer (" + std::to_string(b.length) + " left)");
}

struct DType {
  MPI_Datatype type;
  size_t bytes;
  int half;  // 0 none, 1 float16, 2 bfloat16
};

DType DTypeArg(const Napi::CallbackInfo& info, size_t i) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  if (s == "int8") return {MPI_INT8_T, 1, 0};
  if (s == "uint8") return {MPI_UINT8_T, 1, 0};
  if (s == "int32") return {MPI_INT32_T, 4, 0};
  if (s == "uint32") return {MPI_UINT32_T, 4, 0};
  if (s == "int64") return {MPI_INT64_T, 8, 0};
  if (s == "uint64") return {MPI_UINT64_T, 8, 0};
  if (s == "float16") return {MPI_UINT16_T, 2, 1};
  if (s == "bfloat16") return {MPI_UINT16_T, 2, 2};
  if (s == "float32") return {MPI_FLOAT, 4, 0};
  if (s == "float64") return {MPI_DOUBLE, 8, 0};
  if (s == "byte") return {MPI_BYTE, 1, 0};
  throw Napi::TypeError::New(info.Env(), "unknown dtype '" + s + "'");
}

// Combine name -> MPI_Op (avg and premulsum are sums; the caller scales).
MPI_Op OpArg(const Napi::CallbackInfo& info, size_t i, const DType& dt) {
  const std::string s = info[i].IsString() ? info[i].As<Napi::String>().Utf8Value() : "";
  const char* arith[] = {"sum", "prod", "min", "max"};
  for (int k = 0; k < 4; k++) {
    if (s == arith[k] || (k == 0 && (s == "avg" || s == "premulsum"))) {
      if (dt.half) return halfOps[dt.half - 1][k];
      const MPI_Op builtin[] = {MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX};
      return builtin[k];
    }
  }
  if (dt.half || dt.type == MPI_FLOAT || dt.type == MPI_DOUBLE) {
    if (s == "band" || s == "bor" || s == "bxor")
      throw Napi::TypeError::New(info.Env(), "reduce op '" + s + "' is bitwise and does not apply to a floating-point dtype");
  }
  if (s == "band") return MPI_BAND;
  if (s == "bor") return MPI_BOR;
  if (s == "bxor") return MPI_BXOR;
  throw Napi::TypeError::New(info.Env(), "unknown reduce op '" + s + "'");
}

// MPI has no float16/bfloat16: user ops with ops.h's element arithmetic (docs/semantics.md).
template <bool BF, Combine C>
void MpiHalfOp(void* in, void* inout, int* len, MPI_Datatype*) {
  const uint16_t* a = static_cast<const uint16_t*>(in);
  uint16_t* b = static_cast<uint16_t*>(inout);
  // inout = inout (op) in, with inout as the accumulator (as reduce.cc's dst).
  for (int i = 0; i < *len; i++) b[i] = HalfOp<C, BF>(b[i], a[i]);
}

void CreateHalfOps() {
  if (halfOps[0][0] != MPI_OP_NULL) return;
  MPI_Op_create(MpiHalfOp<false, Combine::Sum>, 1, &halfOps[0][0]);
  MPI_Op_create(MpiHalfOp<false, Combine::Prod>, 1, &halfOps[0][1]);
  MPI_Op_create(MpiHalfOp<false, Combine::Min>, 1, &halfOps[0][2]);
  MPI_Op_create(MpiHalfOp<false, Combine::Max>, 1, &halfOps[0][3]);
  MPI_Op_create(MpiHalfOp<true, Combine::Sum>, 1, &halfOps[1][0]);
  MPI_Op_create(MpiHalfOp<true, Combine::Prod>, 1, &halfOps[1][1]);
  MPI_Op_create(MpiHalfOp<true, Combine::Min>, 1, &halfOps[1][2]);
  MPI_Op_create(MpiHalfOp<true, Combine::Max>, 1, &halfOps[1][3]);
}

void AfterInit() {
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (comms.empty()) comms.push_back(MPI_COMM_WORLD);
  CreateHalfOps();
}

// ---- environment ----

Napi::Value Init(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int required = info.Length() > 0 ? Int(info, 0, "required") : MPI_THREAD_SINGLE;
  int flag = 0, provided = 0;
  MPI_Initialized(&flag);
  if (flag) {
    MPI_Query_thread(&provided);
  } else {
    Check(env, MPI_Init_thread(nullptr, nullptr, required, &provided), "MPI_Init_thread");
  }
  AfterInit();
  return Napi::Number::New(env, provided);
}

Napi::Value ThreadLevels(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("single", static_cast<int>(MPI_THREAD_SINGLE));
  o.Set("funneled", static_cast<int>(MPI_THREAD_FUNNELED));
  o.Set("serialized", static_cast<int>(MPI_THREAD_SERIALIZED));
  o.Set("multiple", static_cast<int>(MPI_THREAD_MULTIPLE));
  return o;
}

Napi::Value Initialized(const Napi::CallbackInfo& info) {
  int flag = 0;
  MPI_Initialized(&flag);
  return Napi::Boolean::New(info.Env(), flag != 0);
}

Napi::Value Finalized(const Napi::CallbackInfo& info) {
  int flag = 0;
  MPI_Finalized(&flag);
  return Napi::Boolean::New(info.Env(), flag != 0);
}

Napi::Value Finalize(const Napi::CallbackInfo& info) {
  Check(info.Env(), MPI_Finalize(), "MPI_Finalize");
  return info.Env().Undefined();
}

Napi::Value ErrorStringJs(const Napi::CallbackInfo& info) {
  return Napi::String::New(info.Env(), ErrorString(Int(info, 0, "code")));
}

Napi::Value ErrorCodes(const Napi::CallbackInfo& info) {
  Napi::Object o = Napi::Object::New(info.Env());
  o.Set("MPI_SUCCESS", static_cast<int>(MPI_SUCCESS));
  o.Set("MPI_ERR_RANK", static_cast<int>(MPI_ERR_RANK));
  o.Set("MPI_ERR_TRUNCATE", static_cast<int>(MPI_ERR_TRUNCATE));
  o.Set("MPI_ERR_COMM", static_cast<int>(MPI_ERR_COMM));
  o.Set("MPI_ERR_COUNT", static_cast<int>(MPI_ERR_COUNT));
  o.Set("MPI_ERR_TAG", static_cast<int>(MPI_ERR_TAG));
  o.Set("MPI_ANY_SOURCE", static_cast<int>(MPI_ANY_SOURCE));
  o.Set("MPI_ANY_TAG", static_cast<int>(MPI_ANY_TAG));
  return o;
}

Napi::Value Abort(const Napi::CallbackInfo& info) {
  MPI_Comm c = info.Length() > 0 && !comms.empty() ? Comm(info, 0) : MPI_COMM_WORLD;
  MPI_Abort(c, info.Length() > 1 ? Int(info, 1, "errorcode") : 1);
  return info.Env().Undefined();
}

// ---- communicators ----

Napi::Value CommWorld(const Napi::CallbackInfo& info) {
  if (comms.empty()) throw Napi::Error::New(info.Env(), "MPI is not initialised (call init first)");
  return Napi::Number::New(info.Env(), 0);
}

Napi::Value Rank(const Napi::CallbackInfo& info) {
  int r = -1;
  Check(info.Env(), MPI_Comm_rank(Comm(info, 0), &r), "MPI_Comm_rank");
  return Napi::Number::New(info.Env(), r);
}

Napi::Value Size(const Napi::CallbackInfo& info) {
  int s = 0;
  Check(info.Env(), MPI_Comm_size(Comm(info, 0), &s), "MPI_Comm_size");
  return Napi::Number::New(info.Env(), s);
}

// commSplit(comm, color, key): color < 0 means MPI_UNDEFINED; returns the new handle, or -1.
Napi::Value CommSplit(const Napi::CallbackInfo& info) {
  MPI_Comm parent = Comm(info, 0);
  const int color = Int(info, 1, "color");
  const int key = Int(info, 2, "key");
  MPI_Comm out = MPI_COMM_NULL;
  Check(info.Env(), MPI_Comm_split(parent, color < 0 ? MPI_UNDEFINED : color, key, &out), "MPI_Comm_split");
  if (out == MPI_COMM_NULL) return Napi::Number::New(info.Env(), -1);
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  comms.push_back(out);
  return Napi::Number::New(info.Env(), static_cast<double>(comms.size() - 1));
}

// commDup(comm) -> handle: a communicator of the same ranks whose messages never meet comm's
// (one per channel of a collective, and one for collectives apart from user point-to-point).
Napi::Value CommDup(const Napi::CallbackInfo& info) {
  MPI_Comm out = MPI_COMM_NULL;
  Check(info.Env(), MPI_Comm_dup(Comm(info, 0), &out), "MPI_Comm_dup");
  MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN);
  comms.push_back(out);
  return Napi::Number::New(info.Env(), static_cast<double>(comms.size() - 1));
}

// tagUpperBound() -> MPI_TAG_UB (at least 32767 by the standard; Open MPI: 2^31 - 1).
Napi::Value TagUpperBound(const Napi::CallbackInfo& info) {
  int* ub = nullptr;
  int flag = 0;
  Check(info.Env(), MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag), "MPI_Comm_get_attr");
  return Napi::Number::New(info.Env(), flag && ub ? *ub : 32767);
}

Napi::Value CommFree(const Napi::CallbackInfo& info) {
  const int h = Int(info, 0, "comm");
  if (h == 0) throw Napi::Error::New(info.Env(), "MPI_COMM_WORLD cannot be freed");
  MPI_Comm c = Comm(info, 0);
  Check(info.Env(), MPI_Comm_free(&c), "MPI_Comm_free");
  comms[h] = MPI_COMM_NULL;
  return info.Env().Undefined();
}

// ---- joining processes that no mpirun started together (MPI-2 dynamic processes) ----
// Ranks started one by one (torchrun-style) are singletons; they join one communicator through
// a port: the group so far accepts, the next process connects, and both merge the intercomm.

// openPort() -> the port name (MPI_Open_port with MPI_INFO_NULL).
Napi::Value OpenPort(const Napi::CallbackInfo& info) {
  char port[MPI_MAX_PORT_NAME] = {0};
  Check(info.Env(), MPI_Open_port(MPI_INFO_NULL, port), "MPI_Open_port");
  return Napi::String::New(info.Env(), port);
}

std::string PortArg(const Napi::CallbackInfo& info, size_t i) {
  if (!info[i].IsString()) throw Napi::TypeError::New(info.Env(), "port must be a string");
  std::string port = info[i].As<Napi::String>().Utf8Value();
  if (port.empty() || port.size() >= MPI_MAX_PORT_NAME)
    throw Napi::RangeError::New(info.Env(), "port name is empty or longer than MPI_MAX_PORT_NAME");
  return port;
}

Napi::Value ClosePort(const Napi::CallbackInfo& info) {
  std::string port = PortArg(info, 0);
  Check(info.Env(), MPI_Close_port(port.data()), "MPI_Close_port");
  return info.Env().Undefined();
}

Napi::Value PushComm(const Napi::Env& env, MPI_Comm c) {
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  comms.push_back(c);
  return Napi::Number::New(env, static_cast<double>(comms.size() - 1));
}

// commSelf() -> a handle of MPI_COMM_SELF (the group a singleton accepts or connects as).
Napi::Value CommSelf(const Napi::CallbackInfo& info) {
  if (comms.empty()) throw Napi::Error::New(info.Env(), "MPI is not initialised (call init first)");
  return PushComm(info.Env(), MPI_COMM_SELF);
}

// commAccept(port, root, comm) -> intercomm handle (blocks until a process connects).
Napi::Value CommAccept(const Napi::CallbackInfo& info) {
  std::string port = PortArg(info, 0);
  const int root = Int(info, 1, "root");
  MPI_Comm out = MPI_COMM_NULL;
  Check(info.Env(), MPI_Comm_accept(port.data(), MPI_INFO_NULL, root, Comm(info, 2), &out), "MPI_Comm_accept");
  return PushComm(info.Env(), out);
}

// commConnect(port, root, comm) -> intercomm handle.
Napi::Value CommConnect(const Napi::CallbackInfo& info) {
  std::string port = PortArg(info, 0);
  const int root = Int(info, 1, "root");
  MPI_Comm out = MPI_COMM_NULL;
  Check(info.Env(), MPI_Comm_connect(port.data(), MPI_INFO_NULL, root, Comm(info, 2), &out), "MPI_Comm_connect");
  return PushComm(info.Env(), out);
}

// intercommMerge(intercomm, high) -> intracomm handle; the high group's ranks come last.
Napi::Value IntercommMerge(const Napi::CallbackInfo& info) {
  const bool high = info.Length() > 1 && info[1].ToBoolean().Value();
  MPI_Comm out = MPI_COMM_NULL;
  Check(info.Env(), MPI_Intercomm_merge(Comm(info, 0), high ? 1 : 0, &out), "MPI_Intercomm_merge");
  return PushComm(info.Env(), out);
}

Napi::Value CommDisconnect(const Napi::CallbackInfo& info) {
  const int h = Int(info, 0, "comm");
  if (h == 0) throw Napi::Error::New(info.Env(), "MPI_COMM_WORLD cannot be disconnected");
  MPI_Comm c = Comm(info, 0);
  Check(info.Env(), MPI_Comm_disconnect(&c), "MPI_Comm_disconnect");
  comms[h] = MPI_COMM_NULL;
  return info.Env().Undefined();
}

// ---- point to point ----

int32_t Track(const Napi::CallbackInfo& info, size_t bufArg, MPI_Request r) {
  const int32_t id = NewHandle(nextRequest, requests);
  requests.emplace(id, Pending{r, Napi::Persistent(info[bufArg])});
  return id;
}

// isend(buf, byteOffset, bytes, dest, tag, comm) -> request
Napi::Value Isend(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Bytes b = Buffer(info, 0, 1);
  const int bytes = Int(info, 2, "bytes");
  NeedBytes(env, b, bytes, "isend");
  MPI_Request r;
  Check(env, MPI_Isend(b.ptr, bytes, MPI_BYTE, Int(info, 3, "dest"), Int(info, 4, "tag"), Comm(info, 5), &r), "MPI_Isend");
  return Napi::Number::New(env, Track(info, 0, r));
}

// irecv(buf, byteOffset, bytes, source, tag, comm) -> request
Napi::Value Irecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Bytes b = Buffer(info, 0, 1);
  const int bytes = Int(info, 2, "bytes");
  NeedBytes(env, b, bytes, "irecv");
  MPI_Request r;
  Check(env, MPI_Irecv(b.ptr, bytes, MPI_BYTE, Int(info, 3, "source"), Int(info, 4, "tag"), Comm(info, 5), &r), "MPI_Irecv");
  return Napi::Number::New(env, Track(info, 0, r));
}

// improbe(source, tag, comm) -> null | { message, source, tag, bytes }: matches (and so orders) the
// next message without receiving it, so a receive can check its size and sender's dtype first.
Napi::Value Improbe(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  int flag = 0;
  MPI_Message m;
  MPI_Status st;
  Check(env, MPI_Improbe(Int(info, 0, "source"), Int(info, 1, "tag"), Comm(info, 2), &flag, &m, &st), "MPI_Improbe");
  if (!flag) return env.Null();
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  const int32_t id = NewHandle(nextMessage, messages);
  messages.emplace(id, m);
  Napi::Object o = Napi::Object::New(env);
  o.Set("message", id);
  o.Set("source", st.MPI_SOURCE);
  o.Set("tag", st.MPI_TAG);
  o.Set("bytes", bytes);
  return o;
}

MPI_Message TakeMessage(const Napi::CallbackInfo& info, size_t i) {
  const int id = Int(info, i, "message");
  auto it = messages.find(id);
  if (it == messages.end()) throw Napi::Error::New(info.Env(), "unknown message handle " + std::to_string(id));
  MPI_Message m = it->second;
  messages.erase(it);
  return m;
}

// imrecv(buf, byteOffset, bytes, message) -> request
Napi::Value Imrecv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Bytes b = Buffer(info, 0, 1);
  const int bytes = Int(info, 2, "bytes");
  NeedBytes(env, b, bytes, "imrecv");
  MPI_Message m = TakeMessage(info, 3);
  MPI_Request r;
  Check(env, MPI_Imrecv(b.ptr, bytes, MPI_BYTE, &m, &r), "MPI_Imrecv");
  return Napi::Number::New(env, Track(info, 0, r));
}

// mrecvDiscard(message, bytes): receives a matched message into scratch memory and drops it.
Napi::Value MrecvDiscard(const Napi::CallbackInfo& info) {
  MPI_Message m = TakeMessage(info, 0);
  const int bytes = Int(info, 1, "bytes");
  std::vector<uint8_t> scratch(bytes > 0 ? bytes : 1);
  Check(info.Env(), MPI_Mrecv(scratch.data(), bytes, MPI_BYTE, &m, MPI_STATUS_IGNORE), "MPI_Mrecv");
  return info.Env().Undefined();
}

Pending& Find(const Napi::CallbackInfo& info, int id) {
  auto it = requests.find(id);
  if (it == requests.end()) throw Napi::Error::New(info.Env(), "unknown request handle " + std::to_string(id));
  return it->second;
}

// A memory argument of progress()'s posts: the bytes of a TypedArray (or ArrayBuffer) from one
// Node-API call (napi_get_typedarray_info gives the data pointer with the view's offset applied),
// not the four the Napi wrappers make.
struct Mem {
  uint8_t* ptr;
  size_t length;
  // Where posts may fall, in bytes from ptr (runProgress: the view's array within its buffer).
  size_t lo = 0;
  size_t hi = SIZE_MAX;
};
size_t ElementBytes(napi_typedarray_type t) {
  switch (t) {
    case napi_int8_array: case napi_uint8_array: case napi_uint8_clamped_array: return 1;
    case napi_int16_array: case napi_uint16_array: return 2;
    case napi_int32_array: case napi_uint32_array: case napi_float32_array: return 4;
    default: return 8;
  }
}
// A number for an error message: integers without a fraction.
std::string Num(double x) {
  if (std::isnan(x)) return "NaN";
  if (x == std::floor(x) && std::fabs(x) < 1e15) return std::to_string(static_cast<long long>(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", x);
  return buf;
}
// The bytes of a TypedArray (with its view's offset applied) or, where `buffers`, an ArrayBuffer,
// from one Node-API call; false where the value is neither.
bool BytesOf(napi_env env, napi_value v, bool buffers, Mem& out) {
  bool is = false;
  if (napi_is_typedarray(env, v, &is) == napi_ok && is) {
    napi_typedarray_type type;
    size_t length = 0, offset = 0;
    void* data = nullptr;
    napi_value ab;
    if (napi_get_typedarray_info(env, v, &type, &length, &data, &ab, &offset) != napi_ok) return false;
    out = {static_cast<uint8_t*>(data), length * ElementBytes(type)};
    return true;
  }
  if (!buffers || napi_is_arraybuffer(env, v, &is) != napi_ok || !is) return false;
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_arraybuffer_info(env, v, &data, &length) != napi_ok) return false;
  out = {static_cast<uint8_t*>(data), length};
  return true;
}

// Whether x is an integer in [lo, hi] (NaN is not).
bool IntIn(double x, double lo, double hi) { return x >= lo && x <= hi && x == std::floor(x); }

// One post of runProgress(): desc's record (run_layout.h: kind, memory, byte offset, bytes,
// peer, tag) on `comm`, into mems[memory] (checked against its length and its [lo, hi)); the
// new request's handle is written to *id.
void Post(Napi::Env env, int64_t k, const double* d, const Mem* mems, MPI_Comm comm, int32_t* id) {
  using namespace cclab::run;
  // The message's start, made only for an error (a post is on every step's path).
  const auto post = [k]() { return "runProgress: post " + std::to_string(k); };
  const double kind = d[kDescKind], peer = d[kDescPeer], tag = d[kDescTag];
  if (!(kind == kDescSend || kind == kDescRecv))
    throw Napi::RangeError::New(env, post() + " has kind " + Num(kind) + " (0 send, 1 receive)");
  if (!IntIn(peer, 0, 2147483647.0)) throw Napi::RangeError::New(env, post() + " names peer " + Num(peer));
  if (!(tag == MPI_ANY_TAG || IntIn(tag, 0, 2147483647.0)))
    throw Napi::RangeError::New(env, post() + " names tag " + Num(tag));
  const int mem = static_cast<int>(d[kDescMem]);
  const Mem& m = mems[mem];
  const double off = d[kDescOffset], bytes = d[kDescBytes];
  const double lo = static_cast<double>(m.lo), hi = static_cast<double>(std::min(m.hi, m.length));
  if (!(off >= lo) || !(bytes >= 0) || bytes > 2147483647.0 || off + bytes > hi)
    throw Napi::RangeError::New(env, post() + ": bytes [" + Num(off) + ", " + Num(off + bytes) + ") are outside memory " +
                                         std::to_string(mem) + " ([" + Num(lo) + ", " + Num(hi) + ") of " +
                                         std::to_string(m.length) + " bytes" +
                                         (m.length == 0 ? ": an empty or detached buffer)" : ")"));
  void* ptr = m.ptr + static_cast<size_t>(off);
  MPI_Request r;
  const int rc = kind == kDescSend ? MPI_Isend(ptr, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(peer),
                                               static_cast<int>(tag), comm, &r)
                                   : MPI_Irecv(ptr, static_cast<int>(bytes), MPI_BYTE, static_cast<int>(peer),
                                               static_cast<int>(tag), comm, &r);
  Check(env, rc, kind == kDescSend ? "MPI_Isend" : "MPI_Irecv");
  const int32_t h = NewHandle(nextRequest, requests);
  requests.emplace(h, Pending{r, Napi::Reference<Napi::Value>()});
  *id = h;
}

// The memory index of post k, checked: 0 - 2.
int PostMemory(Napi::Env env, int64_t k, const double* d) {
  const double mem = d[cclab::run::kDescMem];
  if (!(mem == 0 || mem == 1 || mem == 2))
    throw Napi::RangeError::New(env, "runProgress: post " + std::to_string(k) + " names memory " + Num(mem));
  return static_cast<int>(mem);
}

// How a wait ends (progress.ts says when each is used).
struct Until {
  double budgetUs;
  bool yieldCpu;
  double sleepUs;
  // Completions to gather before returning (the caller knows none fewer can release work).
  int minDone;
  // Where not null: also return as soon as a request whose wake[position] is set completes.
  const uint8_t* wake;
};

// MPI_Testsome over the n requests of handles `ids` until `until` says stop; writes 4 entries
// per completion into out ([position, bytes, tag, error]) and frees the completed handles.
int TestUntil(Napi::Env env, int32_t* ids, size_t n, int32_t* out, const Until& until) {
  // Reused between calls: no allocation once they have grown.
  thread_local std::vector<MPI_Request> reqs;
  thread_local std::vector<int> index;
  thread_local std::vector<MPI_Status> st;
  thread_local std::vector<int> errs;
  if (reqs.size() < n) {
    reqs.resize(n);
    index.resize(n);
    st.resize(n);
    errs.resize(n);
  }
  for (size_t i = 0; i < n; i++) {
    auto it = requests.find(ids[i]);
    if (it == requests.end()) throw Napi::Error::New(env, "unknown request handle " + std::to_string(ids[i]));
    reqs[i] = it->second.request;
  }
  const struct timespec nap = {static_cast<time_t>(until.sleepUs / 1e6),
                               static_cast<long>(std::fmod(until.sleepUs, 1e6) * 1000)};
  const int minDone = std::max(1, std::min(until.minDone, static_cast<int>(n)));
  int total = 0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    if (n == 0) {
      // Nothing posted (receives still waiting for their message to be probed): a sleeping wait sleeps once.
      if (until.sleepUs > 0) nanosleep(&nap, nullptr);
      break;
    }
    // Completed requests become MPI_REQUEST_NULL, which later calls skip: completions add up.
    int done = 0;
    const int rc = MPI_Testsome(static_cast<int>(n), reqs.data(), &done, index.data() + total, st.data() + total);
    if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
      // Completions gathered by earlier tries are freed by MPI: their handles go, and read -1
      // ("nothing to cancel") where the caller would otherwise cancel them as it fails.
      for (int k = 0; k < total; k++) {
        requests.erase(ids[index[k]]);
        ids[index[k]] = -1;
      }
      Throw(env, rc, "MPI_Testsome");
    }
    if (done == MPI_UNDEFINED) break;
    bool woken = false;
    // A status's MPI_ERROR is set only where MPI_Testsome returns MPI_ERR_IN_STATUS.
    for (int k = total; k < total + done; k++) {
      errs[k] = rc == MPI_ERR_IN_STATUS ? st[k].MPI_ERROR : MPI_SUCCESS;
      if (until.wake != nullptr && until.wake[index[k]] != 0) woken = true;
    }
    total += done;
    if (woken || total >= minDone) break;
    const double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count();
    if (us >= until.budgetUs) break;
    if (until.sleepUs > 0)
      nanosleep(&nap, nullptr);
    else if (until.yieldCpu)
      sched_yield();
  }
  for (int k = 0; k < total; k++) {
    const int i = index[k];
    int bytes = 0;
    const int err = errs[k];
    if (err == MPI_SUCCESS || err == MPI_ERR_TRUNCATE) MPI_Get_count(&st[k], MPI_BYTE, &bytes);
    out[4 * k] = i;
    out[4 * k + 1] = bytes;
    out[4 * k + 2] = st[k].MPI_TAG;
    out[4 * k + 3] = err;
    requests.erase(ids[i]);
  }
  // Requests still pending keep their handles; MPI rewrote only the completed ones.
  return total;
}

// progress(count, requests: Int32Array, out: Int32Array, budgetUs, yieldCpu, sleepUs = 0)
//   -> completed: runs MPI_Testsome over the first `count` requests (its incount,
// array_of_requests) until one completes or budgetUs have passed, so one call moves a batch of
// transfers without giving the event loop a turn per message, yet never holds it much longer than
// the budget. Between tries it spins, or yields the core (sched_yield) when yieldCpu (the ranks
// outnumber the cores), or, with sleepUs > 0, sleeps that long (nanosleep) so a rank that has
// waited long leaves its core to others (src/backends/mpi/progress.ts says when). Writes 4
// entries per completed request into `out` (room for 4 x count): [position in requests, bytes,
// tag, error code (MPI_SUCCESS = 0)]. Nothing is allocated per call. Completed handles are freed.
// With runProgress (below, the plan runner's), the binding's only MPI_Testsome (TestUntil):
// every wait goes through one of them.
Napi::Value Progress(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsNumber() || !info[1].IsTypedArray() || !info[2].IsTypedArray() ||
      !info[3].IsNumber())
    throw Napi::TypeError::New(env, "progress(count, requests: Int32Array, out: Int32Array, budgetUs, yieldCpu, sleepUs)");
  Napi::Int32Array ids = info[1].As<Napi::Int32Array>();
  Napi::Int32Array out = info[2].As<Napi::Int32Array>();
  const int64_t count = info[0].As<Napi::Number>().Int64Value();
  if (count < 0 || static_cast<size_t>(count) > ids.ElementLength())
    throw Napi::RangeError::New(env, "progress: count " + std::to_string(count) + " is outside the requests array (" +
                                         std::to_string(ids.ElementLength()) + ")");
  const size_t n = static_cast<size_t>(count);
  if (out.ElementLength() < 4 * n)
    throw Napi::RangeError::New(env, "progress: out holds " + std::to_string(out.ElementLength()) +
                                         " entries, fewer than 4 per request (" + std::to_string(4 * n) + ")");
  const double budgetUs = info[3].As<Napi::Number>().DoubleValue();
  if (!(budgetUs >= 0) || budgetUs > 1e8)
    throw Napi::RangeError::New(env, "progress: budgetUs " + Num(budgetUs) + " is outside [0, 1e8]");
  const bool yieldCpu = info[4].ToBoolean();
  const double sleepUs = info.Length() > 5 && info[5].IsNumber() ? info[5].As<Napi::Number>().DoubleValue() : 0;
  if (!(sleepUs >= 0) || sleepUs > 1e6)
    throw Napi::RangeError::New(env, "progress: sleepUs " + std::to_string(sleepUs) + " is outside [0, 1e6]");
  const Until until{budgetUs, yieldCpu, sleepUs, 1, nullptr};
  return Napi::Number::New(env, TestUntil(env, ids.Data(), n, out.Data(), until));
}

// ---- The plan runner's run: its arrays bound once, so a call hands over no TypedArray ----
// (napi_get_typedarray_info tests a value against every TypedArray type in turn: four arrays a
// call were a fifth of a 1 KiB all-reduce's time.)

// runBind's arrays, held until the handle is collected.
struct BoundRun {
  int32_t* ids;
  size_t idsLength;
  int32_t* out;
  size_t outLength;
  double* desc;
  size_t descLength;
  uint8_t* wake;
  size_t wakeLength;
  double* ctrl;
  int comm;
  Napi::Reference<Napi::Value> keep[5];
};

// The runs bound and not yet collected: runProgress reads only a handle runBind made.
std::unordered_set<const BoundRun*> liveRuns;

template <typename A>
A BindArg(const Napi::CallbackInfo& info, size_t i, napi_typedarray_type type, const char* what) {
  if (!info[i].IsTypedArray() || info[i].As<Napi::TypedArray>().TypedArrayType() != type)
    throw Napi::TypeError::New(info.Env(), std::string("runBind: ") + what);
  return info[i].As<A>();
}

// runBind(requests: Int32Array, out: Int32Array, desc: Float64Array, wake: Uint8Array,
//         ctrl: Float64Array(kCtrlLength), comm) -> handle for runProgress. The arrays play
// progress()'s parts (wake: a byte per request position, set where that request's completion
// releases work); ctrl carries a call's numbers and desc the transfers to post, in the slots
// run_layout.h names (generated from src/native/run-layout.ts, which plan-run.ts writes by):
// count, posts, budgetUs, yieldCpu (0/1), sleepUs, minDone, useWake (0/1), then per memory 0 - 2
// the bytes [lo, hi) of its buffer that posts may touch (the view's array). The arrays are held while the handle lives; taking their data pointers
// here moves a small array off V8's heap for good, so the pointers stay valid (they are the
// run's own and never handed out, so nothing detaches them).
Napi::Value RunBind(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6) throw Napi::TypeError::New(env, "runBind(requests, out, desc, wake, ctrl, comm)");
  auto ids = BindArg<Napi::Int32Array>(info, 0, napi_int32_array, "requests must be an Int32Array");
  auto out = BindArg<Napi::Int32Array>(info, 1, napi_int32_array, "out must be an Int32Array");
  auto desc = BindArg<Napi::Float64Array>(info, 2, napi_float64_array, "desc must be a Float64Array");
  auto wake = BindArg<Napi::Uint8Array>(info, 3, napi_uint8_array, "wake must be a Uint8Array");
  auto ctrl = BindArg<Napi::Float64Array>(info, 4, napi_float64_array, "ctrl must be a Float64Array");
  if (ctrl.ElementLength() < cclab::run::kCtrlLength)
    throw Napi::RangeError::New(env, "runBind: ctrl holds fewer than " + std::to_string(cclab::run::kCtrlLength) + " entries");
  const int comm = Int(info, 5, "comm");
  CommOf(env, comm);
  auto* r = new BoundRun{ids.Data(), ids.ElementLength(), out.Data(), out.ElementLength(), desc.Data(),
                         desc.ElementLength(), wake.Data(), wake.ElementLength(), ctrl.Data(), comm, {}};
  for (size_t i = 0; i < 5; i++) r->keep[i] = Napi::Persistent(info[i]);
  liveRuns.insert(r);
  return Napi::External<BoundRun>::New(env, r, [](Napi::Env, BoundRun* b) {
    liveRuns.erase(b);
    delete b;
  });
}

// runProgress(handle, m0, m1, m2) -> completed: progress() for a bound run, its numbers in ctrl
// and its posts' memories the ArrayBuffers m0 - m2 (desc's byte offsets from each buffer's start).
Napi::Value RunProgress(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  void* handle = nullptr;
  if (info.Length() < 4 || napi_get_value_external(env, info[0], &handle) != napi_ok ||
      liveRuns.count(static_cast<const BoundRun*>(handle)) == 0)
    throw Napi::TypeError::New(env, "runProgress(handle from runBind, m0, m1, m2)");
  using namespace cclab::run;
  const BoundRun& r = *static_cast<BoundRun*>(handle);
  const double* c = r.ctrl;
  const double count = c[kCtrlCount], posts = c[kCtrlPosts];
  if (!(count >= 0) || !(posts >= 0) || count != std::floor(count) || posts != std::floor(posts) ||
      count + posts > static_cast<double>(std::min(r.idsLength, r.wakeLength)) ||
      4 * (count + posts) > static_cast<double>(r.outLength) ||
      static_cast<double>(kDescStride) * posts > static_cast<double>(r.descLength))
    throw Napi::RangeError::New(env, "runProgress: count " + Num(count) + " + posts " + Num(posts) +
                                         " is outside the bound arrays");
  const double budgetUs = c[kCtrlBudgetUs], sleepUs = c[kCtrlSleepUs];
  if (!(budgetUs >= 0) || budgetUs > 1e8)
    throw Napi::RangeError::New(env, "runProgress: budgetUs " + Num(budgetUs) + " is outside [0, 1e8]");
  if (!(sleepUs >= 0) || sleepUs > 1e6)
    throw Napi::RangeError::New(env, "runProgress: sleepUs " + Num(sleepUs) + " is outside [0, 1e6]");
  const size_t n = static_cast<size_t>(count + posts);
  if (posts > 0) {
    const MPI_Comm comm = CommOf(env, r.comm);
    Mem mems[3] = {};
    bool have[3] = {false, false, false};
    for (int64_t k = 0; k < static_cast<int64_t>(posts); k++) {
      const double* d = r.desc + kDescStride * static_cast<size_t>(k);
      const int mem = PostMemory(env, k, d);
      if (!have[mem]) {
        void* data = nullptr;
        size_t length = 0;
        if (napi_get_arraybuffer_info(env, info[1 + mem], &data, &length) != napi_ok)
          throw Napi::TypeError::New(env, "runProgress: memory " + std::to_string(mem) + " must be an ArrayBuffer");
        const double lo = c[kCtrlMemLo + 2 * mem], hi = c[kCtrlMemLo + 2 * mem + 1];
        if (!IntIn(lo, 0, 9007199254740991.0) || !IntIn(hi, lo, 9007199254740991.0))
          throw Napi::RangeError::New(env, "runProgress: memory " + std::to_string(mem) + "'s bytes [" + Num(lo) +
                                               ", " + Num(hi) + ") are no range");
        mems[mem] = {static_cast<uint8_t*>(data), length, static_cast<size_t>(lo), static_cast<size_t>(hi)};
        have[mem] = true;
      }
      Post(env, k, d, mems, comm, r.ids + static_cast<size_t>(count) + k);
    }
  }
  const double minDone = c[kCtrlMinDone] >= 1 ? std::min(c[kCtrlMinDone], 1e9) : 1;
  const Until until{budgetUs, c[kCtrlYieldCpu] != 0, sleepUs, static_cast<int>(minDone),
                    c[kCtrlUseWake] != 0 ? r.wake : nullptr};
  return Napi::Number::New(env, TestUntil(env, r.ids, n, r.out, until));
}

// reduceCode(dtype, combine) -> code for localReduce (once per plan: the names are parsed here,
// not per call); throws for an unknown dtype or combine, or a bitwise combine of a float dtype.
Napi::Value ReduceCodeOf(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsString() || !info[1].IsString())
    throw Napi::TypeError::New(env, "reduceCode(dtype, combine)");
  const std::string dt = info[0].As<Napi::String>().Utf8Value(), c = info[1].As<Napi::String>().Utf8Value();
  const int code = ReduceCode(dt, c);
  if (code < 0) throw Napi::TypeError::New(env, "reduceCode: no " + c + " reduction of " + dt);
  return Napi::Number::New(env, code);
}

// The elements [off, off + count) of a TypedArray argument, checked, from one Node-API call.
// An ArrayBuffer (the plan runner's: one Node-API call) counts elements from its start.
uint8_t* Elements(const Napi::CallbackInfo& info, size_t i, double off, size_t count, size_t bytes, const char* what) {
  Mem m{};
  void* data = nullptr;
  size_t length = 0;
  if (napi_get_arraybuffer_info(info.Env(), info[i], &data, &length) == napi_ok)
    m = {static_cast<uint8_t*>(data), length};
  else if (!BytesOf(info.Env(), info[i], false, m))
    throw Napi::TypeError::New(info.Env(), std::string("localReduce: ") + what + " must be a TypedArray or ArrayBuffer");
  const size_t have = m.length;
  if (!(off >= 0) || off != std::floor(off) || (off + static_cast<double>(count)) * static_cast<double>(bytes) > static_cast<double>(have))
    throw Napi::RangeError::New(info.Env(), std::string("localReduce: ") + what + ": elements [" + Num(off) + ", " +
                                                Num(off + static_cast<double>(count)) + ") are outside the array");
  return m.ptr + static_cast<size_t>(off) * bytes;
}

// localReduce(code, dst, dOff, src, sOff, count[, a, aOff]): dst = dst op src, or dst = a op src
// (offsets and count in elements; an array is a TypedArray, or an ArrayBuffer whose elements count
// from its start), with the kernels of reduce.cc (the same results bit for bit)
// and the same aliasing rules as its reduce(), for the plan runner's local reductions: the
// dtype and combine come as one code (reduceCode) and each array costs one Node-API call, so a
// small reduction costs little more than its loop (reduce() parses two names per call).
Napi::Value LocalReduce(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 6 || !info[0].IsNumber() || !info[2].IsNumber() || !info[4].IsNumber() || !info[5].IsNumber())
    throw Napi::TypeError::New(env, "localReduce(code, dst, dOff, src, sOff, count[, a, aOff])");
  const int code = info[0].As<Napi::Number>().Int32Value();
  const double cnt = info[5].As<Napi::Number>().DoubleValue();
  if (!(cnt >= 0) || cnt != std::floor(cnt) || cnt > 9007199254740991.0)
    throw Napi::RangeError::New(env, "localReduce: count must be a non-negative integer");
  const size_t count = static_cast<size_t>(cnt), bytes = ReduceCodeBytes(code);
  uint8_t* d = Elements(info, 1, info[2].As<Napi::Number>().DoubleValue(), count, bytes, "dst");
  const uint8_t* s = Elements(info, 3, info[4].As<Napi::Number>().DoubleValue(), count, bytes, "src");
  const uint8_t* a = d;
  if (info.Length() >= 8 && !info[6].IsUndefined()) {
    if (!info[7].IsNumber()) throw Napi::TypeError::New(env, "localReduce: aOff must be a number");
    a = Elements(info, 6, info[7].As<Napi::Number>().DoubleValue(), count, bytes, "a");
  }
  const size_t n = count * bytes;
  const auto overlap = [n](const uint8_t* x, const uint8_t* y) { return x < y + n && y < x + n; };
  if (a != d && ((overlap(d, s) && d != s) || overlap(d, a)))
    throw Napi::RangeError::New(env, "localReduce: dst partly overlaps an operand");
  if (!ReduceByCode(code, d, a, s, count, overlap(d, s) || (a != d && overlap(a, s))))
    throw Napi::RangeError::New(env, "localReduce: code " + std::to_string(code) + " names no reduction");
  return env.Undefined();
}

// cancel(request) -> true if the request was cancelled, false if it had completed first. The
// request is waited for either way (MPI_Cancel then MPI_Wait) and its handle freed, so nothing is
// left posted into a buffer its owner has taken back.
Napi::Value Cancel(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int id = Int(info, 0, "request");
  Pending& p = Find(info, id);
  MPI_Status st;
  int rc = MPI_Cancel(&p.request);
  if (rc == MPI_SUCCESS) rc = MPI_Wait(&p.request, &st);
  requests.erase(id);
  if (rc != MPI_SUCCESS) Throw(env, rc, "MPI_Cancel");
  int cancelled = 0;
  MPI_Test_cancelled(&st, &cancelled);
  return Napi::Boolean::New(env, cancelled != 0);
}

// wait(request) -> bytes. Blocks the event loop: for tests and tools, never for the backend.
Napi::Value Wait(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int id = Int(info, 0, "request");
  Pending& p = Find(info, id);
  MPI_Status st;
  const int rc = MPI_Wait(&p.request, &st);
  requests.erase(id);
  if (rc != MPI_SUCCESS) Throw(env, rc, "MPI_Wait");
  int bytes = 0;
  MPI_Get_count(&st, MPI_BYTE, &bytes);
  return Napi::Number::New(env, bytes);
}

Napi::Value PendingCount(const Napi::CallbackInfo& info) {
  return Napi::Number::New(info.Env(), static_cast<double>(requests.size()));
}

// ---- MPI's own collectives: the oracle for cclab's algorithms (blocking) ----
// One entry for all of them but MPI_Alltoallv:
//   collective(fn, sendbuf|null, soff, recvbuf|null, roff, count, dtype, op, root, comm)
// fn is the C function's name; the rest are the arguments MPI's collectives take, in the C API's
// order (offsets in bytes, counts in elements of dtype), and each function reads the ones it has.
// A null sendbuf is MPI_IN_PLACE (MPI_Scatter: a null recvbuf); MPI_Bcast's buffer is recvbuf;
// count is per rank for MPI_Gather/Scatter/Allgather/Alltoall and MPI_Reduce_scatter_block's
// recvcount. src/backends/mpi/builtin.ts (MPI_BUILTINS) says what cclab passes for each collective.

enum class Fn { Barrier, Bcast, Reduce, Allreduce, Gather, Scatter, Allgather, ReduceScatterBlock, Alltoall };

const struct {
  const char* name;
  Fn fn;
} kCollectives[] = {
    {"MPI_Barrier", Fn::Barrier},     {"MPI_Bcast", Fn::Bcast},         {"MPI_Reduce", Fn::Reduce},
    {"MPI_Allreduce", Fn::Allreduce}, {"MPI_Gather", Fn::Gather},       {"MPI_Scatter", Fn::Scatter},
    {"MPI_Allgather", Fn::Allgather}, {"MPI_Reduce_scatter_block", Fn::ReduceScatterBlock},
    {"MPI_Alltoall", Fn::Alltoall},
};

void* InPlace(const Bytes& b) { return b.ptr == nullptr ? MPI_IN_PLACE : b.ptr; }

int CommSize(MPI_Comm c) {
  int n = 0;
  MPI_Comm_size(c, &n);
  return n;
}

Napi::Value Collective(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const std::string name = info[0].IsString() ? info[0].As<Napi::String>().Utf8Value() : "";
  const auto* it = std::find_if(std::begin(kCollectives), std::end(kCollectives),
                                [&](const auto& k) { return name == k.name; });
  if (it == std::end(kCollectives))
    throw Napi::TypeError::New(env, "no MPI collective '" + name + "' here (MPI_Alltoallv is alltoallv)");
  MPI_Comm c = Comm(info, 9);
  if (it->fn == Fn::Barrier) {
    Check(env, MPI_Barrier(c), "MPI_Barrier");
    return env.Undefined();
  }
  Bytes s = Buffer(info, 1, 2, true), r = Buffer(info, 3, 4, true);
  const int count = Int(info, 5, "count");
  const DType dt = DTypeArg(info, 6);
  const size_t one = static_cast<size_t>(count) * dt.bytes, all = one * CommSize(c);
  const std::string sendbuf = name + " sendbuf", recvbuf = name + " recvbuf";
  // sendbuf holds `sn` bytes and recvbuf `rn` (0: not read); `recvNeeded`: recvbuf may not be null.
  auto fit = [&](size_t sn, size_t rn, bool recvNeeded) {
    if (recvNeeded && r.ptr == nullptr) throw Napi::TypeError::New(env, recvbuf + " must be a TypedArray or ArrayBuffer");
    NeedBytes(env, s, sn, sendbuf.c_str());
    NeedBytes(env, r, rn, recvbuf.c_str());
  };
  auto op = [&] { return OpArg(info, 7, dt); };
  auto root = [&] { return Int(info, 8, "root"); };
  int rc = MPI_SUCCESS;
  switch (it->fn) {
    case Fn::Bcast:
      fit(0, one, true);
      rc = MPI_Bcast(r.ptr, count, dt.type, root(), c);
      break;
    case Fn::Reduce:
      fit(one, one, false);
      rc = MPI_Reduce(InPlace(s), r.ptr, count, dt.type, op(), root(), c);
      break;
    case Fn::Allreduce:
      fit(one, one, true);
      rc = MPI_Allreduce(InPlace(s), r.ptr, count, dt.type, op(), c);
      break;
    case Fn::Gather:
      fit(one, all, false);
      rc = MPI_Gather(InPlace(s), count, dt.type, r.ptr, count, dt.type, root(), c);
      break;
    case Fn::Scatter:
      fit(all, one, false);
      rc = MPI_Scatter(s.ptr, count, dt.type, InPlace(r), count, dt.type, root(), c);
      break;
    case Fn::Allgather:
      fit(one, all, true);
      rc = MPI_Allgather(InPlace(s), count, dt.type, r.ptr, count, dt.type, c);
      break;
    case Fn::ReduceScatterBlock:
      fit(all, s.ptr ? one : all, true);
      rc = MPI_Reduce_scatter_block(InPlace(s), r.ptr, count, dt.type, op(), c);
      break;
    case Fn::Alltoall:
      fit(all, all, true);
      rc = MPI_Alltoall(InPlace(s), count, dt.type, r.ptr, count, dt.type, c);
      break;
    case Fn::Barrier:
      break;
  }
  Check(env, rc, name.c_str());
  return env.Undefined();
}

std::vector<int> Ints(const Napi::CallbackInfo& info, size_t i, int n, const char* name) {
  if (!info[i].IsArray() || info[i].As<Napi::Array>().Length() != static_cast<uint32_t>(n))
    throw Napi::TypeError::New(info.Env(), std::string(name) + " must be an array with one entry per rank");
  Napi::Array a = info[i].As<Napi::Array>();
  std::vector<int> out(n);
  for (int k = 0; k < n; k++) out[k] = a.Get(static_cast<uint32_t>(k)).As<Napi::Number>().Int32Value();
  return out;
}

// alltoallv(sendbuf|null, soff, sendcounts, sdispls, recvbuf, roff, recvcounts, rdispls, dtype, comm): apart
// from collective() because it alone takes arrays (a count and a displacement per rank, each way).
Napi::Value Alltoallv(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  MPI_Comm c = Comm(info, 9);
  const int n = CommSize(c);
  Bytes s = Buffer(info, 0, 1, true), r = Buffer(info, 4, 5);
  DType dt = DTypeArg(info, 8);
  std::vector<int> sc, sd;
  if (s.ptr) {
    sc = Ints(info, 2, n, "sendcounts");
    sd = Ints(info, 3, n, "sdispls");
    for (int k = 0; k < n; k++) NeedBytes(env, s, (static_cast<size_t>(sd[k]) + sc[k]) * dt.bytes, "alltoallv sendbuf");
  }
  std::vector<int> rc = Ints(info, 6, n, "recvcounts"), rd = Ints(info, 7, n, "rdispls");
  for (int k = 0; k < n; k++) NeedBytes(env, r, (static_cast<size_t>(rd[k]) + rc[k]) * dt.bytes, "alltoallv recvbuf");
  Check(env,
        MPI_Alltoallv(InPlace(s), s.ptr ? sc.data() : nullptr, s.ptr ? sd.data() : nullptr, dt.type, r.ptr, rc.data(),
                      rd.data(), dt.type, c),
        "MPI_Alltoallv");
  return env.Undefined();
}

}  // namespace

std::string LibraryVersion() {
  char buf[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(buf, &len);
  std::string s(buf, len);
  const size_t cut = s.find_first_of(",\n");  // "Open MPI v4.1.4, package: ..." -> "Open MPI v4.1.4"
  return cut == std::string::npos ? s : s.substr(0, cut);
}

void Register(Napi::Env env, Napi::Object exports) {
  const struct {
    const char* name;
    Napi::Value (*fn)(const Napi::CallbackInfo&);
  } fns[] = {
      {"init", Init},
      {"threadLevels", ThreadLevels},
      {"initialized", Initialized},
      {"finalized", Finalized},
      {"finalize", Finalize},
      {"errorString", ErrorStringJs},
      {"errorCodes", ErrorCodes},
      {"abort", Abort},
      {"commWorld", CommWorld},
      {"rank", Rank},
      {"size", Size},
      {"commSplit", CommSplit},
      {"commFree", CommFree},
      {"commDup", CommDup},
      {"tagUpperBound", TagUpperBound},
      {"commSelf", CommSelf},
      {"openPort", OpenPort},
      {"closePort", ClosePort},
      {"commAccept", CommAccept},
      {"commConnect", CommConnect},
      {"intercommMerge", IntercommMerge},
      {"commDisconnect", CommDisconnect},
      {"isend", Isend},
      {"irecv", Irecv},
      {"improbe", Improbe},
      {"imrecv", Imrecv},
      {"mrecvDiscard", MrecvDiscard},
      {"progress", Progress},
      {"runBind", RunBind},
      {"runProgress", RunProgress},
      {"cancel", Cancel},
      {"reduceCode", ReduceCodeOf},
      {"localReduce", LocalReduce},
      {"wait", Wait},
      {"pendingCount", PendingCount},
      {"collective", Collective},
      {"alltoallv", Alltoallv},
  };
  for (const auto& f : fns) exports.Set(f.name, Napi::Function::New(env, f.fn, f.name));
  exports.Set("version", LibraryVersion());
}

}  // namespace cclab::mpi
