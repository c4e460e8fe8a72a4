// What the processor offers, read with CPUID, and what the user forbids.
//
// Like libpmem2's PMEM_NO_CLWB / PMEM_NO_MOVNT, every hardware path can be switched off from the
// environment (PMLAB_NO_CLWB=1, PMLAB_NO_CLFLUSHOPT=1, PMLAB_NO_AVX512=1, PMLAB_NO_AVX2=1), so the
// fallback paths run and are tested on machines that have the newer instructions.
#pragma once

#include <string>
#include <vector>

namespace pmlab::platform {

struct CpuFeatures {
  std::string vendor;  // "GenuineIntel", "AuthenticAMD", ...
  std::string model;   // brand string
  bool clflush = false;
  bool clflushopt = false;
  bool clwb = false;
  bool sse2 = false;
  bool avx2 = false;
  bool avx512f = false;
  bool avx512bw = false;         // byte and word lanes, byte masks (needs avx512f)
  bool avx512vpopcntdq = false;  // vector popcount (needs avx512f)
  bool movdir64b = false;
  bool invariant_tsc = false;
  bool rdtscp = false;

  // CPUID as it is, then the PMLAB_NO_* masks applied.
  static const CpuFeatures& host();
  static CpuFeatures detect_raw();
  CpuFeatures masked_by_environment() const;
};

struct CacheInfo {
  int level = 0;
  std::string type;  // "data", "instruction", "unified"
  uint64_t size_bytes = 0;
  int line_bytes = 64;
  int shared_by = 1;  // logical CPUs sharing it
};

// From /sys/devices/system/cpu/cpu0/cache; empty when sysfs does not say.
std::vector<CacheInfo> caches();
// Size of the last-level cache seen by CPU 0 (0 when unknown).
uint64_t llc_bytes();

}  // namespace pmlab::platform
