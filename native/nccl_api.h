// cclab's own declaration of the part of NCCL's C API it calls, so the addon builds where neither
// NCCL nor a GPU is present: libnccl.so.2 is dlopen()ed at run time (native/nccl.cc) and every
// function below is looked up with dlsym. Types, enum values and argument orders are nccl.h's
// (NCCL 2.x ABI; the ABI has been stable since 2.0 for everything declared here).
#pragma once
#include <climits>
#include <cstddef>

extern "C" {

// CUDA's stream type, declared exactly as driver_types.h declares it (a repeat typedef is legal).
struct CUstream_st;
typedef struct CUstream_st* cudaStream_t;

typedef struct ncclComm* ncclComm_t;

#define NCCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[NCCL_UNIQUE_ID_BYTES];
} ncclUniqueId;

typedef enum {
  ncclSuccess = 0,
  ncclUnhandledCudaError = 1,
  ncclSystemError = 2,
  ncclInternalError = 3,
  ncclInvalidArgument = 4,
  ncclInvalidUsage = 5,
  ncclRemoteError = 6,
  ncclInProgress = 7,
  ncclTimeout = 8,
} ncclResult_t;

// Only the built-in operators; NCCL has no bitwise reductions.
typedef enum { ncclSum = 0, ncclProd = 1, ncclMax = 2, ncclMin = 3, ncclAvg = 4, ncclMaxRedOp = 0x7fffffff } ncclRedOp_t;

typedef enum {
  ncclInt8 = 0,
  ncclUint8 = 1,
  ncclInt32 = 2,
  ncclUint32 = 3,
  ncclInt64 = 4,
  ncclUint64 = 5,
  ncclFloat16 = 6,
  ncclFloat32 = 7,
  ncclFloat64 = 8,
  ncclBfloat16 = 9,
} ncclDataType_t;

// ncclConfig_t as of NCCL 2.17 (the versioned prefix every later ncclConfig_t starts with). NCCL
// copies min(size, its own size) bytes over its defaults and ignores fields newer than `version`.
#define CCLAB_NCCL_API_MAGIC 0xcafebeefu
#define CCLAB_NCCL_CONFIG_UNDEF_INT INT_MIN
typedef struct {
  size_t size;
  unsigned int magic;
  unsigned int version;
  int blocking;
  int cgaClusterSize;
  int minCTAs;
  int maxCTAs;
  const char* netName;
} cclabNcclConfig;

}  // extern "C"

// NCCL_VERSION(X, Y, Z) from nccl.h: the code ncclGetVersion reports.
constexpr int CclabNcclVersion(int x, int y, int z) {
  return (x <= 2 && y <= 8) ? x * 1000 + y * 100 + z : x * 10000 + y * 100 + z;
}

namespace cclab::nccl_api {

// Function pointer types, in nccl.h's argument order.
using GetVersion = ncclResult_t (*)(int* version);
using GetUniqueId = ncclResult_t (*)(ncclUniqueId* uniqueId);
using CommInitRank = ncclResult_t (*)(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank);
using CommInitRankConfig = ncclResult_t (*)(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                            cclabNcclConfig* config);
using CommFinalize = ncclResult_t (*)(ncclComm_t comm);
using CommDestroy = ncclResult_t (*)(ncclComm_t comm);
using CommAbort = ncclResult_t (*)(ncclComm_t comm);
using GetErrorString = const char* (*)(ncclResult_t result);
using GetLastError = const char* (*)(ncclComm_t comm);
using CommGetAsyncError = ncclResult_t (*)(ncclComm_t comm, ncclResult_t* asyncError);
using CommCount = ncclResult_t (*)(const ncclComm_t comm, int* count);
using CommCuDevice = ncclResult_t (*)(const ncclComm_t comm, int* device);
using CommUserRank = ncclResult_t (*)(const ncclComm_t comm, int* rank);
using Reduce = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream);
using Broadcast = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                   int root, ncclComm_t comm, cudaStream_t stream);
using AllReduce = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                   ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
using ReduceScatter = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t recvcount,
                                       ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
using AllGather = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t sendcount, ncclDataType_t datatype,
                                   ncclComm_t comm, cudaStream_t stream);
// NCCL >= 2.28 only (looked up optionally).
using AlltoAll = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                                  ncclComm_t comm, cudaStream_t stream);
using Gather = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                ncclComm_t comm, cudaStream_t stream);
using Scatter = ncclResult_t (*)(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root,
                                 ncclComm_t comm, cudaStream_t stream);
using Send = ncclResult_t (*)(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                              cudaStream_t stream);
using Recv = ncclResult_t (*)(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm,
                              cudaStream_t stream);
using GroupStart = ncclResult_t (*)();
using GroupEnd = ncclResult_t (*)();

// The loaded library: required entry points are never null once loaded; optional ones may be.
struct Api {
  GetVersion getVersion = nullptr;
  GetErrorString getErrorString = nullptr;
  GetUniqueId getUniqueId = nullptr;
  CommInitRank commInitRank = nullptr;
  CommDestroy commDestroy = nullptr;
  CommAbort commAbort = nullptr;
  CommGetAsyncError commGetAsyncError = nullptr;
  CommCount commCount = nullptr;
  Send send = nullptr;
  Recv recv = nullptr;
  GroupStart groupStart = nullptr;
  GroupEnd groupEnd = nullptr;
  AllReduce allReduce = nullptr;
  Broadcast broadcast = nullptr;
  Reduce reduce = nullptr;
  AllGather allGather = nullptr;
  ReduceScatter reduceScatter = nullptr;
  // optional
  CommInitRankConfig commInitRankConfig = nullptr;  // 2.14+: non-blocking communicators
  CommFinalize commFinalize = nullptr;              // 2.14+
  GetLastError getLastError = nullptr;              // 2.13+
  CommCuDevice commCuDevice = nullptr;
  CommUserRank commUserRank = nullptr;
  AlltoAll alltoAll = nullptr;  // 2.28+
  Gather gather = nullptr;      // 2.28+
  Scatter scatter = nullptr;    // 2.28+
};

}  // namespace cclab::nccl_api
