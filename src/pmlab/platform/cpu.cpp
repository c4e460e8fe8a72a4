#include "pmlab/platform/cpu.hpp"

#include <cpuid.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "pmlab/platform/topology.hpp"

namespace pmlab::platform {
namespace {

bool env_set(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' && std::strcmp(v, "0") != 0;
}

std::string read_line(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::string s;
  std::getline(in, s);
  return s;
}

}  // namespace

CpuFeatures CpuFeatures::detect_raw() {
  CpuFeatures f;
  unsigned a = 0, b = 0, c = 0, d = 0;
  if (__get_cpuid(0, &a, &b, &c, &d) == 0) return f;
  const unsigned max_leaf = a;
  char vendor[13] = {};
  std::memcpy(vendor + 0, &b, 4);
  std::memcpy(vendor + 4, &d, 4);
  std::memcpy(vendor + 8, &c, 4);
  f.vendor = vendor;

  __get_cpuid(1, &a, &b, &c, &d);
  f.clflush = (d >> 19) & 1;
  f.sse2 = (d >> 26) & 1;
  const bool osxsave = (c >> 27) & 1;
  if (max_leaf >= 7) {
    __cpuid_count(7, 0, a, b, c, d);
    f.clflushopt = (b >> 23) & 1;
    f.clwb = (b >> 24) & 1;
    f.movdir64b = (c >> 28) & 1;
    bool avx2 = (b >> 5) & 1;
    bool avx512f = (b >> 16) & 1;
    const bool avx512bw = (b >> 30) & 1;
    const bool avx512vpopcntdq = (c >> 14) & 1;
    // The OS must also save the wide registers (XCR0), or the instructions fault.
    unsigned long long xcr0 = 0;
    if (osxsave) {
      unsigned lo = 0, hi = 0;
      __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
      xcr0 = (static_cast<unsigned long long>(hi) << 32) | lo;
    }
    f.avx2 = avx2 && (xcr0 & 0x6) == 0x6;
    f.avx512f = avx512f && (xcr0 & 0xe6) == 0xe6;
    f.avx512bw = f.avx512f && avx512bw;
    f.avx512vpopcntdq = f.avx512f && avx512vpopcntdq;
  }
  __get_cpuid(0x80000000, &a, &b, &c, &d);
  const unsigned max_ext = a;
  if (max_ext >= 0x80000001) {
    __get_cpuid(0x80000001, &a, &b, &c, &d);
    f.rdtscp = (d >> 27) & 1;
  }
  if (max_ext >= 0x80000004) {
    char brand[49] = {};
    for (unsigned i = 0; i < 3; ++i) {
      __get_cpuid(0x80000002 + i, &a, &b, &c, &d);
      std::memcpy(brand + 16 * i + 0, &a, 4);
      std::memcpy(brand + 16 * i + 4, &b, 4);
      std::memcpy(brand + 16 * i + 8, &c, 4);
      std::memcpy(brand + 16 * i + 12, &d, 4);
    }
    std::string s = brand;
    while (!s.empty() && s.back() == ' ') s.pop_back();
    while (!s.empty() && s.front() == ' ') s.erase(s.begin());
    f.model = s;
  }
  if (max_ext >= 0x80000007) {
    __get_cpuid(0x80000007, &a, &b, &c, &d);
    f.invariant_tsc = (d >> 8) & 1;
  }
  return f;
}

CpuFeatures CpuFeatures::masked_by_environment() const {
  CpuFeatures f = *this;
  if (env_set("PMLAB_NO_CLWB")) f.clwb = false;
  if (env_set("PMLAB_NO_CLFLUSHOPT")) f.clflushopt = false;
  if (env_set("PMLAB_NO_AVX512") || env_set("PMLAB_NO_AVX2")) f.avx512f = f.avx512bw = f.avx512vpopcntdq = false;
  if (env_set("PMLAB_NO_AVX2")) f.avx2 = false;
  return f;
}

const CpuFeatures& CpuFeatures::host() {
  static const CpuFeatures features = detect_raw().masked_by_environment();
  return features;
}

std::vector<CacheInfo> caches() {
  namespace fs = std::filesystem;
  std::vector<CacheInfo> out;
  const fs::path dir = "/sys/devices/system/cpu/cpu0/cache";
  std::error_code ec;
  for (int i = 0; i < 16; ++i) {
    fs::path idx = dir / ("index" + std::to_string(i));
    if (!fs::exists(idx, ec)) break;
    CacheInfo c;
    c.level = std::atoi(read_line(idx / "level").c_str());
    std::string type = read_line(idx / "type");
    c.type = type == "Data" ? "data" : type == "Instruction" ? "instruction" : "unified";
    std::string size = read_line(idx / "size");  // "32K"
    uint64_t n = std::strtoull(size.c_str(), nullptr, 10);
    if (!size.empty() && size.back() == 'K') n <<= 10;
    if (!size.empty() && size.back() == 'M') n <<= 20;
    c.size_bytes = n;
    int line = std::atoi(read_line(idx / "coherency_line_size").c_str());
    if (line > 0) c.line_bytes = line;
    const size_t sharing = parse_cpu_list(read_line(idx / "shared_cpu_list")).size();
    c.shared_by = sharing > 0 ? static_cast<int>(sharing) : 1;
    out.push_back(c);
  }
  return out;
}

uint64_t llc_bytes() {
  uint64_t best = 0;
  int level = 0;
  for (const auto& c : caches()) {
    if (c.type != "instruction" && c.level >= level) {
      level = c.level;
      best = c.size_bytes;
    }
  }
  return best;
}

}  // namespace pmlab::platform
