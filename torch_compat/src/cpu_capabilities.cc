// Why CPUID and not the compiler's __builtin_cpu_supports: torch's keys include instruction
// sets newer than the compilers opreg supports know (AMX-FP16, AVX10), and an instruction set
// is usable only when the OS also saves its registers (XCR0), which torch's cpuinfo checks and
// so do we. Cache sizes and core counts come from glibc's sysconf and Linux's sysfs topology.
#include "opreg/torch_compat/cpu_capabilities.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <set>
#include <string>
#include <utility>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#define OPREG_X86_CPU 1
#endif

namespace at::cpu {
namespace {

using Capabilities = std::unordered_map<std::string, c10::IValue>;

#ifdef OPREG_X86_CPU
struct Regs {
  uint32_t a = 0, b = 0, c = 0, d = 0;
};

Regs Cpuid(uint32_t leaf, uint32_t subleaf) {
  Regs r;
  if (__get_cpuid_max(leaf & 0x80000000u, nullptr) < leaf) return r;
  __cpuid_count(leaf, subleaf, r.a, r.b, r.c, r.d);
  return r;
}

bool Bit(uint32_t reg, int bit) { return ((reg >> bit) & 1u) != 0; }

uint64_t Xcr0(bool osxsave) {
  if (!osxsave) return 0;
  uint32_t lo = 0, hi = 0;
  __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (static_cast<uint64_t>(hi) << 32) | lo;
}

std::string BrandString() {
  char brand[49] = {};
  for (uint32_t i = 0; i < 3; ++i) {
    Regs r = Cpuid(0x80000002u + i, 0);
    std::memcpy(brand + 16 * i, &r, 16);
  }
  std::string s(brand);
  const size_t first = s.find_first_not_of(' ');
  const size_t last = s.find_last_not_of(' ');
  return first == std::string::npos ? std::string() : s.substr(first, last - first + 1);
}

void AddX86Features(Capabilities* caps) {
  const Regs l1 = Cpuid(1, 0);
  const Regs l7 = Cpuid(7, 0);
  const Regs l7s1 = Cpuid(7, 1);
  const Regs ext = Cpuid(0x80000001u, 0);
  const uint64_t xcr0 = Xcr0(Bit(l1.c, 27));
  // The OS saves XMM+YMM (bits 1, 2), the AVX-512 opmask and ZMM state (5, 6, 7), AMX tile
  // config and data (17, 18).
  const bool avx_os = (xcr0 & 0x6) == 0x6;
  const bool avx512_os = avx_os && (xcr0 & 0xe0) == 0xe0;
  const bool amx_os = (xcr0 & 0x60000) == 0x60000;
  auto& c = *caps;
  c["sse"] = Bit(l1.d, 25);
  c["sse2"] = Bit(l1.d, 26);
  c["sse3"] = Bit(l1.c, 0);
  c["ssse3"] = Bit(l1.c, 9);
  c["sse4_1"] = Bit(l1.c, 19);
  c["sse4_2"] = Bit(l1.c, 20);
  c["sse4a"] = Bit(ext.c, 6);
  c["popcnt"] = Bit(l1.c, 23);
  c["aes"] = Bit(l1.c, 25);
  c["clflush"] = Bit(l1.d, 19);
  c["clflushopt"] = Bit(l7.b, 23);
  c["clwb"] = Bit(l7.b, 24);
  c["sha"] = Bit(l7.b, 29);
  c["lzcnt"] = Bit(ext.c, 5);
  c["bmi"] = Bit(l7.b, 3);
  c["bmi2"] = Bit(l7.b, 8);
  c["avx"] = avx_os && Bit(l1.c, 28);
  c["f16c"] = avx_os && Bit(l1.c, 29);
  c["fma3"] = avx_os && Bit(l1.c, 12);
  c["fma4"] = avx_os && Bit(ext.c, 16);
  c["avx2"] = avx_os && Bit(l7.b, 5);
  c["avx_vnni"] = avx_os && Bit(l7s1.a, 4);
  c["avx_vnni_int8"] = avx_os && Bit(l7s1.d, 4);
  c["avx_ne_convert"] = avx_os && Bit(l7s1.d, 5);
  c["avx_vnni_int16"] = avx_os && Bit(l7s1.d, 10);
  c["avx512_f"] = avx512_os && Bit(l7.b, 16);
  c["avx512_dq"] = avx512_os && Bit(l7.b, 17);
  c["avx512_ifma"] = avx512_os && Bit(l7.b, 21);
  c["avx512_cd"] = avx512_os && Bit(l7.b, 28);
  c["avx512_bw"] = avx512_os && Bit(l7.b, 30);
  c["avx512_vl"] = avx512_os && Bit(l7.b, 31);
  c["avx512_vbmi"] = avx512_os && Bit(l7.c, 1);
  c["avx512_vbmi2"] = avx512_os && Bit(l7.c, 6);
  c["avx512_vnni"] = avx512_os && Bit(l7.c, 11);
  c["avx512_bitalg"] = avx512_os && Bit(l7.c, 12);
  c["avx512_vpopcntdq"] = avx512_os && Bit(l7.c, 14);
  c["avx512_4vnniw"] = avx512_os && Bit(l7.d, 2);
  c["avx512_4fmaps"] = avx512_os && Bit(l7.d, 3);
  c["avx512_vp2intersect"] = avx512_os && Bit(l7.d, 8);
  c["avx512_fp16"] = avx512_os && Bit(l7.d, 23);
  c["avx512_bf16"] = avx512_os && Bit(l7s1.a, 5);
  c["amx_bf16"] = amx_os && Bit(l7.d, 22);
  c["amx_tile"] = amx_os && Bit(l7.d, 24);
  c["amx_int8"] = amx_os && Bit(l7.d, 25);
  c["amx_fp16"] = amx_os && Bit(l7s1.a, 21);
  // AVX10: the leaf 7.1 EDX bit says it exists, leaf 0x24 EBX[7:0] gives its version.
  const uint32_t avx10_version = Bit(l7s1.d, 19) ? (Cpuid(0x24, 0).b & 0xffu) : 0;
  c["avx10_1"] = avx512_os && avx10_version >= 1;
  c["avx10_2"] = avx512_os && avx10_version >= 2;
  c["architecture"] = std::string(sizeof(void*) == 8 ? "x86_64" : "x86");
  c["cpu_name"] = BrandString();
}
#endif  // OPREG_X86_CPU

int64_t SysconfOrZero(int name) {
  const long v = sysconf(name);  // NOLINT(runtime/int): sysconf's type
  return v > 0 ? static_cast<int64_t>(v) : 0;
}

std::string ReadLine(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

// Physical cores and sockets from sysfs: distinct (package, core) and package ids of the
// online CPUs; 0 where sysfs does not say.
void AddTopology(Capabilities* caps, int64_t logical) {
  std::set<std::pair<std::string, std::string>> cores;
  std::set<std::string> packages;
  for (int64_t cpu = 0; cpu < logical; ++cpu) {
    const std::string dir = "/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/";
    const std::string package = ReadLine(dir + "physical_package_id");
    const std::string core = ReadLine(dir + "core_id");
    if (package.empty() || core.empty()) continue;
    packages.insert(package);
    cores.emplace(package, core);
  }
  (*caps)["num_physical_cores"] = static_cast<int64_t>(cores.size());
  (*caps)["num_sockets"] = static_cast<int64_t>(packages.size());
}

Capabilities Detect() {
  Capabilities caps;
#ifdef OPREG_X86_CPU
  AddX86Features(&caps);
#elif defined(__aarch64__)
  caps["architecture"] = std::string("aarch64");
#else
  caps["architecture"] = std::string("unknown");
#endif
#if defined(_SC_LEVEL1_DCACHE_SIZE) && defined(_SC_LEVEL2_CACHE_SIZE)
  caps["l1d_cache_size"] = SysconfOrZero(_SC_LEVEL1_DCACHE_SIZE);
  caps["l2_cache_size"] = SysconfOrZero(_SC_LEVEL2_CACHE_SIZE);
#else
  caps["l1d_cache_size"] = int64_t{0};
  caps["l2_cache_size"] = int64_t{0};
#endif
  const int64_t logical = SysconfOrZero(_SC_NPROCESSORS_ONLN);
  caps["num_logical_cores"] = logical;
  AddTopology(&caps, logical);
  return caps;
}

const Capabilities& Detected() {
  static const Capabilities* caps = new Capabilities(Detect());  // never freed: exit-safe
  return *caps;
}

}  // namespace

std::unordered_map<std::string, c10::IValue> get_cpu_capabilities() { return Detected(); }

bool is_avx512_vnni_supported() {
  auto it = Detected().find("avx512_vnni");
  return it != Detected().end() && it->second.toBool();
}

bool init_amx() {
  auto it = Detected().find("amx_tile");
  if (it == Detected().end() || !it->second.toBool()) return false;
#if defined(__linux__) && defined(OPREG_X86_CPU) && defined(SYS_arch_prctl)
  constexpr int kArchReqXcompPerm = 0x1023;  // ARCH_REQ_XCOMP_PERM
  constexpr int kXfeatureXtiledata = 18;
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
#else
  return false;
#endif
}

}  // namespace at::cpu
