// What a modelled memory device is: its geometry (DIMMs, interleave, media line), its on-DIMM buffers and
// its timing. One struct for every PMEM class, so a preset is a set of values, not a code path, and any
// value can be overridden from a JSON file.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "pmlab/common/status.hpp"

namespace pmlab::model {

// The memory controller talks to the device in cache lines: every event the model sees is one of these.
inline constexpr uint32_t kImcLine = 64;
// Largest media line the model tracks byte by byte (16 sectors of 64 B).
inline constexpr uint32_t kMaxMediaLine = 1024;

struct DeviceParams {
  std::string name;         // shown as the `model` of every modelled metric
  std::string description;  // one line: the class of PMEM and where the values come from

  // Geometry.
  uint32_t dimms = 6;                // DIMMs interleaved into one address space
  uint32_t interleave_bytes = 4096;  // consecutive bytes on one DIMM before the next
  uint32_t media_line_bytes = 256;   // the media's access unit (ECC block); > 64 means read-modify-write

  // On-DIMM write-combining buffer (XPBuffer). 0 lines: every write goes straight to the media.
  uint32_t write_buffer_lines = 64;
  // Write a line to the media and free its slot as soon as all its bytes have been written ([PMIdioBench] I7).
  bool write_out_full_lines = true;
  // On-DIMM read buffer, and how many media lines the sequential prefetcher keeps ahead (0: none).
  uint32_t read_buffer_lines = 64;
  uint32_t prefetch_lines = 4;

  // Timing. Latencies are the device's, seen from the CPU (a load, a persist), in ns.
  double media_read_ns = 305.0;   // a load served by the media
  double buffer_read_ns = 169.4;  // a load served by an on-DIMM buffer
  double write_ns = 62.3;         // a persist (write + fence) accepted by the device
  double host_read_ns = 101.5;    // what the host's DRAM already charges a load (emulation adds the rest)
  // The least time between two writes of one 64 B line accepted by the device: a write to a line written
  // less than this ago waits for the earlier one (0: no such wait). [PMemIO] §2.3 finds a line persisted
  // twice in a row pays a large penalty on Optane (padding log entries to lines: ~8x throughput); the
  // value is fitted to PMIdioBench I1, whose store test persists one line from 8 threads: 2493 ns per
  // operation on Optane = 8 serialized writes of 311.6 ns (711.1 ns on DRAM: 88.9 ns each).
  double line_rewrite_ns = 311.6;
  // Per-DIMM media bandwidth in GB/s (= bytes per ns): media reads and writes proceed in parallel.
  double media_read_gbps = 6.5;
  double media_write_gbps = 2.2;
  // Media writes a DIMM may have queued before it stops accepting new writes (its buffer / WPQ), bytes.
  uint32_t write_queue_bytes = 16384;

  // Derived.
  uint32_t sectors_per_line() const noexcept { return media_line_bytes / kImcLine; }
  double media_read_service_ns() const noexcept { return media_line_bytes / media_read_gbps; }
  double media_write_service_ns() const noexcept { return media_line_bytes / media_write_gbps; }
  // Peak bandwidth the memory controller can reach (every media line fully used), all DIMMs, bytes/ns.
  double peak_read_gbps() const noexcept { return dimms * media_read_gbps; }
  double peak_write_gbps() const noexcept { return dimms * media_write_gbps; }
};

// Checks every value; the error names the parameter and what it accepts.
Status validate(const DeviceParams& p);

nlohmann::ordered_json to_json(const DeviceParams& p);
// Applies the keys of `overrides` to `into`. Unknown keys and mistyped values are errors naming the key.
Status apply_json(const nlohmann::json& overrides, DeviceParams& into);

// A preset name (see presets.hpp), or a JSON file: {"base": "dcpmm", "name": "…", <parameter>: value, …}.
// "base" defaults to dcpmm; "name" defaults to the file's stem.
Result<DeviceParams> resolve_device(std::string_view preset_or_path);

}  // namespace pmlab::model
