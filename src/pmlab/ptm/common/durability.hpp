// The durability models a PTM runs under [OptanePTM]: which of its two regions — the log and the data
// (heap) — need a line flush and a fence, and where each region lives.
//
// Expressed as a pair of Persisters rather than a new persist::Domain: the platform's domain stays the
// one vocabulary, and a model is only a choice of domain per region.
//
//   model       log region         data region        what the emulation assumes
//   adr         pool, flush+fence  pool, flush+fence  the memory controller is durable (Optane ADR)
//   eadr        pool, fence        pool, fence        the CPU caches are durable too; the fence stays to
//                                                     order stores (pmlab's conservative eADR model)
//   pdram       DRAM, nothing      DRAM, nothing      all of DRAM and the caches are durable: a directory
//                                                     in the memory controller flushes DRAM to PMEM on
//                                                     power failure (that flush-on-failure and its reserve
//                                                     energy are not modelled); x86-TSO store order is the
//                                                     persist order, so neither flush nor fence is issued
//   pdram-lite  DRAM, nothing      pool, fence        only the (redo) log lives in persistent DRAM; the
//                                                     caches are durable as in eADR, so the data still
//                                                     needs its fence before the log is retired
#pragma once

#include <string_view>

#include "pmlab/common/status.hpp"
#include "pmlab/persist/persister.hpp"

namespace pmlab::ptm {

enum class Durability : uint8_t { adr, eadr, pdram, pdram_lite };

const char* to_string(Durability d) noexcept;
Result<Durability> parse_durability(std::string_view text);

// Where a region of a model lives: on the run's pool, or on DRAM that the model declares persistent.
bool log_on_dram(Durability d) noexcept;
bool data_on_dram(Durability d) noexcept;

// The persister configs of the two regions. `base` gives the flush instruction and the elide switches
// (overhead breakdown); its domain is replaced by the model's.
persist::Config log_config(Durability d, const persist::Config& base) noexcept;
persist::Config data_config(Durability d, const persist::Config& base) noexcept;

// One sentence per model, for run notes and the report.
const char* assumption(Durability d) noexcept;

}  // namespace pmlab::ptm
