// pmlab::Pool: the engine's pool (pool/pool.hpp) for a layout of the user's own, with its persister behind
// the public vocabulary (persist/public_persister.hpp).
#include <pmlab/pool.hpp>

#include <cctype>
#include <filesystem>
#include <optional>
#include <string>

#include "pmlab/api/errors.hpp"
#include "pmlab/persist/public_persister.hpp"
#include "pmlab/persist/tracing_runtime.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace {

// The engine's observer events, as a user's PersistObserver receives them.
class ObserverAdapter final : public persist::Observer {
 public:
  explicit ObserverAdapter(PersistObserver& user) noexcept : user_(user) {}
  void on_writeback(const void* addr, size_t len, persist::Writeback kind,
                    const std::source_location& where) noexcept override {
    if (runtime_ != nullptr) runtime_->on_writeback(addr, len, kind, where);
    user_.on_writeback(addr, len, kind == persist::Writeback::nt_store, where);
  }
  void on_fence(const std::source_location& where) noexcept override {
    if (runtime_ != nullptr) runtime_->on_fence(where);
    user_.on_fence(where);
  }
  void after_atomic_store(const void* addr, size_t, const std::source_location& where) noexcept override {
    user_.on_atomic_store(addr, where);
  }

 private:
  PersistObserver& user_;
  // Under `pmlab crash exec` the runtime keeps hearing of the pool's persistence while a user observes it.
  persist::Observer* runtime_ = persist::tracing_runtime_observer();
};

}  // namespace

struct Pool::Impl {
  std::unique_ptr<pool::Pool> pool;
  persist::PublicPersister persister;
  std::unique_ptr<ObserverAdapter> observer;

  explicit Impl(std::unique_ptr<pool::Pool> p) : pool(std::move(p)), persister(pool->persister()) {}
};

namespace {

constexpr size_t kMaxLayoutName = 31;  // the header's layout field holds 31 characters and a NUL

// A layout a user may name: printable, short enough for the header, and none of pmlab's own (a pool of
// those is opened by pmlab::Ptm, pmlab::Log, … which know how to recover it).
void check_layout(const std::string& layout) {
  if (layout.empty() || layout.size() > kMaxLayoutName)
    raise(PMLAB_E_INVALID_ARGUMENT, "a layout name has 1 to 31 characters, not " + std::to_string(layout.size()));
  for (const char c : layout)
    if (!std::isgraph(static_cast<unsigned char>(c)))
      raise(PMLAB_E_INVALID_ARGUMENT, "a layout name is printable characters without spaces: '" + layout + "'");
  if (const pool::Layout* own = pool::LayoutRegistry::instance().find(layout))
    raise(PMLAB_E_INVALID_ARGUMENT, "layout '" + layout + "' is pmlab's own (" + own->description + ")");
}

persist::Domain domain_of(Domain d) {
  if (d != Domain::adr && d != Domain::eadr)
    raise(PMLAB_E_INVALID_ARGUMENT, "unknown domain " + std::to_string(static_cast<int>(d)));
  return d == Domain::eadr ? persist::Domain::eadr : persist::Domain::adr;
}

persist::FlushInstruction flush_of(FlushInstruction f) {
  switch (f) {
    case FlushInstruction::clwb: return persist::FlushInstruction::clwb;
    case FlushInstruction::clflushopt: return persist::FlushInstruction::clflushopt;
    case FlushInstruction::clflush: return persist::FlushInstruction::clflush;
    case FlushInstruction::ntstore: return persist::FlushInstruction::ntstore;
  }
  raise(PMLAB_E_INVALID_ARGUMENT, "unknown flush instruction " + std::to_string(static_cast<int>(f)));
}

// What the options ask of the persister, checked before any file is touched; what they leave unset stays
// the mapping's default (its domain, the CPU's best flush, PMLAB_FORCE_*).
struct Asked {
  std::optional<persist::Domain> domain;
  std::optional<persist::FlushInstruction> flush;
};

Asked asked_of(const PoolOptions& options) {
  Asked a;
  if (options.domain) a.domain = domain_of(*options.domain);
  if (options.flush) {
    a.flush = flush_of(*options.flush);
    if (Status st = persist::check_supported(*a.flush, platform::CpuFeatures::host()); !st) raise(st);
  }
  return a;
}

// The pool's persister with what was asked in place of the mapping's choices.
void apply(pool::Pool& p, const Asked& a) {
  if (!a.domain && !a.flush) return;
  persist::Config config = p.persister().config();
  if (a.domain) config.domain = *a.domain;
  if (a.flush) config.flush = *a.flush;
  auto made = persist::Persister::create(config);
  if (!made) raise(made.status());
  p.persister() = *made;
}

}  // namespace

Pool Pool::create(const std::string& path, uint64_t bytes, const std::string& layout, uint32_t layout_version,
                  const PoolOptions& options) {
  check_layout(layout);
  if (layout_version == 0) raise(PMLAB_E_INVALID_ARGUMENT, "a layout version is 1 or more");
  const Asked asked = asked_of(options);
  pool::OpenOptions o;
  o.layout = layout;
  auto made = pool::Pool::create(path, bytes, layout, layout_version, o);
  if (!made) raise(made.status());
  apply(**made, asked);
  return Pool(std::make_unique<Impl>(std::move(*made)), true);
}

Pool Pool::open(const std::string& path, const std::string& layout, const PoolOptions& options) {
  check_layout(layout);
  const Asked asked = asked_of(options);
  pool::OpenOptions o;
  o.layout = layout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  apply(**opened, asked);
  return Pool(std::make_unique<Impl>(std::move(*opened)), false);
}

Pool Pool::open_or_create(const std::string& path, uint64_t bytes, const std::string& layout, uint32_t layout_version,
                          const PoolOptions& options) {
  std::error_code ec;
  if (std::filesystem::exists(path, ec)) return open(path, layout, options);
  return create(path, bytes, layout, layout_version, options);
}

Pool::Pool(std::unique_ptr<Impl> impl, bool created) noexcept : impl_(std::move(impl)), created_(created) {}
Pool::Pool(Pool&&) noexcept = default;
Pool& Pool::operator=(Pool&&) noexcept = default;
Pool::~Pool() = default;

const Pool::Impl& Pool::self() const { return api::impl_of(impl_, "pmlab::Pool"); }

std::byte* Pool::data() const { return self().pool->data(); }
uint64_t Pool::data_size() const { return self().pool->data_size(); }
const Persister& Pool::persister() const { return self().persister; }
const std::string& Pool::path() const { return self().pool->path(); }
uint32_t Pool::layout_version() const { return self().pool->header().layout_version; }
bool Pool::is_pmem() const { return self().pool->medium() == pool::Medium::pmem; }
Domain Pool::domain() const { return self().persister.domain(); }
FlushInstruction Pool::flush() const {
  switch (self().pool->persister().config().flush) {
    case persist::FlushInstruction::clflush: return FlushInstruction::clflush;
    case persist::FlushInstruction::clflushopt: return FlushInstruction::clflushopt;
    case persist::FlushInstruction::ntstore: return FlushInstruction::ntstore;
    case persist::FlushInstruction::clwb: break;
  }
  return FlushInstruction::clwb;
}

void Pool::observe(PersistObserver* observer) {
  Impl& m = api::impl_of(impl_, "pmlab::Pool");
  if (observer == nullptr) {
    m.pool->persister().detach();
    m.observer.reset();
    return;
  }
  auto adapter = std::make_unique<ObserverAdapter>(*observer);
  m.pool->persister().attach(adapter.get());
  m.observer = std::move(adapter);
}

PersistCounters thread_persist_counters() noexcept {
  const persist::Counters c = persist::thread_counters();
  return {c.flushes, c.fences, c.nt_bytes};
}

}  // namespace v0
}  // namespace pmlab
