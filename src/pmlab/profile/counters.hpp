// Hardware counters of a run, read wherever the platform exposes them, so a result carries its own
// explanation (the counter tool of [PMIdioBench], without Intel-only scripts):
//
//   core     cycles, instructions and last-level-cache misses of this process and the run's worker
//            threads (perf_event_open, inherited by threads created after it opened)
//   memory   bytes read and written at the memory controllers, from the uncore IMC PMUs the kernel lists
//            under /sys/bus/event_source/devices (Intel's uncore_imc_N cas_count_read / _write; whole
//            socket, so other processes' traffic counts too)
//   dimm     PMEM DIMM media counters through `ipmctl show -dimm -performance`: media reads and writes,
//            read and write requests, and EWR / RWR computed from them ([PMIdioBench] §3)
//
// Each source is detected once. A missing source is reported with the reason (e.g. no PMU in a VM) and
// its metrics are left out: never estimated. Every metric added here is kind measured.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "pmlab/record/record.hpp"
#include "pmlab/common/status.hpp"

namespace pmlab::profile {

// A PMU event as perf_event_open takes it.
struct PmuEvent {
  std::string name;  // e.g. "uncore_imc_0/cas_count_read"
  uint32_t type = 0;
  uint64_t config = 0;
  double scale = 1.0;  // bytes per count for memory traffic
};

// Encodes "event=0x04,umask=0x03" with the PMU's format terms ({"event": "config:0-7", "umask":
// "config:8-15"}) into a config word. Only `config` fields are supported.
Result<uint64_t> encode_event(std::string_view spec, const std::map<std::string, std::string>& formats);

// The IMC read and write events of every uncore memory-controller PMU under `sysfs_root`
// (/sys/bus/event_source/devices normally). Empty when there is none.
std::vector<PmuEvent> find_imc_events(const std::string& sysfs_root, std::string& why_none);

// One PMEM DIMM's `ipmctl show -dimm -performance` counters (64 B units, since the last power cycle).
struct DimmCounters {
  std::string dimm;
  uint64_t media_reads = 0, media_writes = 0, read_requests = 0, write_requests = 0;
};
Result<std::vector<DimmCounters>> parse_ipmctl_performance(std::string_view text);
// Per-run metrics from two snapshots: dimm_media_read_bytes, dimm_media_write_bytes,
// dimm_read_request_bytes, dimm_write_request_bytes, dimm_ewr (request / media write bytes) and dimm_rwr
// (media read / media write bytes). Empty when a DIMM is missing from either snapshot.
std::vector<record::Metric> dimm_metrics(const std::vector<DimmCounters>& before,
                                         const std::vector<DimmCounters>& after);

struct CounterSources {
  bool core = false;
  std::string core_reason;
  std::vector<PmuEvent> imc;
  std::string imc_reason;
  std::string ipmctl;  // path, empty when not usable
  std::string ipmctl_reason;
  // context.counters: what each source gave or why not.
  nlohmann::ordered_json context_json() const;
};
CounterSources detect_counters();

// Counts one run: begin() right before its body, end() right after.
class RunCounters {
 public:
  explicit RunCounters(const CounterSources& sources) : sources_(sources) {}
  RunCounters(const RunCounters&) = delete;
  RunCounters& operator=(const RunCounters&) = delete;
  ~RunCounters();

  void begin();
  // Adds the counted metrics to `rec` (and per-operation values when the record has "ops").
  void end(record::RunRecord& rec);

 private:
  void close_all();
  const CounterSources& sources_;
  std::vector<std::pair<std::string, int>> core_fds_;
  std::vector<std::pair<const PmuEvent*, int>> imc_fds_;
  std::vector<DimmCounters> dimms_before_;
};

}  // namespace pmlab::profile
