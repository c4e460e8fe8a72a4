// How a mapping is made durable: the durability domain and the flush instruction.
//
// Decided once, when a pool or medium is opened (libpmem2's map-time choice), and overridable: by the
// caller for tests and sweeps, and by PMLAB_FORCE_DOMAIN / PMLAB_FORCE_FLUSH for whole runs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/platform/cpu.hpp"

namespace pmlab::persist {

enum class Domain : uint8_t {
  none,  // nothing is durable: flushes and fences are not issued (DRAM, PMEM used as volatile memory)
  adr,   // the memory controller is durable: stores need a line flush, then a fence
  eadr,  // the CPU caches are durable too: no flush, the fence still orders stores
};

// What a domain does, asked by name (never by comparing domain names as text).
constexpr bool persists(Domain d) noexcept { return d != Domain::none; }            // anything is durable
constexpr bool needs_line_flush(Domain d) noexcept { return d == Domain::adr; }     // stores reach it by flush
constexpr bool caches_are_durable(Domain d) noexcept { return d == Domain::eadr; }  // a store is durable once visible

enum class FlushInstruction : uint8_t {
  clflush,     // write back and invalidate, serialized with other clflushes
  clflushopt,  // write back and invalidate, unordered until a fence
  clwb,        // write back, the line may stay cached
  ntstore,     // bulk writes bypass the cache (non-temporal stores); cached lines use the best flush
};

struct Config {
  Domain domain = Domain::adr;
  FlushInstruction flush = FlushInstruction::clwb;
  // Overhead decomposition [PMDKOverheads]: pretend a cost away. A design's crash guarantees are void.
  bool elide_flush = false;
  bool elide_fence = false;
};

const char* to_string(Domain d) noexcept;
const char* to_string(FlushInstruction f) noexcept;
Result<Domain> parse_domain(std::string_view text);
Result<FlushInstruction> parse_flush(std::string_view text);

// Is the instruction there? An error names the instruction and the CPUID bit that says no.
Status check_supported(FlushInstruction f, const platform::CpuFeatures& cpu);
// The best line flush the CPU has: clwb, else clflushopt, else clflush.
FlushInstruction best_line_flush(const platform::CpuFeatures& cpu) noexcept;

// The default for a mapping: `granularity_domain` from the mapping (eADR when the platform reports the
// CPU cache durable), the best flush of the CPU, then PMLAB_FORCE_DOMAIN / PMLAB_FORCE_FLUSH.
Result<Config> default_config(Domain granularity_domain, const platform::CpuFeatures& cpu);

}  // namespace pmlab::persist
