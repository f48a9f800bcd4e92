// The NCCL symmetric-memory backend, one-rank smoke test: ncclCommInitRank with world 1,
// ncclMemAlloc + ncclCommWindowRegister(NCCL_WIN_COLL_SYMMETRIC) (the window must not be null),
// ncclDevCommCreate(lsaBarrierCount), the one-shot all-reduce kernel on the device API
// (ncclGetLsaPointer + ncclLsaBarrierSession) run several times (epoch-based barriers), and
// ncclAllReduce on the registered buffer; with one rank every result equals the input bitwise.
//
// Tagged [cuda][nccl]. Without a usable CUDA device (any error from cudaGetDeviceCount), or in a
// build without NCCL, the test WARNs "SKIPPED: ..." with the reason and passes.
#include <catch2/catch.hpp>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "cuda_test_util.h"
#include "opreg/core/allocator.h"
#include "opreg/symm_mem/nccl/nccl_symmetric_buffer.h"

#if defined(OPREG_TEST_HAVE_CUDA)
#include <cuda_runtime_api.h>
#endif
#if defined(OPREG_TEST_HAVE_NCCL)
#include <nccl.h>
#endif

namespace {

namespace smn = opreg::symm_mem::nccl;
using opreg::DType;

}  // namespace

TEST_CASE("nccl backend: one-rank smoke test", "[cuda][nccl]") {
  if (!opreg::CudaAvailable()) {
    WARN("SKIPPED: no CUDA device (" << opreg_test::NoCudaReason() << ")");
    return;
  }
#if !defined(OPREG_TEST_HAVE_NCCL)
  WARN("SKIPPED: opreg was built without NCCL (OPREG_BUILD_NCCL=OFF)");
  CHECK(smn::NcclVersion() == -1);
#else
  INFO("NCCL version " << smn::NcclVersion());
  REQUIRE(smn::NcclVersion() >= 22800);
  ncclUniqueId id;
  REQUIRE(ncclGetUniqueId(&id) == ncclSuccess);
  ncclComm_t comm = nullptr;
  REQUIRE(ncclCommInitRank(&comm, 1, id, 0) == ncclSuccess);
  {
    constexpr int64_t kN = 1000;
    smn::NcclSymmetricBuffer buf(comm, 4096 * sizeof(float));
    CHECK(buf.lsa_rank() == 0);
    CHECK(buf.lsa_size() == 1);
    std::vector<float> in(kN);
    for (int64_t i = 0; i < kN; ++i) in[i] = 0.25f * static_cast<float>(i) - 17.f;
    REQUIRE(cudaMemcpy(buf.data(), in.data(), kN * sizeof(float), cudaMemcpyDefault) ==
            cudaSuccess);
    void* out = nullptr;
    REQUIRE(cudaMalloc(&out, kN * sizeof(float)) == cudaSuccess);
    std::vector<float> got(kN);
    for (int rep = 0; rep < 3; ++rep) {
      INFO("device-API one-shot all-reduce, rep " << rep);
      REQUIRE(cudaMemset(out, 0, kN * sizeof(float)) == cudaSuccess);
      buf.OneShotAllReduce(DType::kFloat32, kN, out, nullptr);
      REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
      REQUIRE(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDefault) == cudaSuccess);
      CHECK(std::memcmp(got.data(), in.data(), kN * sizeof(float)) == 0);
    }
    // ncclAllReduce on the registered (symmetric) buffer: identity with one rank.
    REQUIRE(ncclAllReduce(buf.data(), out, kN, ncclFloat, ncclSum, comm, nullptr) == ncclSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
    REQUIRE(cudaMemcpy(got.data(), out, kN * sizeof(float), cudaMemcpyDefault) == cudaSuccess);
    CHECK(std::memcmp(got.data(), in.data(), kN * sizeof(float)) == 0);
    CHECK_THROWS_WITH(buf.OneShotAllReduce(DType::kFloat32, 5000, out, nullptr),
                      Catch::Contains("do not fit the 16384-byte buffer"));
    cudaFree(out);
  }
  CHECK(ncclCommDestroy(comm) == ncclSuccess);
#endif
}
