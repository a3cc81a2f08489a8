// The mpi engine's registration hook (native/mpi.cc), included by addon.cc only when MPI is compiled in.
#pragma once
#include <napi.h>

#include <string>

namespace cclab::mpi {
void Register(Napi::Env env, Napi::Object exports);
std::string LibraryVersion();
}  // namespace cclab::mpi
