// Device code of the CUDA collectives and their launcher (see device_collectives.h). The
// kernels are the same for real and simulated ranks; only the rank (args.rank or blockIdx.y),
// the output offset and the launch call differ.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>

#include "opreg/core/dtype_visit.h"
#include "opreg/core/error.h"
#include "opreg/core/half.h"
#include "opreg/kernels/cuda/element_types.cuh"
#include "opreg/symm_mem/cuda/device_collectives.h"

namespace opreg::symm_mem::cuda {
namespace {

// ---- Element types and 16-byte vectors -------------------------------------------------------

using ::opreg::kernels::cuda::device::DeviceType;
using ::opreg::kernels::cuda::device::FromFloat;
using ::opreg::kernels::cuda::device::ToFloat;

template <class T>
using Vec = ::opreg::kernels::cuda::device::Vector<T>;

// Peer memory is read and written through L2 (ld/st.cg): never a stale L1 line of a peer.
template <class T>
__device__ __forceinline__ Vec<T> LoadVec(const T* p) {
  const uint4 u = __ldcg(reinterpret_cast<const uint4*>(p));
  Vec<T> r;
  memcpy(&r, &u, sizeof(u));
  return r;
}
template <class T>
__device__ __forceinline__ void StoreVec(T* p, const Vec<T>& v) {
  uint4 u;
  memcpy(&u, &v, sizeof(u));
  __stcg(reinterpret_cast<uint4*>(p), u);
}
template <class T>
__device__ __forceinline__ T LoadOne(const T* p) {
  T v;
  if constexpr (sizeof(T) == 4) {
    const unsigned int b = __ldcg(reinterpret_cast<const unsigned int*>(p));
    memcpy(&v, &b, sizeof(b));
  } else {
    const unsigned short b = __ldcg(reinterpret_cast<const unsigned short*>(p));
    memcpy(&v, &b, sizeof(b));
  }
  return v;
}
template <class T>
__device__ __forceinline__ void StoreOne(T* p, T v) {
  if constexpr (sizeof(T) == 4) {
    unsigned int b;
    memcpy(&b, &v, sizeof(b));
    __stcg(reinterpret_cast<unsigned int*>(p), b);
  } else {
    unsigned short b;
    memcpy(&b, &v, sizeof(b));
    __stcg(reinterpret_cast<unsigned short*>(p), b);
  }
}

// ---- Kernel parameters (one struct: the same argument list for both launch calls) -----------

struct Params {
  void* const* buffers;
  uint32_t* const* pads;
  size_t offset;
  int64_t numel;
  int64_t chunk;  // two-shot: elements per rank
  char* out;
  size_t out_rank_stride;
  int rank;
  int world;
  int simulated;
  unsigned long long timeout_ns;
};

__device__ __forceinline__ int RankOf(const Params& p) {
  return p.simulated ? static_cast<int>(blockIdx.y) : p.rank;
}
template <class T>
__device__ __forceinline__ T* Peer(const Params& p, int r) {
  return reinterpret_cast<T*>(static_cast<char*>(p.buffers[r]) + p.offset);
}
template <class T>
__device__ __forceinline__ T* OutOf(const Params& p, int rank) {
  return reinterpret_cast<T*>(p.out + (p.simulated ? rank * p.out_rank_stride : 0));
}

// ---- Signals ----------------------------------------------------------------------------------

__device__ __forceinline__ unsigned long long GlobalTimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Spins until CAS(*slot: from -> to) succeeds (system scope); traps after p.timeout_ns.
__device__ void CasWait(uint32_t* slot, uint32_t from, uint32_t to, const Params& p, int rank,
                        int peer, const char* what) {
  const unsigned long long start = GlobalTimer();
  while (atomicCAS_system(slot, from, to) != from) {
    if (GlobalTimer() - start > p.timeout_ns) {
      printf(
          "opreg symm_mem (cuda): %s timed out after %llu ns: rank %d, block %d, peer %d (a peer "
          "died, skipped a collective or is not co-resident); trapping\n",
          what, p.timeout_ns, rank, static_cast<int>(blockIdx.x), peer);
      __trap();
    }
    __nanosleep(32);
  }
}

// Block b of every rank meets block b of every other rank (slot pads[*][b * world + src]).
// Orders this block's earlier writes before the peers' later reads (both directions).
__device__ void Barrier(const Params& p, int rank) {
  __syncthreads();
  const int peer = static_cast<int>(threadIdx.x);
  if (peer < p.world && peer != rank) {
    const int base = static_cast<int>(blockIdx.x) * p.world;
    __threadfence_system();  // release the block's writes (ordered by __syncthreads)
    CasWait(p.pads[peer] + base + rank, 0u, 1u, p, rank, peer, "put_signal");
    CasWait(p.pads[rank] + base + peer, 1u, 0u, p, rank, peer, "wait_signal");
    __threadfence_system();  // acquire the peer's writes
  }
  __syncthreads();
}

// ---- Algorithms -------------------------------------------------------------------------------

// For i in [begin, end): v = ((float(peer0[i]) + float(peer1[i])) + ...) rounded once to T;
// stored to out[i - begin], or (kPush) to every peer's [i].
template <class T, bool kVec, bool kPush>
__device__ void ReduceRange(const Params& p, int64_t begin, int64_t end, T* out) {
  constexpr int V = Vec<T>::kSize;
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  int64_t tail = begin;
  if constexpr (kVec) {
    const int64_t nvec = (end - begin) / V;
    for (int64_t k = tid; k < nvec; k += nthreads) {
      const int64_t i = begin + k * V;
      float acc[V];
      const Vec<T> first = LoadVec(Peer<T>(p, 0) + i);
#pragma unroll
      for (int j = 0; j < V; ++j) acc[j] = ToFloat(first.v[j]);
      for (int r = 1; r < p.world; ++r) {
        const Vec<T> x = LoadVec(Peer<T>(p, r) + i);
#pragma unroll
        for (int j = 0; j < V; ++j) acc[j] += ToFloat(x.v[j]);
      }
      Vec<T> o;
#pragma unroll
      for (int j = 0; j < V; ++j) o.v[j] = FromFloat<T>(acc[j]);
      if constexpr (kPush) {
        for (int r = 0; r < p.world; ++r) StoreVec(Peer<T>(p, r) + i, o);
      } else {
        StoreVec(out + (i - begin), o);
      }
    }
    tail = begin + nvec * V;
  }
  for (int64_t i = tail + tid; i < end; i += nthreads) {
    float acc = ToFloat(LoadOne(Peer<T>(p, 0) + i));
    for (int r = 1; r < p.world; ++r) acc += ToFloat(LoadOne(Peer<T>(p, r) + i));
    const T o = FromFloat<T>(acc);
    if constexpr (kPush) {
      for (int r = 0; r < p.world; ++r) StoreOne(Peer<T>(p, r) + i, o);
    } else {
      StoreOne(out + (i - begin), o);
    }
  }
}

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) OneShotKernel(Params p) {
  const int rank = RankOf(p);
  Barrier(p, rank);  // every rank's operand is ready
  ReduceRange<T, kVec, false>(p, 0, p.numel, OutOf<T>(p, rank));
  Barrier(p, rank);  // peers finished reading: operands reusable
}

// Rank r reduces chunk r and pushes it into every rank's operand.
template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) TwoShotKernel(Params p) {
  const int rank = RankOf(p);
  const int64_t begin = min(p.numel, p.chunk * rank);
  const int64_t end = min(p.numel, begin + p.chunk);
  Barrier(p, rank);
  ReduceRange<T, kVec, true>(p, begin, end, nullptr);
  Barrier(p, rank);  // every chunk has been pushed everywhere
}

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) ReduceScatterKernel(Params p) {
  const int rank = RankOf(p);
  const int64_t chunk = p.numel / p.world;
  Barrier(p, rank);
  ReduceRange<T, kVec, false>(p, chunk * rank, chunk * (rank + 1), OutOf<T>(p, rank));
  Barrier(p, rank);
}

template <class T, bool kVec>
__global__ void __launch_bounds__(kThreads) AllGatherKernel(Params p) {
  constexpr int V = Vec<T>::kSize;
  const int rank = RankOf(p);
  T* out = OutOf<T>(p, rank);
  const int64_t tid = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const int64_t nthreads = static_cast<int64_t>(gridDim.x) * blockDim.x;
  Barrier(p, rank);
  for (int r = 0; r < p.world; ++r) {
    const T* src = Peer<T>(p, r);
    T* dst = out + r * p.numel;
    int64_t tail = 0;
    if constexpr (kVec) {
      const int64_t nvec = p.numel / V;
      for (int64_t k = tid; k < nvec; k += nthreads) StoreVec(dst + k * V, LoadVec(src + k * V));
      tail = nvec * V;
    }
    for (int64_t i = tail + tid; i < p.numel; i += nthreads) StoreOne(dst + i, LoadOne(src + i));
  }
  Barrier(p, rank);
}

// ---- Host side --------------------------------------------------------------------------------

template <class T, bool kVec>
const void* KernelOf(Collective kind) {
  switch (kind) {
    case Collective::kOneShotAllReduce:
      return reinterpret_cast<const void*>(&OneShotKernel<T, kVec>);
    case Collective::kTwoShotAllReduce:
      return reinterpret_cast<const void*>(&TwoShotKernel<T, kVec>);
    case Collective::kAllGather:
      return reinterpret_cast<const void*>(&AllGatherKernel<T, kVec>);
    case Collective::kReduceScatter:
      return reinterpret_cast<const void*>(&ReduceScatterKernel<T, kVec>);
  }
  return nullptr;
}

template <class T>
const void* KernelOf(Collective kind, bool vec) {
  return vec ? KernelOf<T, true>(kind) : KernelOf<T, false>(kind);
}

void CheckCuda(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  (void)cudaGetLastError();
  OPREG_THROW(kRuntime, "symm_mem (cuda): ", what, " failed: ", cudaGetErrorName(err), ": ",
              cudaGetErrorString(err));
}

bool Aligned16(uintptr_t v) { return (v & 15u) == 0; }

const char* NameOf(Collective k) {
  switch (k) {
    case Collective::kOneShotAllReduce:
      return "one_shot_all_reduce";
    case Collective::kTwoShotAllReduce:
      return "two_shot_all_reduce";
    case Collective::kAllGather:
      return "all_gather";
    case Collective::kReduceScatter:
      return "reduce_scatter";
  }
  return "?";
}

}  // namespace

size_t SignalPadBytes(int world) {
  const size_t bytes = static_cast<size_t>(kMaxBlocks) * static_cast<size_t>(world) * 4;
  return (bytes + 127) / 128 * 128;
}

void LaunchCollective(const CollectiveArgs& a) {
  const char* name = NameOf(a.kind);
  OPREG_CHECK_VALUE(a.world >= 1 && a.world <= kThreads, "symm_mem (cuda) ", name, ": world ",
                    a.world, " is not in [1, ", kThreads, "]");
  OPREG_CHECK_VALUE(a.simulated || (a.rank >= 0 && a.rank < a.world), "symm_mem (cuda) ", name,
                    ": rank ", a.rank, " is not in [0, ", a.world, ")");
  OPREG_CHECK_VALUE(a.buffers != nullptr && a.pads != nullptr, "symm_mem (cuda) ", name,
                    ": null peer-pointer or signal-pad table");
  OPREG_CHECK_VALUE(a.numel >= 0, "symm_mem (cuda) ", name, ": negative numel ", a.numel);
  OPREG_CHECK_VALUE(a.kind == Collective::kTwoShotAllReduce || a.out != nullptr || a.numel == 0,
                    "symm_mem (cuda) ", name, ": null output");
  OPREG_CHECK_VALUE(a.kind != Collective::kReduceScatter || a.numel % a.world == 0,
                    "symm_mem (cuda) ", name, ": numel ", a.numel,
                    " is not divisible by the world size ", a.world);
  OPREG_CHECK_TYPE(FloatingDTypes::Contains(a.dtype), "symm_mem (cuda) ", name,
                   ": expected dtype f32, f16 or bf16, got ", DTypeName(a.dtype));
  if (a.numel == 0) return;  // the same on every rank: nobody launches, nobody waits

  const int64_t elem = static_cast<int64_t>(ItemSize(a.dtype));
  const int64_t v = 16 / elem;  // elements per 16-byte vector
  // Two-shot writes no `out`: its vector decision (and so its chunk partition, which every rank
  // must compute identically) depends only on the symmetric offset, never on a local pointer.
  bool vec = Aligned16(a.offset) && (a.kind == Collective::kTwoShotAllReduce ||
                                     (Aligned16(reinterpret_cast<uintptr_t>(a.out)) &&
                                      (!a.simulated || Aligned16(a.out_rank_stride))));
  int64_t chunk = (a.numel + a.world - 1) / a.world;
  switch (a.kind) {
    case Collective::kTwoShotAllReduce:
      if (vec) chunk = (chunk + v - 1) / v * v;
      break;
    case Collective::kReduceScatter:
      vec = vec && (a.numel / a.world) % v == 0;
      break;
    case Collective::kAllGather:
      vec = vec && a.numel % v == 0;
      break;
    case Collective::kOneShotAllReduce:
      break;
  }

  // The grid depends on (numel, dtype, world) only: every rank launches the same one.
  const int64_t vectors = (a.numel * elem + 15) / 16;
  int blocks =
      static_cast<int>(std::clamp<int64_t>((vectors + kThreads - 1) / kThreads, 1, kMaxBlocks));

  // a.dtype was checked above, so the visit's own error cannot happen.
  const void* kernel = VisitFloatingDType(
      a.dtype, [&](auto tag) { return KernelOf<DeviceType<decltype(tag)>>(a.kind, vec); });

  Params p{};
  p.buffers = a.buffers;
  p.pads = a.pads;
  p.offset = a.offset;
  p.numel = a.numel;
  p.chunk = chunk;
  p.out = static_cast<char*>(a.out);
  p.out_rank_stride = a.out_rank_stride;
  p.rank = a.rank;
  p.world = a.world;
  p.simulated = a.simulated ? 1 : 0;
  p.timeout_ns = a.timeout_ns;
  void* args[] = {&p};
  cudaStream_t stream = a.stream;

  if (!a.simulated) {
    CheckCuda(cudaLaunchKernel(kernel, dim3(blocks), dim3(kThreads), args, 0, stream),
              "cudaLaunchKernel");
    return;
  }
  // Simulated ranks: every block of every rank must be co-resident.
  int device = 0;
  CheckCuda(cudaGetDevice(&device), "cudaGetDevice");
  int coop = 0;
  CheckCuda(cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, device),
            "cudaDeviceGetAttribute(cudaDevAttrCooperativeLaunch)");
  OPREG_CHECK(coop != 0, "symm_mem (cuda) ", name, ": device ", device,
              " does not support cooperative launches (needed for simulated ranks)");
  int per_sm = 0;
  int sms = 0;
  CheckCuda(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kThreads, 0),
            "cudaOccupancyMaxActiveBlocksPerMultiprocessor");
  CheckCuda(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device),
            "cudaDeviceGetAttribute(cudaDevAttrMultiProcessorCount)");
  const int per_rank = per_sm * sms / a.world;
  OPREG_CHECK_VALUE(per_rank >= 1, "symm_mem (cuda) ", name, ": ", a.world,
                    " simulated ranks need ", a.world, " co-resident blocks of ", kThreads,
                    " threads; device ", device, " holds ", per_sm * sms);
  blocks = std::min(blocks, per_rank);
  CheckCuda(
      cudaLaunchCooperativeKernel(kernel, dim3(blocks, a.world), dim3(kThreads), args, 0, stream),
      "cudaLaunchCooperativeKernel");
}

}  // namespace opreg::symm_mem::cuda
