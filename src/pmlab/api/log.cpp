// pmlab::Log and the C API's pmlab_log: a primitives::log::Log in a pool of layout "log".
#include <pmlab/log.hpp>

#include <memory>
#include <string>

#include "pmlab/api/errors.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/primitives/log/log.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace plog = primitives::log;

struct Log::Impl {
  std::unique_ptr<pool::Pool> pool;
  std::unique_ptr<plog::Log> log;
};

Log::Impl& Log::self() const { return api::impl_of(impl_, "pmlab::Log"); }

Log Log::create(const std::string& path, uint64_t pool_bytes, const LogOptions& options) {
  auto writer = plog::parse_writer(options.writer);
  if (!writer) raise(writer.status());
  if (options.lanes == 0) raise(PMLAB_E_INVALID_ARGUMENT, "a log needs one lane at least");
  plog::Options o;
  o.kind = writer->kind;
  o.padded = writer->padded;
  o.lanes = options.lanes;
  o.stores = options.streaming ? plog::Stores::streaming : plog::Stores::cached;
  auto made = plog::create_pool(path, pool_bytes, o);
  if (!made) raise(made.status());
  auto impl = std::make_unique<Impl>();
  impl->pool = std::move(*made);
  // The pool's log as this process appends to it (the stores choice is not on the media).
  auto log = plog::Log::open({impl->pool->data(), impl->pool->data_size()}, impl->pool->persister(), o.stores);
  if (!log) raise(log.status());
  impl->log = std::move(*log);
  return Log(std::move(impl));
}

Log Log::open(const std::string& path, bool streaming) {
  pool::OpenOptions o;
  o.layout = plog::kPoolLayout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  auto impl = std::make_unique<Impl>();
  impl->pool = std::move(*opened);
  auto log = plog::Log::open({impl->pool->data(), impl->pool->data_size()}, impl->pool->persister(),
                             streaming ? plog::Stores::streaming : plog::Stores::cached);
  if (!log) raise(log.status());
  impl->log = std::move(*log);
  return Log(std::move(impl));
}

Log::Log(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Log::Log(Log&&) noexcept = default;
Log& Log::operator=(Log&&) noexcept = default;
Log::~Log() = default;

uint64_t Log::append(unsigned lane, const void* data, size_t size) {
  auto lsn = self().log->append(lane, data, size);
  if (!lsn) [[unlikely]]
    raise(lsn.status());
  return *lsn;
}

void Log::for_each_erased(void (*visit)(void*, const LogEntry&), void* state) const {
  self().log->for_each([&](const plog::Entry& e) {
    const LogEntry entry{e.lsn, e.lane, e.payload.data(), e.payload.size()};
    visit(state, entry);
  });
}

void Log::truncate() {
  if (Status s = self().log->truncate(); !s) raise(s);
}

void Log::truncate_before(uint64_t lsn) {
  if (Status s = self().log->truncate_before(lsn); !s) raise(s);
}

std::string Log::writer() const { return self().log->name(); }

uint64_t Log::lane_used(unsigned lane) const noexcept { return impl_ ? impl_->log->lane_used(lane) : 0; }

LogStats Log::stats() const noexcept {
  LogStats s;
  if (!impl_) return s;
  s.lanes = impl_->log->lanes();
  s.lane_capacity = impl_->log->lane_capacity();
  s.recovered = impl_->log->recovery().entries;
  s.torn_tails = impl_->log->recovery().torn_tails;
  return s;
}

const std::string& Log::path() const noexcept {
  static const std::string none;
  return impl_ ? impl_->pool->path() : none;
}

}  // namespace v0
}  // namespace pmlab

// ------------------------------------------------------------------------------------------------ C API

struct pmlab_log {
  pmlab::Log log;
};

extern "C" {

int pmlab_log_create(const char* path, uint64_t pool_bytes, const pmlab_log_config* config, pmlab_log** log) {
  pmlab::LogOptions o;
  if (config != nullptr) {
    if (config->writer != nullptr) o.writer = config->writer;
    if (config->lanes != 0) o.lanes = config->lanes;
  }
  return pmlab::api::new_handle(path, log, [&] { return pmlab::Log::create(path, pool_bytes, o); });
}

int pmlab_log_open(const char* path, pmlab_log** log) {
  return pmlab::api::new_handle(path, log, [&] { return pmlab::Log::open(path); });
}

void pmlab_log_close(pmlab_log* log) { delete log; }

int pmlab_log_append(pmlab_log* log, unsigned lane, const void* data, size_t size, uint64_t* lsn) {
  if (log == nullptr || (data == nullptr && size != 0))
    return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or data");
  return pmlab::api::guarded([&] {
    const uint64_t n = log->log.append(lane, data, size);
    if (lsn != nullptr) *lsn = n;
  });
}

int pmlab_log_foreach(const pmlab_log* log, pmlab_log_visit_fn visit, void* arg) {
  if (log == nullptr || visit == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or visitor");
  try {
    log->log.for_each([&](const pmlab::LogEntry& e) {
      if (const int rc = visit(e.lsn, e.lane, e.data, e.size, arg); rc != 0) throw pmlab::api::VisitorStopped{rc};
    });
    return PMLAB_OK;
  } catch (const pmlab::api::VisitorStopped& stopped) { return stopped.rc; } catch (...) {
    return pmlab::api::fail_current_exception();
  }
}

int pmlab_log_truncate(pmlab_log* log) {
  if (log == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle");
  return pmlab::api::guarded([&] { log->log.truncate(); });
}

int pmlab_log_truncate_before(pmlab_log* log, uint64_t lsn) {
  if (log == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle");
  return pmlab::api::guarded([&] { log->log.truncate_before(lsn); });
}

int pmlab_log_get_stats(const pmlab_log* log, pmlab_log_stats* stats) {
  if (log == nullptr || stats == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or stats");
  const pmlab::LogStats s = log->log.stats();
  *stats = {s.lanes, s.lane_capacity, s.recovered, s.torn_tails};
  return PMLAB_OK;
}

uint64_t pmlab_log_lane_used(const pmlab_log* log, unsigned lane) {
  return log == nullptr ? 0 : log->log.lane_used(lane);
}

}  // extern "C"
