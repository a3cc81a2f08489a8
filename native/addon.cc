// The addon's entry point: registers the host reductions and each engine compiled into this build,
// and reports which engines those are (engines()). One source file per engine: mpi.cc when CMake
// found MPI; nccl.cc always (NCCL is dlopen()ed at run time; its device half needs CUDA, which
// CMake compiles in only when it finds the toolkit).
#include <napi.h>

#include <string>

#include "reduce.h"

#ifdef CCLAB_HAVE_MPI
#include "mpi_engine.h"
#endif

namespace cclab::nccl {
void Register(Napi::Env env, Napi::Object exports);
bool CudaCompiled();
bool Ready();
std::string LoadedVersion();
}  // namespace cclab::nccl

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
  // nccl: usable in this process now (CUDA compiled in and libnccl loaded); cuda: compiled in.
  out.Set("nccl", cclab::nccl::Ready());
  if (cclab::nccl::Ready()) out.Set("ncclVersion", cclab::nccl::LoadedVersion());
  out.Set("cuda", cclab::nccl::CudaCompiled());
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
  Napi::Object nccl = Napi::Object::New(env);
  cclab::nccl::Register(env, nccl);
  exports.Set("nccl", nccl);
  return exports;
}

}  // namespace

NODE_API_MODULE(cclab, Init)
