// Device construction, printing and parsing.
#include <catch2/catch.hpp>
#include <sstream>
#include <string>

#include "opreg/core/device.h"
#include "opreg/core/error.h"

using opreg::Device;
using opreg::DeviceType;

TEST_CASE("device constructors and str") {
  CHECK(Device::cpu().type == DeviceType::kCPU);
  CHECK(Device::cpu().index == -1);
  CHECK(Device::meta().index == -1);
  CHECK(Device().is_cpu());
  CHECK(Device::cuda(0).index == 0);
  CHECK(Device::cuda(3).has_index());
  CHECK_FALSE(Device::cuda(-1).has_index());
  CHECK(Device::cpu().str() == "cpu");
  CHECK(Device::meta().str() == "meta");
  CHECK(Device::cuda(0).str() == "cuda:0");
  CHECK(Device::cuda(12).str() == "cuda:12");
  CHECK(Device::cuda(-1).str() == "cuda");
  std::ostringstream os;
  os << Device::cuda(1) << " " << DeviceType::kMeta;
  CHECK(os.str() == "cuda:1 meta");
}

TEST_CASE("device equality") {
  CHECK(Device::cuda(0) == Device::cuda(0));
  CHECK(Device::cuda(0) != Device::cuda(1));
  CHECK(Device::cuda(-1) != Device::cuda(0));
  CHECK(Device::cpu() != Device::meta());
  CHECK(Device::cpu() == Device(DeviceType::kCPU, -1));
}

TEST_CASE("device index validation") {
  REQUIRE_THROWS_WITH(Device::cuda(-2),
                      Catch::StartsWith("Device: CUDA device index must be -1 (current) or in "
                                        "[0, 32767], got -2"));
  REQUIRE_THROWS_WITH(Device::cuda(40000), Catch::Contains("got 40000"));
  REQUIRE_THROWS_WITH(Device(DeviceType::kCPU, 0),
                      Catch::StartsWith("Device: cpu devices take no index (expected -1), got 0"));
  try {
    Device(DeviceType::kMeta, 1);
    FAIL("expected an error");
  } catch (const opreg::Error& e) {
    CHECK(e.kind() == opreg::ErrorKind::kValue);
  }
}

TEST_CASE("device parsing") {
  CHECK(Device::Parse("cpu").value() == Device::cpu());
  CHECK(Device::Parse("cpu:0").value() == Device::cpu());
  CHECK(Device::Parse("meta").value() == Device::meta());
  CHECK(Device::Parse("cuda").value() == Device::cuda(-1));
  CHECK(Device::Parse("cuda:0").value() == Device::cuda(0));
  CHECK(Device::Parse("cuda:7").value() == Device::cuda(7));
  for (const char* s : {"cpu", "meta", "cuda", "cuda:0", "cuda:15"}) {
    CHECK(Device::Parse(s).value().str() == s);  // Round trip.
  }
  const std::pair<const char*, const char*> bad[] = {
      {"cuda:x", "invalid device string 'cuda:x': device index must be an integer in [0, 32767]"},
      {"cuda:", "invalid device string 'cuda:': device index must be an integer in [0, 32767]"},
      {"cuda:-1", "invalid device string 'cuda:-1': device index must be an integer in [0, 32767]"},
      {"cuda:+1", "invalid device string 'cuda:+1': device index must be an integer in [0, 32767]"},
      {"cuda:99999",
       "invalid device string 'cuda:99999': device index must be an integer in [0, "
       "32767]"},
      {"cuda:0:1",
       "invalid device string 'cuda:0:1': device index must be an integer in [0, "
       "32767]"},
      {"tpu",
       "invalid device string 'tpu': unknown device type 'tpu' (expected cpu, cuda or meta)"},
      {"", "invalid device string '': unknown device type '' (expected cpu, cuda or meta)"},
      {"CUDA:0",
       "invalid device string 'CUDA:0': unknown device type 'CUDA' (expected cpu, cuda "
       "or meta)"},
      {"cpu:1", "invalid device string 'cpu:1': cpu devices take no index other than 0"},
      {"meta:1", "invalid device string 'meta:1': meta devices take no index other than 0"},
  };
  for (const auto& [text, message] : bad) {
    INFO(text);
    auto parsed = Device::Parse(text);
    REQUIRE_FALSE(parsed.ok());
    CHECK(parsed.status().code() == absl::StatusCode::kInvalidArgument);
    CHECK(std::string(parsed.status().message()) == message);
  }
}
