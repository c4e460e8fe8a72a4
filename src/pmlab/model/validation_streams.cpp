#include "pmlab/model/validation_streams.hpp"

#include <algorithm>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/model/device.hpp"

namespace pmlab::model {
namespace {

// Each writer or reader works in its own region, far from the others (fio gives each job its own range).
constexpr uint64_t kRegionPerThread = uint64_t{1} << 30;
// Random pieces land anywhere in 64 MiB per thread: far larger than any on-DIMM buffer.
constexpr uint64_t kRandomSpan = uint64_t{64} << 20;

StreamResult finish(const Device& d, uint64_t events) {
  StreamResult r;
  r.counters = d.counters();
  r.metrics = derive(d.params(), r.counters, d.busiest_dimm_ns(), 0);
  r.events = events;
  return r;
}

// Runs `threads` interleaved streams of `size`-byte accesses; `access(addr)` issues one.
template <class Access>
uint64_t interleaved(bool random, uint32_t size, uint32_t threads, uint64_t total_bytes, uint64_t seed,
                     Access&& access) {
  const uint64_t per_thread = std::max<uint64_t>(1, total_bytes / size / threads);
  std::vector<uint64_t> state(threads);
  for (uint32_t t = 0; t < threads; ++t) state[t] = seed * 0x9e37 + t;
  for (uint64_t i = 0; i < per_thread; ++i) {
    for (uint32_t t = 0; t < threads; ++t) {
      const uint64_t base = kRegionPerThread * t;
      const uint64_t offset = random ? (splitmix64(state[t]) % (kRandomSpan / size)) * size : i * size;
      access(base + offset);
    }
  }
  return per_thread * threads * ((size + kImcLine - 1) / kImcLine);
}

// Interleaved streams of writes (or reads) on a fresh device, and what the device made of them.
StreamResult interleaved_on_device(const DeviceParams& p, bool writes, bool random, uint32_t size, uint32_t threads,
                                   uint64_t total_bytes, uint64_t seed) {
  Device d(p);
  const uint64_t events = interleaved(random, size, threads, total_bytes, seed, [&](uint64_t addr) {
    if (writes) d.write(addr, size);
    else d.read(addr, size);
  });
  return finish(d, events);
}

}  // namespace

StreamResult small_writes(const DeviceParams& p, bool random, uint32_t size, uint32_t threads, uint64_t total_bytes,
                          uint64_t seed) {
  return interleaved_on_device(p, true, random, size, threads, total_bytes, seed);
}

StreamResult xpbuffer_probe(const DeviceParams& p, uint64_t region, uint64_t total_bytes) {
  DeviceParams one = p;
  one.dimms = 1;  // FAST'20 probed one DIMM; interleaving would spread the region over several buffers
  Device d(one);
  const uint64_t line = one.media_line_bytes;
  const uint64_t half = line / 2;
  const uint64_t lines = std::max<uint64_t>(1, region / line);
  uint64_t written = 0, events = 0;
  while (written < total_bytes) {
    for (uint64_t part = 0; part < 2; ++part) {
      for (uint64_t l = 0; l < lines; ++l) {
        d.write(l * line + part * half, half);
        written += half;
        events += half / kImcLine;
      }
    }
  }
  return finish(d, events);
}

StreamResult repeated_line(const DeviceParams& p, uint32_t repeats) {
  Device d(p);
  const uint32_t line = p.media_line_bytes;
  uint64_t events = 0;
  for (uint32_t i = 0; i < repeats; ++i) {
    // A full-line non-temporal store reaches the DIMM as one 64 B request per cache line.
    for (uint32_t s = 0; s < line; s += kImcLine) d.write(s, kImcLine);
    events += line / kImcLine;
  }
  return finish(d, events);
}

StreamResult reads(const DeviceParams& p, bool random, uint32_t size, uint32_t threads, uint64_t total_bytes,
                   uint64_t seed) {
  return interleaved_on_device(p, false, random, size, threads, total_bytes, seed);
}

double idle_read_ns(const DeviceParams& p, uint32_t reads, uint64_t seed) {
  Device d(p);
  uint64_t state = seed;
  double t = 0;
  for (uint32_t i = 0; i < reads; ++i)
    t = d.read((splitmix64(state) % (kRandomSpan / kImcLine)) * kImcLine, kImcLine, t);
  return reads > 0 ? t / reads : 0.0;
}

double one_line_pstore_ns(const DeviceParams& p, uint32_t writers, uint32_t pstores_per_writer) {
  Device d(p);
  std::vector<double> ready(writers, 0.0);  // when each writer's fence returned
  for (uint32_t op = 0; op < pstores_per_writer; ++op)
    for (uint32_t w = 0; w < writers; ++w) ready[w] = d.write(0, 64, ready[w]).accepted_ns;
  return *std::max_element(ready.begin(), ready.end()) / pstores_per_writer;
}

}  // namespace pmlab::model
