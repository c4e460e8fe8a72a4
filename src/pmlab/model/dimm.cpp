#include "pmlab/model/dimm.hpp"

#include <algorithm>

namespace pmlab::model {

Dimm::Dimm(const DeviceParams& p)
    : sectors_(p.sectors_per_line()),
      write_out_full_(p.write_out_full_lines),
      media_read_ns_(p.media_read_ns),
      buffer_read_ns_(p.buffer_read_ns),
      write_ns_(p.write_ns),
      read_service_ns_(p.media_read_service_ns()),
      write_service_ns_(p.media_write_service_ns()),
      queue_ns_(static_cast<double>(p.write_queue_bytes) / p.media_line_bytes * p.media_write_service_ns()),
      rewrite_ns_(p.line_rewrite_ns),
      write_buffer_(p.write_buffer_lines),
      read_buffer_(p.read_buffer_lines),
      prefetcher_(p.prefetch_lines),
      recent_writes_(p.line_rewrite_ns > 0 ? kRecentWrites : 0) {}

void Dimm::reset() {
  write_buffer_.clear();
  read_buffer_.clear();
  prefetcher_.reset();
  media_ = MediaServers{};
  std::fill(recent_writes_.begin(), recent_writes_.end(), RecentWrite{});
  counters_ = DeviceCounters{};
}

double Dimm::media_read(double t) {
  ++counters_.media_reads;
  return media_.read(t, read_service_ns_) + media_read_ns_;
}

void Dimm::media_write(double t) {
  ++counters_.media_writes;
  media_.write(t, write_service_ns_);
}

double Dimm::admission(double t) const noexcept { return std::max(t, media_.write_free() - queue_ns_); }

double Dimm::order_after_previous_write(uint64_t line, uint32_t sector, double accepted) {
  if (recent_writes_.empty()) return accepted;
  const uint64_t key = line * sectors_ + sector;
  RecentWrite& slot = recent_writes_[(key ^ (key >> 10)) % kRecentWrites];
  if (slot.key == key && slot.accepted_ns + rewrite_ns_ > accepted) {
    ++counters_.rewrite_waits;
    accepted = slot.accepted_ns + rewrite_ns_;
  }
  slot = {key, accepted};
  return accepted;
}

void Dimm::prefetch_around(uint64_t line, double t) {
  const SequentialPrefetcher::Fetch f = prefetcher_.on_line(line);
  for (uint64_t l = f.first; l <= f.last; ++l) {
    if (read_buffer_.find(l) != nullptr || write_buffer_.find(l) != nullptr) continue;
    ++counters_.prefetch_reads;
    ReadBufferLine* slot = nullptr;
    read_buffer_.insert(l, ReadBufferLine{media_read(t)}, &slot);  // clean lines leave silently
  }
}

WriteTiming Dimm::write(uint64_t line, uint32_t sector, uint64_t mask, double t) {
  ++counters_.imc_writes;
  const bool whole_line = sectors_ == 1 && mask == ~uint64_t{0};

  if (write_buffer_.capacity() == 0) {
    // No buffer: a partial write reads the media line, merges, writes it back (C3); a whole one just writes.
    double ready = t;
    if (!whole_line) {
      ++counters_.rmw_reads;
      ready = media_read(t);
    }
    read_buffer_.erase(line);  // a cached copy would be stale now
    media_write(ready);
    const double admitted = admission(t);
    return {admitted, order_after_previous_write(line, sector, std::max(ready + write_ns_, admitted))};
  }

  double ready = t;
  if (WriteBufferLine* entry = write_buffer_.touch(line)) {
    ++counters_.write_hits;
    entry->written.add(sector, mask);
    ready = entry->ready_ns;
  } else {
    prefetch_around(line, t);
    if (auto fetched = read_buffer_.erase(line)) {
      ++counters_.write_hits;  // the line is on the DIMM already (read or prefetched): no media read
      ready = fetched->ready_ns;
    } else if (!whole_line) {
      ++counters_.rmw_reads;
      ready = media_read(t);
    }
    WriteBufferLine* slot = nullptr;
    WriteBufferLine fresh;
    fresh.written.add(sector, mask);
    fresh.ready_ns = ready;
    if (auto evicted = write_buffer_.insert(line, fresh, &slot)) media_write(std::max(t, evicted->payload.ready_ns));
  }

  if (write_out_full_) {
    const WriteBufferLine* entry = write_buffer_.find(line);
    if (entry->written.complete(sectors_)) {
      // [PMIdioBench] I7: a completely written XPLine goes to the media at once and leaves the buffer, so a
      // rewrite of it reads the media again.
      media_write(std::max(t, entry->ready_ns));
      write_buffer_.erase(line);
    }
  }
  const double admitted = admission(t);
  return {admitted, order_after_previous_write(line, sector, std::max(std::max(t, ready) + write_ns_, admitted))};
}

double Dimm::read(uint64_t line, double t) {
  ++counters_.imc_reads;
  if (const WriteBufferLine* entry = write_buffer_.find(line)) {
    ++counters_.read_hits;
    return std::max(t + buffer_read_ns_, entry->ready_ns);
  }
  prefetch_around(line, t);
  if (const ReadBufferLine* entry = read_buffer_.touch(line)) {
    ++counters_.read_hits;
    return std::max(t + buffer_read_ns_, entry->ready_ns);
  }
  const double ready = media_read(t);
  if (read_buffer_.capacity() > 0) {
    ReadBufferLine* slot = nullptr;
    read_buffer_.insert(line, ReadBufferLine{ready}, &slot);
  }
  return ready;
}

}  // namespace pmlab::model
