// The addon's entry point: registers the host reductions and each engine compiled into this build,
// and reports which engines those are (engines()). One source file per engine; a later nccl.cc
// plugs in here the same way as mpi.cc.
#include <napi.h>

#include "reduce.h"

#ifdef CCLAB_HAVE_MPI
#include "mpi_engine.h"
#endif

namespace {

Napi::Value Engines(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Object out = Napi::Object::New(env);
#ifdef CCLAB_HAVE_MPI
  out.Set("mpi", true);
  out.Set("mpiVersion", cclab::mpi::LibraryVersion());
#else
  out.Set("mpi", false);
#endif
  out.Set("nccl", false);
  return out;
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("engines", Napi::Function::New(env, Engines, "engines"));
  cclab::RegisterReduce(env, exports);
#ifdef CCLAB_HAVE_MPI
  Napi::Object mpi = Napi::Object::New(env);
  cclab::mpi::Register(env, mpi);
  exports.Set("mpi", mpi);
#endif
  return exports;
}

}  // namespace

NODE_API_MODULE(cclab, Init)
