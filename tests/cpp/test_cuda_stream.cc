// The current-CUDA-stream setting (opreg/core/cuda_stream.h): per thread, per device, restored
// by the guard, range-checked. Plain storage, so it is tested in every build; that the CUDA ops
// launch on it is shown by test_ops_cuda ([cuda]).
#include <catch2/catch.hpp>
#include <thread>

#include "opreg/core/cuda_stream.h"
#include "opreg/core/error.h"

namespace {

opreg::CudaStreamHandle Fake(uintptr_t v) { return reinterpret_cast<opreg::CudaStreamHandle>(v); }

TEST_CASE("the current stream defaults to the legacy stream and follows guards", "[stream]") {
  CHECK(opreg::CurrentCudaStream(0) == nullptr);
  {
    opreg::CudaStreamGuard outer(0, Fake(0x10));
    CHECK(opreg::CurrentCudaStream(0) == Fake(0x10));
    CHECK(opreg::CurrentCudaStream(1) == nullptr);  // per device
    {
      opreg::CudaStreamGuard inner(0, Fake(0x20));
      CHECK(opreg::CurrentCudaStream(0) == Fake(0x20));
    }
    CHECK(opreg::CurrentCudaStream(0) == Fake(0x10));
  }
  CHECK(opreg::CurrentCudaStream(0) == nullptr);
}

TEST_CASE("the current stream is per thread", "[stream]") {
  opreg::CudaStreamGuard guard(3, Fake(0x30));
  opreg::CudaStreamHandle seen = Fake(1);
  std::thread([&] { seen = opreg::CurrentCudaStream(3); }).join();
  CHECK(seen == nullptr);
  CHECK(opreg::CurrentCudaStream(3) == Fake(0x30));
}

TEST_CASE("stream calls refuse device indices out of range", "[stream]") {
  CHECK_THROWS_WITH(opreg::CurrentCudaStream(-1),
                    Catch::Contains("CurrentCudaStream: CUDA device index -1 is out of range"));
  CHECK_THROWS_AS(opreg::SetCurrentCudaStream(opreg::kMaxCudaDevices, nullptr), opreg::Error);
}

}  // namespace
