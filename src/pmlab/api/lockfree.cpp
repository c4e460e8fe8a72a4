// pmlab::Set and pmlab::Ring: the lock-free set designs (lockfree/list) and the persistent ring
// (lockfree/ring) in pool files of layouts "lockfree-set" and "lockfree-ring", their region the pool's
// data area. Each region's root names its design, so open finds which one to recover.
#include <pmlab/lockfree.hpp>

#include <algorithm>
#include <memory>
#include <string>

#include "pmlab/api/errors.hpp"
#include "pmlab/lockfree/list/layout.hpp"
#include "pmlab/lockfree/list/linked_list.hpp"
#include "pmlab/lockfree/list/linkfree_list.hpp"
#include "pmlab/lockfree/list/set.hpp"
#include "pmlab/lockfree/list/soft_list.hpp"
#include "pmlab/lockfree/ring/ring_buffer.hpp"
#include "pmlab/pool/header.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace {

constexpr const char* kSetLayout = "lockfree-set";
constexpr const char* kRingLayout = "lockfree-ring";
constexpr unsigned kMaxThreads = 64;

// A pool of `data_bytes` of data, rounded up to whole pages, and no smaller than any pool.
uint64_t pool_bytes_for(uint64_t data_bytes) {
  return std::max(pool::kMinPoolSize, pool::kHeaderSize + ((data_bytes + 4095) & ~uint64_t{4095}));
}

std::unique_ptr<pool::Pool> open_pool(const std::string& path, const char* layout) {
  pool::OpenOptions o;
  o.layout = layout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  return std::move(*opened);
}

// A design correct under eADR only, on a pool whose domain is not eADR, is refused.
Status domain_carries(const pool::Pool& p, const std::vector<persist::Domain>& claimed, const char* design) {
  for (const persist::Domain d : claimed)
    if (d == p.persister().domain()) return Status::success();
  return error(Errc::unsupported, std::string(design) + " is correct only under eADR; " + p.path() +
                                      " is mapped with domain " + persist::to_string(p.persister().domain()));
}
void require_domain(const pool::Pool& p, const std::vector<persist::Domain>& claimed, const char* design) {
  if (Status st = domain_carries(p, claimed, design); !st.ok()) raise(st);
}

void check_threads(unsigned threads, const char* what) {
  if (threads < 1 || threads > kMaxThreads)
    raise(PMLAB_E_INVALID_ARGUMENT, std::string(what) + " threads must be 1.." + std::to_string(kMaxThreads));
}

// A new pool of `layout` at `path` for `data_bytes`, whose domain carries `design`; formatted by
// `format(pool)`. No file is left behind when either fails.
template <class Format>
std::unique_ptr<pool::Pool> new_pool(const std::string& path, uint64_t data_bytes, const char* layout,
                                     const std::vector<persist::Domain>& claimed, const char* design, Format&& format) {
  auto made = pool::Pool::create(path, pool_bytes_for(data_bytes), layout, 1, {}, [&](pool::Pool& p) -> Status {
    Status st = domain_carries(p, claimed, design);
    return st.ok() ? format(p) : st;
  });
  if (!made) raise(made.status());
  return std::move(*made);
}

void check_thread(unsigned thread, unsigned threads) {
  if (thread >= threads)
    raise(PMLAB_E_INVALID_ARGUMENT,
          "thread index " + std::to_string(thread) + " out of range (" + std::to_string(threads) + " threads)");
}

// ------------------------------------------------------------------------------------------------- set

class SetOps {
 public:
  virtual ~SetOps() = default;
  virtual Status format(uint32_t capacity, int threads) = 0;
  virtual Status recover() = 0;
  virtual lockfree::InsertOutcome try_insert(int tid, uint64_t key) = 0;
  virtual bool insert(int tid, uint64_t key) = 0;  // with the design's back-pressure on a full slab
  virtual bool remove(int tid, uint64_t key) = 0;
  virtual bool contains(int tid, uint64_t key) = 0;
  virtual std::vector<uint64_t> keys() const = 0;
  virtual Status check() = 0;
};

template <class L>
class SetOf final : public SetOps {
 public:
  SetOf(std::byte* base, size_t size, const persist::Persister& p) : list_(base, size, p) {}
  Status format(uint32_t capacity, int threads) override { return list_.format(capacity, threads); }
  Status recover() override { return list_.recover(); }
  lockfree::InsertOutcome try_insert(int tid, uint64_t key) override { return list_.try_insert(tid, key); }
  bool insert(int tid, uint64_t key) override { return list_.insert(tid, key); }
  bool remove(int tid, uint64_t key) override { return list_.remove(tid, key); }
  bool contains(int tid, uint64_t key) override { return list_.contains(tid, key); }
  std::vector<uint64_t> keys() const override { return list_.keys(); }
  Status check() override { return list_.check(); }

 private:
  L list_;
};

lockfree::ListDesign list_design(SetDesign d) {
  switch (d) {
    case SetDesign::linkfree: return lockfree::ListDesign::linkfree;
    case SetDesign::soft: return lockfree::ListDesign::soft;
    case SetDesign::tlog: return lockfree::ListDesign::tlog;
    case SetDesign::logfree: return lockfree::ListDesign::logfree;
  }
  raise(PMLAB_E_INVALID_ARGUMENT, "unknown set design " + std::to_string(static_cast<int>(d)));
}

std::unique_ptr<SetOps> set_ops(lockfree::ListDesign d, pool::Pool& p) {
  std::byte* base = p.data();
  const size_t size = p.data_size();
  using lockfree::ListDesign;
  switch (d) {
    case ListDesign::linkfree: return std::make_unique<SetOf<lockfree::LinkFreeList>>(base, size, p.persister());
    case ListDesign::soft: return std::make_unique<SetOf<lockfree::SoftList>>(base, size, p.persister());
    case ListDesign::tlog:
      return std::make_unique<SetOf<lockfree::LinkedList<ListDesign::tlog>>>(base, size, p.persister());
    case ListDesign::logfree:
      return std::make_unique<SetOf<lockfree::LinkedList<ListDesign::logfree>>>(base, size, p.persister());
    case ListDesign::volatile_harris: break;
  }
  raise(PMLAB_E_CORRUPTED, p.path() + " holds a set of a design the library does not open");
}

// The set in an open pool of its layout, recovered.
std::unique_ptr<SetOps> recovered_set(pool::Pool& p, SetOptions* options) {
  const lockfree::list_layout::Root& root = lockfree::list_layout::root_of(p.data());
  if (p.data_size() < sizeof(root) || root.magic != lockfree::list_layout::kListMagic)
    raise(PMLAB_E_CORRUPTED, p.path() + " holds no set");
  const auto design = static_cast<lockfree::ListDesign>(root.design);
  auto ops = set_ops(design, p);
  require_domain(p, lockfree::claimed_domains(design), lockfree::to_string(design));
  if (Status st = ops->recover(); !st.ok()) raise(st);
  if (options != nullptr) {
    for (const SetDesign d : {SetDesign::linkfree, SetDesign::soft, SetDesign::tlog, SetDesign::logfree})
      if (list_design(d) == design) options->design = d;
    options->threads = static_cast<unsigned>(root.max_threads);
    options->capacity = static_cast<uint32_t>(root.capacity);
  }
  return ops;
}

// -------------------------------------------------------------------------------------------- ring

lockfree::RingDesign ring_design(RingDesign d) {
  if (d == RingDesign::tx) return lockfree::RingDesign::tx;
  if (d == RingDesign::txfree) return lockfree::RingDesign::txfree;
  raise(PMLAB_E_INVALID_ARGUMENT, "unknown ring design " + std::to_string(static_cast<int>(d)));
}

// The ring in an open pool of its layout, recovered.
std::unique_ptr<lockfree::RingBuffer> recovered_ring(pool::Pool& p) {
  const auto design = lockfree::RingBuffer::design_of(p.data(), p.data_size());
  if (!design || *design == lockfree::RingDesign::volatile_ring) raise(PMLAB_E_CORRUPTED, p.path() + " holds no ring");
  require_domain(p, lockfree::claimed_domains(*design), lockfree::to_string(*design));
  auto ring = std::make_unique<lockfree::RingBuffer>(*design, p.data(), p.data_size(), p.persister());
  if (Status st = ring->recover({}); !st.ok()) raise(st);
  return ring;
}

// What `recover` threw, as the pool layer's Status.
template <class F>
Status status_of(F&& recover) {
  try {
    recover();
    return Status::success();
  } catch (const Error& e) { return error(Errc::corrupted, e.what()); }
}

// `pmlab pool check` reads without changing: the root that recovery would trust (the nodes and slots are
// validated by recovery itself, which rebuilds what it needs).
[[maybe_unused]] const bool set_layout_registered = pool::LayoutRegistry::instance().add(
    {kSetLayout, 1, "lock-free persistent set (pmlab::Set: link-free, SOFT, TLog or log-free list)",
     [](pool::Pool& p) { return status_of([&] { (void)recovered_set(p, nullptr); }); },
     [](const pool::Pool& p) -> Status {
       if (p.data_size() < sizeof(lockfree::list_layout::Root)) return error(Errc::corrupted, "no room for a set");
       const uint64_t design = lockfree::list_layout::root_of(p.data()).design;
       return lockfree::list_layout::check_root(p.data(), p.data_size(), design, "lock-free set");
     }});
[[maybe_unused]] const bool ring_layout_registered = pool::LayoutRegistry::instance().add(
    {kRingLayout, 1, "lock-free persistent MPMC ring (pmlab::Ring: tx or txfree)",
     [](pool::Pool& p) { return status_of([&] { (void)recovered_ring(p); }); },
     [](const pool::Pool& p) -> Status { return lockfree::RingBuffer::check_root_of(p.data(), p.data_size()); }});

}  // namespace

// ------------------------------------------------------------------------------------------------- Set

struct Set::Impl {
  std::unique_ptr<pool::Pool> pool;
  std::unique_ptr<SetOps> ops;
  SetOptions options;
};

Set::Set(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Set::Set(Set&&) noexcept = default;
Set& Set::operator=(Set&&) noexcept = default;
Set::~Set() = default;

Set::Impl& Set::self() const { return api::impl_of(impl_, "pmlab::Set"); }

Set Set::create(const std::string& path, const SetOptions& options) {
  const lockfree::ListDesign design = list_design(options.design);
  check_threads(options.threads, "set");
  if (options.capacity < 1) raise(PMLAB_E_INVALID_ARGUMENT, "a set's capacity must be at least 1 key");
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->pool = new_pool(path, lockfree::list_layout::bytes_needed(options.capacity, static_cast<int>(options.threads)),
                        kSetLayout, lockfree::claimed_domains(design), lockfree::to_string(design), [&](pool::Pool& p) {
                          impl->ops = set_ops(design, p);
                          const Status st = impl->ops->format(options.capacity, static_cast<int>(options.threads));
                          if (!st.ok()) impl->ops.reset();
                          return st;
                        });
  return Set(std::move(impl));
}

Set Set::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->pool = open_pool(path, kSetLayout);
  impl->ops = recovered_set(*impl->pool, &impl->options);
  return Set(std::move(impl));
}

namespace {
void check_key(uint64_t key) {
  if (key < 1 || key > Set::kMaxKey)
    raise(PMLAB_E_INVALID_ARGUMENT, "set key " + std::to_string(key) + " outside 1.." + std::to_string(Set::kMaxKey));
}
}  // namespace

bool Set::insert(unsigned thread, uint64_t key) {
  Impl& s = self();
  check_thread(thread, s.options.threads);
  check_key(key);
  const int tid = static_cast<int>(thread);
  lockfree::InsertOutcome o = s.ops->try_insert(tid, key);
  // A full slab may be nodes waiting for reclamation: the design's insert waits for them, then one more
  // attempt tells a full set from a key another thread inserted meanwhile.
  if (o == lockfree::InsertOutcome::no_space)
    o = s.ops->insert(tid, key) ? lockfree::InsertOutcome::inserted : s.ops->try_insert(tid, key);
  if (o == lockfree::InsertOutcome::no_space)
    raise(PMLAB_E_POOL_FULL, "the set holds its capacity of " + std::to_string(s.options.capacity) + " keys");
  return o == lockfree::InsertOutcome::inserted;
}

bool Set::remove(unsigned thread, uint64_t key) {
  Impl& s = self();
  check_thread(thread, s.options.threads);
  check_key(key);
  return s.ops->remove(static_cast<int>(thread), key);
}

bool Set::contains(unsigned thread, uint64_t key) {
  Impl& s = self();
  check_thread(thread, s.options.threads);
  check_key(key);
  return s.ops->contains(static_cast<int>(thread), key);
}

std::vector<uint64_t> Set::keys() const { return self().ops->keys(); }

void Set::check() const {
  if (Status st = self().ops->check(); !st.ok()) raise(PMLAB_E_CORRUPTED, st.message());
}

SetDesign Set::design() const noexcept { return impl_ ? impl_->options.design : SetDesign::linkfree; }
unsigned Set::threads() const noexcept { return impl_ ? impl_->options.threads : 0; }
uint32_t Set::capacity() const noexcept { return impl_ ? impl_->options.capacity : 0; }

// ------------------------------------------------------------------------------------------------ Ring

struct Ring::Impl {
  std::unique_ptr<pool::Pool> pool;
  std::unique_ptr<lockfree::RingBuffer> ring;
};

Ring::Ring(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Ring::Ring(Ring&&) noexcept = default;
Ring& Ring::operator=(Ring&&) noexcept = default;
Ring::~Ring() = default;

Ring::Impl& Ring::self() const { return api::impl_of(impl_, "pmlab::Ring"); }

Ring Ring::create(const std::string& path, const RingOptions& options) {
  const lockfree::RingDesign design = ring_design(options.design);
  check_threads(options.threads, "ring");
  if (options.record_bytes < 1 || options.record_bytes > (1u << 24))
    raise(PMLAB_E_INVALID_ARGUMENT, "ring records must be 1 byte .. 16 MiB");
  if (options.capacity < 2 || (options.capacity & (options.capacity - 1)) != 0)
    raise(PMLAB_E_INVALID_ARGUMENT, "a ring's capacity must be a power of two, at least 2");
  auto impl = std::make_unique<Impl>();
  const uint64_t data =
      lockfree::RingBuffer::bytes_needed(options.capacity, options.record_bytes, static_cast<int>(options.threads));
  impl->pool = new_pool(
      path, data, kRingLayout, lockfree::claimed_domains(design), lockfree::to_string(design), [&](pool::Pool& p) {
        impl->ring = std::make_unique<lockfree::RingBuffer>(design, p.data(), p.data_size(), p.persister());
        lockfree::RingOptions o;
        o.max_threads = static_cast<int>(options.threads);
        const Status st = impl->ring->format(options.capacity, options.record_bytes, o);
        if (!st.ok()) impl->ring.reset();
        return st;
      });
  return Ring(std::move(impl));
}

Ring Ring::open(const std::string& path) {
  auto impl = std::make_unique<Impl>();
  impl->pool = open_pool(path, kRingLayout);
  impl->ring = recovered_ring(*impl->pool);
  return Ring(std::move(impl));
}

void Ring::push(unsigned thread, const void* record) {
  Impl& r = self();
  check_thread(thread, threads());
  r.ring->push(static_cast<int>(thread), record);
}

void Ring::pop(unsigned thread, void* out) {
  Impl& r = self();
  check_thread(thread, threads());
  r.ring->pop(static_cast<int>(thread), out);
}

uint64_t Ring::size() const { return self().ring->size(); }

RingDesign Ring::design() const noexcept {
  return impl_ && impl_->ring->design() == lockfree::RingDesign::txfree ? RingDesign::txfree : RingDesign::tx;
}
unsigned Ring::threads() const noexcept { return impl_ ? static_cast<unsigned>(impl_->ring->threads()) : 0; }
uint32_t Ring::capacity() const noexcept { return impl_ ? impl_->ring->capacity() : 0; }
uint32_t Ring::record_bytes() const noexcept { return impl_ ? impl_->ring->slot_bytes() : 0; }

}  // namespace v0
}  // namespace pmlab
