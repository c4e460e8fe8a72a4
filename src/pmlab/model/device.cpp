#include "pmlab/model/device.hpp"

#include <algorithm>

namespace pmlab::model {

Device::Device(DeviceParams params) : params_(std::move(params)), interleave_(params_) {
  dimms_.reserve(params_.dimms);
  for (uint32_t d = 0; d < params_.dimms; ++d) dimms_.emplace_back(params_);
}

WriteTiming Device::write(uint64_t addr, size_t len, double t) {
  WriteTiming done{t, t};
  if (len == 0) return done;
  const uint64_t end = addr + len;
  for (uint64_t line = addr & ~uint64_t{kImcLine - 1}; line < end; line += kImcLine) {
    const uint64_t lo = std::max(addr, line) - line;
    const uint64_t hi = std::min<uint64_t>(end, line + kImcLine) - line;
    const uint64_t mask = hi - lo == kImcLine ? ~uint64_t{0} : ((uint64_t{1} << (hi - lo)) - 1) << lo;
    const Location at = interleave_.locate(line);
    const WriteTiming w = dimms_[at.dimm].write(at.line, at.sector, mask, t);
    done.admitted_ns = std::max(done.admitted_ns, w.admitted_ns);
    done.accepted_ns = std::max(done.accepted_ns, w.accepted_ns);
  }
  return done;
}

double Device::read(uint64_t addr, size_t len, double t) {
  double done = t;
  if (len == 0) return done;
  const uint64_t end = addr + len;
  for (uint64_t line = addr & ~uint64_t{kImcLine - 1}; line < end; line += kImcLine) {
    const Location at = interleave_.locate(line);
    done = std::max(done, dimms_[at.dimm].read(at.line, t));
  }
  return done;
}

void Device::reset() {
  for (auto& d : dimms_) d.reset();
}

DeviceCounters Device::counters() const {
  DeviceCounters sum;
  for (const auto& d : dimms_) {
    sum += d.counters();
    sum.buffered_lines += d.buffered_lines();
  }
  return sum;
}

double Device::busiest_dimm_ns() const {
  double busiest = 0;
  for (const auto& d : dimms_) busiest = std::max(busiest, d.busy_ns());
  return busiest;
}

}  // namespace pmlab::model
