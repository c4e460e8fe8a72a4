// What every writer shares: geometry, format, open and recovery driver, iteration, truncation, and the
// "log" pool layout.
#include "pmlab/primitives/log/log.hpp"

#include <algorithm>
#include <cassert>
#include <random>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/hash.hpp"
#include "pmlab/common/units.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/pool/structure_layout.hpp"
#include "pmlab/primitives/log/on_media.hpp"
#include "pmlab/primitives/log/writers.hpp"

namespace pmlab::primitives::log {
namespace om = on_media;

namespace {
constexpr auto kKinds = enum_names<Kind>("log writer", {{Kind::classic, "classic"},
                                                        {Kind::header, "header"},
                                                        {Kind::header_dancing, "header-dancing"},
                                                        {Kind::zero, "zero"}});
constexpr auto kStores =
    enum_names<Stores>("log stores", {{Stores::cached, "cached"}, {Stores::streaming, "streaming"}});
}  // namespace

const char* to_string(Kind k) noexcept { return kKinds.name(k); }
Result<Kind> parse_kind(std::string_view text) { return kKinds.parse(text); }

std::string writer_name(Kind k, bool padded) { return std::string(to_string(k)) + (padded ? "-padded" : ""); }

Result<WriterChoice> parse_writer(std::string_view text) {
  constexpr std::string_view kPadded = "-padded";
  const bool padded = text.size() > kPadded.size() && text.substr(text.size() - kPadded.size()) == kPadded;
  auto kind = parse_kind(padded ? text.substr(0, text.size() - kPadded.size()) : text);
  if (!kind) return kind.status();
  return WriterChoice{*kind, padded};
}

const char* to_string(Stores s) noexcept { return kStores.name(s); }
Result<Stores> parse_stores(std::string_view text) { return kStores.parse(text); }

int barriers_per_append(Kind k) noexcept { return k == Kind::zero ? 1 : 2; }

namespace {

uint32_t slots_for(const Options& o) {
  switch (o.kind) {
    case Kind::header: return 1;
    case Kind::header_dancing: return o.dancing_slots;
    default: return 0;
  }
}

WriterMaker maker_for(Kind k) {
  switch (k) {
    case Kind::classic: return make_classic_log;
    case Kind::header: return make_header_log;
    case Kind::header_dancing: return make_dancing_header_log;
    case Kind::zero: return make_zero_log;
  }
  return nullptr;
}

uint64_t fresh_log_id() {
  std::random_device device;
  uint64_t id = (static_cast<uint64_t>(device()) << 32) ^ device() ^ platform::Clock::now();
  return id == 0 ? 1 : id;
}

Status check_options(const Options& o) {
  if (maker_for(o.kind) == nullptr) return error(Errc::invalid_argument, "unknown log writer kind");
  if (o.lanes == 0 || o.lanes > om::kMaxLanes)
    return error(Errc::invalid_argument,
                 "a log has 1 to " + std::to_string(om::kMaxLanes) + " lanes, not " + std::to_string(o.lanes));
  if (o.kind == Kind::header_dancing && (o.dancing_slots == 0 || o.dancing_slots > om::kMaxDancingSlots))
    return error(Errc::invalid_argument, "header-dancing needs 1 to " + std::to_string(om::kMaxDancingSlots) +
                                             " size fields per lane, not " + std::to_string(o.dancing_slots));
  return Status::success();
}

uint64_t data_offset_for(const Options& o) {
  return om::align_up(om::kSlotsOffset + static_cast<uint64_t>(o.lanes) * slots_for(o) * om::kLine, 4096);
}

}  // namespace

Log::Log(std::span<std::byte> region, const persist::Persister& persister, const Options& options,
         const Geometry& geometry)
    : region_(region),
      persister_(persister),
      options_(options),
      geometry_(geometry),
      lane_bytes_(geometry.lane_bytes),
      lanes_(std::make_unique<LaneState[]>(options.lanes)) {}

uint64_t Log::entry_bytes(Kind kind, bool padded, uint64_t payload) noexcept {
  return om::entry_footprint(kind, padded, payload);
}

uint64_t Log::region_bytes(const Options& options, uint64_t lane_bytes) {
  const uint64_t lane = om::align_up(std::max(lane_bytes, om::kMinLaneBytes), 256);
  return data_offset_for(options) + static_cast<uint64_t>(options.lanes) * lane;
}

Result<Geometry> Log::plan(const Options& options, uint64_t region_size) {
  PMLAB_TRY(check_options(options));
  Geometry g;
  g.slots_per_lane = slots_for(options);
  g.slots_offset = om::kSlotsOffset;
  g.data_offset = data_offset_for(options);
  const uint64_t need = region_bytes(options, om::kMinLaneBytes);
  if (region_size < need)
    return error(Errc::invalid_argument, "a region of " + format_size(region_size) + " is too small for a " +
                                             writer_name(options.kind, options.padded) + " log with " +
                                             std::to_string(options.lanes) + " lanes (needs at least " +
                                             format_size(need) + ")");
  // Lanes start on 256-byte boundaries: the media's access unit ([PMemIO] §2.2).
  g.lane_bytes = ((region_size - g.data_offset) / options.lanes) & ~uint64_t{255};
  g.region_bytes = g.data_offset + options.lanes * g.lane_bytes;
  return g;
}

std::unique_ptr<Log> Log::make(std::span<std::byte> region, const persist::Persister& persister, const Options& options,
                               const Geometry& geometry) {
  return maker_for(options.kind)(region, persister, options, geometry);
}

uint64_t* Log::size_slot(uint32_t lane, uint32_t slot) const noexcept {
  const uint64_t index = static_cast<uint64_t>(lane) * geometry_.slots_per_lane + slot;
  return reinterpret_cast<uint64_t*>(region_.data() + geometry_.slots_offset + index * om::kLine);
}

uint64_t Log::first_lsn() const noexcept {
  return persist::Persister::load8(reinterpret_cast<const uint64_t*>(region_.data() + om::kWatermarkOffset));
}

Status Log::no_room(uint32_t lane, Kind kind, uint64_t payload) const {
  // The footprint only of a payload up to the maximum: one near 2^64 would wrap it to a few bytes.
  const uint64_t need = payload <= om::kMaxPayload ? om::entry_footprint(kind, options_.padded, payload) : UINT64_MAX;
  if (need > lane_bytes_)
    return error(Errc::invalid_argument, "a log entry of " + std::to_string(payload) +
                                             " bytes fits no lane of this log (" + std::to_string(lane_bytes_) +
                                             " bytes each, entries up to " + std::to_string(om::kMaxPayload) +
                                             " bytes)");
  return error(Errc::pool_full, "log lane " + std::to_string(lane) + " is full: an entry of " + std::to_string(need) +
                                    " bytes does not fit in the " + std::to_string(lane_bytes_ - lanes_[lane].tail) +
                                    " bytes left of " + std::to_string(lane_bytes_) + " (truncate the log)");
}

Status Log::no_such_lane(uint32_t lane) const {
  return error(Errc::invalid_argument, "log lane " + std::to_string(lane) + " does not exist (the log has " +
                                           std::to_string(options_.lanes) + ")");
}

void Log::store_entry_cached(std::byte* dst, const HeaderWords& head, const void* body, size_t body_len) noexcept {
  constexpr size_t head_len = sizeof head;
  if (options_.kind == Kind::zero) {
    // The count in one store: a count torn byte by byte can equal the bits that persisted of a torn
    // payload. (Other writers' headers are judged by a footer or size field written after them.)
    persister_.store8(reinterpret_cast<uint64_t*>(dst), head[0]);
    std::memcpy(dst + 8, &head[1], 8);
  } else {
    std::memcpy(dst, head.data(), head_len);
  }
  if (persister_.config().flush == persist::FlushInstruction::ntstore && body_len >= om::kLine) {
    std::byte* body_dst = dst + head_len;
    persister_.copy_nt(body_dst, body, body_len);
    // copy_nt wrote back the partial line where the body starts (it holds the head's last bytes too);
    // the head's other lines are written back here.
    const auto start = reinterpret_cast<uintptr_t>(body_dst);
    const uintptr_t head_end = start % om::kLine ? (start & ~(om::kLine - 1)) : start;
    if (head_end > reinterpret_cast<uintptr_t>(dst)) persister_.flush(dst, head_end - reinterpret_cast<uintptr_t>(dst));
    return;
  }
  if (body_len > 0) std::memcpy(dst + head_len, body, body_len);  // an empty payload may have no address
  persister_.flush(dst, head_len + body_len);
}

void Log::store_entry_word(uint32_t lane, uint64_t* word, uint64_t value) noexcept {
  if (options_.stores == Stores::streaming) {
    // x86 stores an aligned 8-byte part of a non-temporal line atomically, as it does a cached store.
    stream_entry(lane, reinterpret_cast<std::byte*>(word), &value, 1, nullptr, 0);
    return;
  }
  // A plain store: the word is compared whole with what the entry implies (a classic footer with its
  // tag), so a torn word never passes for a written one.
  std::memcpy(word, &value, sizeof value);
  persister_.flush(word, sizeof *word);
}

void Log::store_size_field(uint64_t* field, uint64_t value) const noexcept {
  if (options_.stores == Stores::streaming) {
    persister_.store_word_line(field, value);
    return;
  }
  persister_.store8(field, value);
  persister_.flush(field, sizeof *field);
}

void Log::remember_tail_line(uint32_t lane) noexcept {
  LaneState& s = lanes_[lane];
  s.tail_line_offset = s.tail & ~(om::kLine - 1);
  s.tail_line.fill(std::byte{0});
  std::memcpy(s.tail_line.data(), lane_data(lane) + s.tail_line_offset, s.tail - s.tail_line_offset);
}

bool Log::walk(uint32_t lane, uint64_t end, const std::function<void(uint64_t, const Entry&)>& visit) const {
  const std::byte* data = lane_data(lane);
  uint64_t offset = 0;
  while (offset < end) {
    if (end - offset < sizeof(om::EntryHeader)) return false;
    om::EntryHeader h;
    std::memcpy(&h, data + offset, sizeof h);
    const uint64_t bytes = entry_bytes(options_.kind, options_.padded, h.size);
    if (h.size > om::kMaxPayload || bytes > end - offset) return false;
    visit(offset, Entry{h.lsn, lane, {data + offset + sizeof h, h.size}});
    offset += bytes;
  }
  return true;
}

Result<std::unique_ptr<Log>> Log::format(std::span<std::byte> region, const persist::Persister& persister,
                                         const Options& options) {
  PMLAB_TRY(pool::check_region_aligned(region, om::kLine, "log"));
  if (options.first_lsn == 0) return error(Errc::invalid_argument, "a log's first LSN must be at least 1");
  auto planned = plan(options, region.size());
  if (!planned) return planned.status();
  Geometry g = *planned;
  g.log_id = options.log_id != 0 ? options.log_id : fresh_log_id();

  std::unique_ptr<Log> log = make(region, persister, options, g);
  log->next_lsn_.store(options.first_lsn, std::memory_order_relaxed);
  const om::Superblock formatted{.magic = 0,
                                 .version = om::kVersion,
                                 .kind = static_cast<uint8_t>(options.kind),
                                 .padded = static_cast<uint8_t>(options.padded ? 1 : 0),
                                 .reserved = 0,
                                 .lanes = options.lanes,
                                 .slots_per_lane = g.slots_per_lane,
                                 .lane_bytes = g.lane_bytes,
                                 .data_offset = g.data_offset,
                                 .log_id = g.log_id,
                                 .region_bytes = g.region_bytes,
                                 .checksum = 0};  // the magic and the checksum are format_behind_magic's to set
  pool::format_behind_magic(reinterpret_cast<om::Superblock*>(region.data()), formatted, om::kMagic, persister, [&] {
    bool wrote = persister.store_changed(region.data() + om::kWatermarkOffset, &options.first_lsn, 8) > 0;
    wrote = persister.zero_changed(region.data() + g.slots_offset, g.data_offset - g.slots_offset) > 0 || wrote;
    return log->prepare_format() || wrote;
  });
  return log;
}

Result<std::unique_ptr<Log>> Log::load(std::span<std::byte> region, const persist::Persister& persister,
                                       Stores stores) {
  auto read =
      pool::read_superblock<om::Superblock>(region, "log", om::kSlotsOffset, om::kLine, om::kMagic, om::kVersion);
  if (!read) return read.status();
  const om::Superblock& sb = *read;
  Options o;
  o.kind = static_cast<Kind>(sb.kind);
  o.padded = sb.padded != 0;
  o.lanes = sb.lanes;
  o.stores = stores;
  o.dancing_slots = o.kind == Kind::header_dancing ? sb.slots_per_lane : Options{}.dancing_slots;
  if (maker_for(o.kind) == nullptr || sb.padded > 1)
    return error(Errc::corrupted, "log superblock names an unknown writer (" + std::to_string(sb.kind) + ")");
  if (Status s = check_options(o); !s) return error(Errc::corrupted, "log superblock: " + s.message());
  Geometry g{sb.slots_per_lane, om::kSlotsOffset, sb.data_offset, sb.lane_bytes, sb.region_bytes, sb.log_id};
  const bool consistent = g.slots_per_lane == slots_for(o) && g.data_offset == data_offset_for(o) &&
                          g.lane_bytes >= om::kMinLaneBytes && g.lane_bytes % 256 == 0 &&
                          g.region_bytes == g.data_offset + o.lanes * g.lane_bytes;
  if (!consistent) return error(Errc::corrupted, "log superblock geometry is inconsistent");
  if (g.region_bytes > region.size())
    return error(Errc::corrupted, "the log needs " + std::to_string(g.region_bytes) + " bytes but its region has " +
                                      std::to_string(region.size()) + " (truncated?)");
  return make(region, persister, o, g);
}

Result<std::unique_ptr<Log>> Log::open(std::span<std::byte> region, const persist::Persister& persister,
                                       Stores stores) {
  auto log = load(region, persister, stores);
  if (!log) return log.status();
  PMLAB_TRY((*log)->recover(true));
  return log;
}

Status Log::check(std::span<const std::byte> region) {
  static const persist::Persister no_writes = persist::Persister::volatile_memory();
  // Recovery with repair off only reads.
  std::span<std::byte> view(const_cast<std::byte*>(region.data()), region.size());
  auto log = load(view, no_writes, Stores::cached);
  if (!log) return log.status();
  return (*log)->recover(false);
}

Status Log::recover(bool repair) {
  recovery_ = {};
  recovery_wrote_ = false;
  uint64_t max_lsn = 0;
  for (uint32_t lane = 0; lane < options_.lanes; ++lane) {
    lanes_[lane] = LaneState{};
    PMLAB_TRY(recover_lane(lane, repair));
    remember_tail_line(lane);
    max_lsn = std::max(max_lsn, lanes_[lane].last_lsn);
  }
  // Whatever recover_lane wrote back (torn tails zeroed, stale lanes reset); a recovery that found nothing to
  // repair has nothing to order, and a fence then would be an empty one in every open.
  if (repair && recovery_wrote_) persister_.fence();
  const uint64_t next = std::max(first_lsn(), max_lsn + 1);
  next_lsn_.store(next, std::memory_order_relaxed);
  recovery_.next_lsn = next;
  return Status::success();
}

std::vector<Entry> Log::entries() const {
  std::vector<Entry> out;
  const uint64_t floor = first_lsn();  // a lane's entries below it, a partial truncation's, are discarded
  for (uint32_t lane = 0; lane < options_.lanes; ++lane)
    walk(lane, lanes_[lane].tail, [&](uint64_t, const Entry& e) {
      if (e.lsn >= floor) out.push_back(e);
    });
  std::sort(out.begin(), out.end(), [](const Entry& a, const Entry& b) { return a.lsn < b.lsn; });
  return out;
}

void Log::for_each(const std::function<void(const Entry&)>& visit) const {
  for (const Entry& e : entries()) visit(e);
}

Status Log::truncate() { return truncate_before(next_lsn_.load(std::memory_order_relaxed)); }

Status Log::truncate_before(uint64_t lsn) {
  const uint64_t next = next_lsn_.load(std::memory_order_relaxed);
  if (lsn > next)
    return error(Errc::invalid_argument, "cannot truncate the log before LSN " + std::to_string(lsn) +
                                             ": the next append's is " + std::to_string(next));
  lsn = std::max(lsn, first_lsn());
  // One word decides: once the watermark is durable every older entry is gone, whatever the lanes say.
  // Its bytes must not tear: a mix of the old and the new watermark can lie above entries it must keep
  // (a partial truncation's, when the watermark crosses 2^32: the new high half over the old low half).
  auto* watermark = reinterpret_cast<uint64_t*>(region_.data() + om::kWatermarkOffset);
  persister_.store8(watermark, lsn);
  persister_.persist(watermark, 8);
  // Writers that empty their lanes do so after the watermark is durable (a crash mid-way must not take
  // entries the watermark does not yet disown), and make it durable before the next append. A lane that
  // keeps an entry keeps its discarded ones too: recovery and iteration skip them by the watermark.
  bool emptied = false;
  for (uint32_t lane = 0; lane < options_.lanes; ++lane) {
    if (lanes_[lane].last_lsn >= lsn) continue;
    if (rewrites_lanes()) reset_lane(lane);
    lanes_[lane] = LaneState{};
    emptied = true;
  }
  if (emptied && rewrites_lanes()) persister_.fence();
  return Status::success();
}

// --------------------------------------------------------------------------- the "log" pool layout

Result<std::unique_ptr<pool::Pool>> create_pool(const std::string& path, uint64_t size, const Options& options) {
  return pool::create_structure_pool<Log>(path, size, kPoolLayout, options);
}

Result<std::unique_ptr<Log>> open_in_pool(pool::Pool& pool) { return pool::open_structure<Log>(pool, kPoolLayout); }

namespace {
[[maybe_unused]] const bool pool_layout_registered = pool::register_structure_layout<Log>(
    kPoolLayout, "failure-atomic log (classic, header, header-dancing or zero writer; primitives/log)");
}  // namespace

}  // namespace pmlab::primitives::log
