// pmlab::Ptm and the C API's pmlab_ptm: a PtmStore in a pool of layout "ptm", with log slots handed to
// threads per transaction.
#include <pmlab/ptm.hpp>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <thread>

#include "pmlab/api/c_api.hpp"
#include "pmlab/api/errors.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/ptm/store/ptm_store.hpp"

namespace pmlab {
inline namespace v0 {

using api::raise;

namespace {

// Thrown by Transaction::abort(), caught by run(): the body asked to undo the transaction.
struct UserAbort {};

// The log slot this thread ran its last transaction on: tried first by the next one.
thread_local int last_slot = -1;

// This thread, as a slot's holder: the address of one of its thread-local words, never 0 and unique among
// the threads alive.
uintptr_t this_thread_token() noexcept { return reinterpret_cast<uintptr_t>(&last_slot); }

// The PTMs whose transaction bodies this thread is inside, innermost first. Transactions do not nest: a
// run() or session() of one of them from within its body would wait for the slot or the lock the outer
// transaction holds (forever under undo, or with one slot), or commit apart from the transaction around
// it; either way not what the caller meant, so it is refused.
struct OpenBody {
  const void* ptm;
  const OpenBody* outer;
};
thread_local const OpenBody* open_bodies = nullptr;

[[noreturn]] void refuse_nested() {
  raise(PMLAB_E_INVALID_ARGUMENT,
        "a transaction of this PTM is running on this thread, and transactions do not nest: pass its "
        "Transaction to the inner code instead");
}

// Inline: a thread outside every body, the common case, pays one thread-local load.
inline void check_not_nested(const void* ptm) {
  for (const OpenBody* b = open_bodies; b != nullptr; b = b->outer)
    if (b->ptm == ptm) refuse_nested();
}

// Marks this thread as inside a body of `ptm` for the scope's life, refused when it already is.
class InsideBody {
 public:
  explicit InsideBody(const void* ptm) : frame_{ptm, open_bodies} {
    check_not_nested(ptm);
    open_bodies = &frame_;
  }
  ~InsideBody() { open_bodies = frame_.outer; }
  InsideBody(const InsideBody&) = delete;
  InsideBody& operator=(const InsideBody&) = delete;

 private:
  OpenBody frame_;
};

ptm::Heap& heap_of(void* heap) noexcept { return *static_cast<ptm::Heap*>(heap); }

constexpr uint64_t kRootsBegin = offsetof(ptm::HeapHeader, root);
static_assert(Transaction::kRoots == ptm::kRoots);

}  // namespace

struct Ptm::Impl {
  std::unique_ptr<pool::Pool> pool;
  std::unique_ptr<ptm::PtmStore> store;
  // Per log slot, the thread holding it (this_thread_token()), or 0 when it is free.
  std::unique_ptr<std::atomic<uintptr_t>[]> slot_holder;
  int slots = 0;

  ~Impl() {
    if (store) store->quiesce();
  }

  // The store in an open pool of layout "ptm", recovered, with every log slot free.
  static std::unique_ptr<Impl> over(std::unique_ptr<pool::Pool> pool) {
    auto impl = std::make_unique<Impl>();
    impl->pool = std::move(pool);
    auto store = ptm::open_store(*impl->pool);
    if (!store) raise(store.status());
    impl->store = std::move(*store);
    impl->slots = impl->store->options().slots;
    impl->slot_holder = std::make_unique<std::atomic<uintptr_t>[]>(static_cast<size_t>(impl->slots));
    for (int i = 0; i < impl->slots; ++i) impl->slot_holder[i].store(0, std::memory_order_relaxed);
    return impl;
  }

  // A log slot of its own for one transaction: the one this thread had last, when free, else any free one;
  // with every slot taken, the thread waits for one, unless this thread holds them all (in sessions) and
  // would wait for itself.
  int acquire_slot() {
    const uintptr_t me = this_thread_token();
    for (;;) {
      const int start = last_slot >= 0 && last_slot < slots ? last_slot : 0;
      for (int k = 0; k < slots; ++k) {
        const int i = (start + k) % slots;
        uintptr_t expected = 0;
        if (slot_holder[i].load(std::memory_order_relaxed) == 0 &&
            slot_holder[i].compare_exchange_strong(expected, me, std::memory_order_acquire)) {
          last_slot = i;
          return i;
        }
      }
      if (holds_every_slot(me)) {
        check_not_nested(this);  // the slot of a transaction this thread is inside is one of them
        raise(PMLAB_E_INVALID_ARGUMENT, "every log slot of this PTM (" + std::to_string(slots) +
                                            ") is in a session of this thread, which would wait for itself: "
                                            "run on one of them (a session's run), or create the PTM with more");
      }
      std::this_thread::yield();
    }
  }
  void release_slot(int i) noexcept { slot_holder[i].store(0, std::memory_order_release); }

  bool holds_every_slot(uintptr_t me) const noexcept {
    for (int i = 0; i < slots; ++i)
      if (slot_holder[i].load(std::memory_order_relaxed) != me) return false;
    return true;
  }
};

Ptm::Impl& Ptm::self() const { return api::impl_of(impl_, "pmlab::Ptm"); }

Ptm Ptm::create(const std::string& path, uint64_t pool_bytes, const PtmOptions& options) {
  ptm::StoreOptions o;
  if (options.kind != PtmKind::redo && options.kind != PtmKind::undo)
    raise(PMLAB_E_INVALID_ARGUMENT, "unknown PTM kind " + std::to_string(static_cast<int>(options.kind)));
  o.kind = options.kind == PtmKind::undo ? ptm::StoreKind::undo : ptm::StoreKind::redo;
  if (options.threads > static_cast<unsigned>(ptm::kMaxStoreSlots))
    raise(PMLAB_E_INVALID_ARGUMENT, "PTM threads must be 1.." + std::to_string(ptm::kMaxStoreSlots));
  o.slots = static_cast<int>(options.threads);
  o.slot_bytes = options.log_bytes_per_thread;
  auto made = ptm::create_store_pool(path, pool_bytes, o);
  if (!made) raise(made.status());
  return Ptm(Impl::over(std::move(*made)));
}

Ptm Ptm::open(const std::string& path) {
  pool::OpenOptions o;
  o.layout = ptm::kStorePoolLayout;
  auto opened = pool::Pool::open(path, o);
  if (!opened) raise(opened.status());
  return Ptm(Impl::over(std::move(*opened)));
}

Ptm::Ptm(std::unique_ptr<Impl> impl) noexcept : impl_(std::move(impl)) {}
Ptm::Ptm(Ptm&&) noexcept = default;
Ptm& Ptm::operator=(Ptm&&) noexcept = default;
Ptm::~Ptm() = default;

bool Ptm::run_erased(void (*body)(void*, Transaction&), void* state) {
  Impl& impl = self();
  // A run from inside a body of this Ptm is refused by run_on, or, when the outer transaction holds the
  // last free slot, by acquire_slot instead of waiting for it.
  const int slot = impl.acquire_slot();
  struct Release {
    Impl& impl;
    int slot;
    ~Release() { impl.release_slot(slot); }
  } release{impl, slot};
  return run_on(impl, slot, body, state);
}

Ptm::Session Ptm::session() {
  Impl& impl = self();
  check_not_nested(&impl);
  return Session(&impl, impl.acquire_slot());
}

Ptm::Session::~Session() {
  if (impl_ != nullptr) impl_->release_slot(slot_);
}

bool Ptm::run_on(Impl& impl, int slot, void (*body)(void*, Transaction&), void* state) {
  const InsideBody inside(&impl);
  ptm::PtmStore& store = *impl.store;
  ptm::Heap& heap = store.heap();
  try {
    if (ptm::RedoPtm* redo = store.redo()) {
      redo->run(slot, [&](ptm::RedoPtm::Tx& tx) {
        Transaction t(PMLAB_PTM_REDO, &tx, &heap, heap.size());
        body(state, t);
      });
    } else {
      // The undo PTM never abandons an attempt itself; a body may still ask for a rerun (the C API's
      // PMLAB_E_RETRY), which undoes the attempt first.
      for (;;) {
        try {
          store.undo()->run(slot, [&](ptm::UndoPtm::Tx& tx) {
            Transaction t(PMLAB_PTM_UNDO, &tx, &heap, heap.size());
            body(state, t);
          });
          break;
        } catch (const ptm::Abandoned&) {}
      }
    }
  } catch (const UserAbort&) { return false; }
  return true;
}

PtmKind Ptm::kind() const noexcept {
  return impl_ && impl_->store->kind() == ptm::StoreKind::undo ? PtmKind::undo : PtmKind::redo;
}
unsigned Ptm::threads() const noexcept { return impl_ ? static_cast<unsigned>(impl_->slots) : 0; }
const std::string& Ptm::path() const noexcept {
  static const std::string none;
  return impl_ ? impl_->pool->path() : none;
}

PtmStats Ptm::stats() const {
  const Impl& impl = self();
  const ptm::TxCounters c = impl.store->counters();
  PtmStats s;
  s.transactions = c.transactions;
  s.writing = c.writing;
  s.conflicts = c.aborts;
  s.recovered = impl.store->recovered();
  s.heap_bytes = impl.store->heap().size();
  return s;
}

// ----------------------------------------------------------------------------------------- Transaction

namespace {

[[noreturn, gnu::cold, gnu::noinline]] void bad_offset(uint64_t offset, uint64_t heap_bytes) {
  raise(PMLAB_E_INVALID_ARGUMENT, "offset " + std::to_string(offset) + " is not an 8-byte aligned word of the " +
                                      std::to_string(heap_bytes) + "-byte heap");
}

// The heap's words a transaction may name: the root words, and everything past the heap's header. The
// header ends with the roots, so that is one range, checked with one comparison.
static_assert(kRootsBegin + 8 * ptm::kRoots == ptm::kFirstBlock);
uint64_t* word_at(void* heap, uint64_t heap_bytes, uint64_t offset) {
  if (offset % 8 != 0 || offset - kRootsBegin > heap_bytes - 8 - kRootsBegin) [[unlikely]]
    bad_offset(offset, heap_bytes);
  return heap_of(heap).at<uint64_t>(offset);
}

template <class F>
decltype(auto) with_tx(int kind, void* tx, F&& f) {
  if (kind == PMLAB_PTM_REDO) return f(*static_cast<ptm::RedoPtm::Tx*>(tx));
  return f(*static_cast<ptm::UndoPtm::Tx*>(tx));
}

}  // namespace

uint64_t Transaction::read(uint64_t offset) const {
  const uint64_t* word = word_at(heap_, heap_bytes_, offset);
  return with_tx(kind_, tx_, [&](auto& tx) { return tx.read(word); });
}

void Transaction::write(uint64_t offset, uint64_t value) {
  uint64_t* word = word_at(heap_, heap_bytes_, offset);
  with_tx(kind_, tx_, [&](auto& tx) { tx.write(word, value); });
}

void Transaction::read_bytes(uint64_t offset, void* out, size_t size) const {
  if (size == 0) return;
  (void)word_at(heap_, heap_bytes_, offset + ((size - 1) & ~size_t{7}));
  auto* dst = static_cast<unsigned char*>(out);
  for (size_t done = 0; done < size; done += 8) {
    const uint64_t w = read(offset + done);
    std::memcpy(dst + done, &w, size - done < 8 ? size - done : 8);
  }
}

void Transaction::write_bytes(uint64_t offset, const void* data, size_t size) {
  if (size == 0) return;
  (void)word_at(heap_, heap_bytes_, offset + ((size - 1) & ~size_t{7}));
  const auto* src = static_cast<const unsigned char*>(data);
  for (size_t done = 0; done < size; done += 8) {
    uint64_t w = 0;
    std::memcpy(&w, src + done, size - done < 8 ? size - done : 8);
    write(offset + done, w);
  }
}

uint64_t Transaction::alloc(uint64_t size) {
  if (size == 0 || size > heap_bytes_)
    raise(size == 0 ? PMLAB_E_INVALID_ARGUMENT : PMLAB_E_POOL_FULL,
          "cannot allocate " + std::to_string(size) + " bytes in a " + std::to_string(heap_bytes_) + "-byte heap");
  const uint64_t off = with_tx(kind_, tx_, [&](auto& tx) { return tx.alloc(size); });
  if (off == 0)
    raise(PMLAB_E_POOL_FULL,
          "the " + std::to_string(heap_bytes_) + "-byte heap has no free block of " + std::to_string(size) + " bytes");
  return off;
}

void Transaction::free(uint64_t offset) {
  const auto not_a_block = [&] {
    raise(PMLAB_E_INVALID_ARGUMENT, "offset " + std::to_string(offset) + " is not an allocated block");
  };
  if (offset < ptm::kFirstBlock + ptm::kBlockHeader) not_a_block();
  (void)word_at(heap_, heap_bytes_, offset);
  if ((read(offset - ptm::kBlockHeader) & ptm::kAllocated) == 0) not_a_block();
  with_tx(kind_, tx_, [&](auto& tx) { tx.free(offset); });
}

uint64_t Transaction::root(unsigned i) const {
  if (i >= kRoots)
    raise(PMLAB_E_INVALID_ARGUMENT, "root " + std::to_string(i) + " out of range (" + std::to_string(kRoots) + ")");
  return kRootsBegin + 8 * uint64_t{i};
}

void Transaction::abort() { throw UserAbort{}; }

}  // namespace v0
}  // namespace pmlab

// ------------------------------------------------------------------------------------------------ C API

struct pmlab_session {
  pmlab::Ptm::Session session;
};

namespace {

using pmlab::api::tx_call;

// A C body run as one transaction by `run` (Ptm::run or Session::run): 0 once committed, the body's own
// nonzero value after undoing it, or the code of what failed.
template <class Run>
int run_c_body(Run&& run, pmlab_tx_fn body, void* arg) noexcept {
  int rc = PMLAB_OK;
  const int failed = pmlab::api::guarded([&] {
    run([&](pmlab::Transaction& t) {
      pmlab_tx tx{&t, false};
      rc = body(&tx, arg);
      if (tx.doomed || rc == PMLAB_E_RETRY) throw pmlab::ptm::Abandoned{};
      if (rc != PMLAB_OK) t.abort();
    });
  });
  return failed != PMLAB_OK ? failed : rc;
}

}  // namespace

extern "C" {

int pmlab_ptm_create(const char* path, uint64_t pool_bytes, const pmlab_ptm_config* config, pmlab_ptm** ptm) {
  pmlab::PtmOptions o;
  if (config != nullptr) {
    if (const int kind = pmlab::api::c_enum_value(config->kind); kind != 0) o.kind = static_cast<pmlab::PtmKind>(kind);
    if (config->threads != 0) o.threads = config->threads;
    if (config->log_bytes_per_thread != 0) o.log_bytes_per_thread = config->log_bytes_per_thread;
  }
  return pmlab::api::new_handle(path, ptm, [&] { return pmlab::Ptm::create(path, pool_bytes, o); });
}

int pmlab_ptm_open(const char* path, pmlab_ptm** ptm) {
  return pmlab::api::new_handle(path, ptm, [&] { return pmlab::Ptm::open(path); });
}

void pmlab_ptm_close(pmlab_ptm* ptm) { delete ptm; }

int pmlab_ptm_run(pmlab_ptm* ptm, pmlab_tx_fn body, void* arg) {
  if (ptm == nullptr || body == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or body");
  return run_c_body([&](auto&& b) { return ptm->ptm.run(b); }, body, arg);
}

int pmlab_session_open(pmlab_ptm* ptm, pmlab_session** session) {
  if (ptm == nullptr || session == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle");
  *session = nullptr;
  return pmlab::api::guarded([&] { *session = new pmlab_session{ptm->ptm.session()}; });
}

int pmlab_session_run(pmlab_session* session, pmlab_tx_fn body, void* arg) {
  if (session == nullptr || body == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null session or body");
  return run_c_body([&](auto&& b) { return session->session.run(b); }, body, arg);
}

void pmlab_session_close(pmlab_session* session) { delete session; }

int pmlab_tx_read(pmlab_tx* tx, uint64_t offset, uint64_t* value) {
  if (value == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null value");
  *value = 0;
  return tx_call(tx, [&](pmlab::Transaction& t) { *value = t.read(offset); });
}

int pmlab_tx_write(pmlab_tx* tx, uint64_t offset, uint64_t value) {
  return tx_call(tx, [&](pmlab::Transaction& t) { t.write(offset, value); });
}

int pmlab_tx_read_bytes(pmlab_tx* tx, uint64_t offset, void* out, size_t size) {
  if (out == nullptr && size != 0) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null buffer");
  return tx_call(tx, [&](pmlab::Transaction& t) { t.read_bytes(offset, out, size); });
}

int pmlab_tx_write_bytes(pmlab_tx* tx, uint64_t offset, const void* data, size_t size) {
  if (data == nullptr && size != 0) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null buffer");
  return tx_call(tx, [&](pmlab::Transaction& t) { t.write_bytes(offset, data, size); });
}

int pmlab_tx_alloc(pmlab_tx* tx, uint64_t size, uint64_t* offset) {
  if (offset == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null offset");
  *offset = 0;
  return tx_call(tx, [&](pmlab::Transaction& t) { *offset = t.alloc(size); });
}

int pmlab_tx_free(pmlab_tx* tx, uint64_t offset) {
  return tx_call(tx, [&](pmlab::Transaction& t) { t.free(offset); });
}

uint64_t pmlab_tx_root(const pmlab_tx* tx, unsigned i) {
  if (tx == nullptr || i >= PMLAB_PTM_ROOTS) return 0;
  return tx->tx->root(i);
}

int pmlab_ptm_get_stats(const pmlab_ptm* ptm, pmlab_ptm_stats* stats) {
  if (ptm == nullptr || stats == nullptr) return pmlab::api::fail(PMLAB_E_INVALID_ARGUMENT, "null handle or stats");
  return pmlab::api::guarded([&] {
    const pmlab::PtmStats s = ptm->ptm.stats();
    *stats = {s.transactions, s.writing, s.conflicts, s.recovered, s.heap_bytes};
  });
}

}  // extern "C"
