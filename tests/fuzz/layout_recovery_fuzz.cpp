// Every registered pool layout's recovery and checker on an arbitrary image: the fuzzer's bytes are
// written over a formatted pool's data area, then the layout's recover and check must return a Status,
// never crash, hang, or touch memory outside the data area.
//
// Outside is watched two ways: the mapping has inaccessible guard pages on both sides (a stray access
// faults), and the pool's header must be unchanged afterwards (recovery owns only the data area).
//
// Input: one byte choosing the image (a layout and a configuration of it, with some records in it; the
// library's heap, tree, sets and ring are made through its public API), then bytes XORed onto the data
// area from its start, where every layout keeps its superblock and metadata: zeros keep the formatted
// image, so mutations start from a real one.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include <pmlab/lockfree.hpp>
#include <pmlab/map.hpp>
#include <pmlab/ptm.hpp>
#include <pmlab/tree.hpp>

#include "fuzz_support.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"
#include "pmlab/primitives/log/log.hpp"
#include "pmlab/primitives/page/page_store.hpp"

using namespace pmlab;

namespace {

constexpr uint64_t kPoolSize = 1ULL << 20;

struct Image {
  std::unique_ptr<pool::Pool> pool;
  const pool::Layout* layout = nullptr;
  std::vector<std::byte> pristine;  // the whole pool as formatted
};

// Key `i` as the library's 8-byte keys: its bytes, in memory order.
std::string_view key(const uint64_t& i) { return {reinterpret_cast<const char*>(&i), sizeof i}; }

[[noreturn]] void harness_failure(const char* what) {
  std::fprintf(stderr, "pmlab fuzz: %s\n", what);
  std::abort();
}

// Inaccessible pages right before and after the mapping, placed only where nothing is mapped.
void guard(std::byte* base, uint64_t size) {
  const long page = sysconf(_SC_PAGESIZE);
  for (std::byte* at : {base - page, base + size}) {
    void* g = mmap(at, static_cast<size_t>(page), PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (g != at) harness_failure("cannot place a guard page beside the pool mapping");
  }
}

void add(std::vector<Image>& images, Result<std::unique_ptr<pool::Pool>> made) {
  if (!made) harness_failure(made.status().message().c_str());
  Image image;
  image.pool = std::move(*made);
  image.layout = pool::LayoutRegistry::instance().find(pool::layout_name(image.pool->header()));
  if (image.layout == nullptr) harness_failure("a fuzzed pool's layout is not registered");
  guard(image.pool->base(), image.pool->size());
  image.pristine.assign(image.pool->base(), image.pool->base() + image.pool->size());
  images.push_back(std::move(image));
}

std::vector<Image> make_images() {
  std::vector<Image> images;
  int n = 0;
  auto path = [&] { return fuzz::scratch_file("image-" + std::to_string(n++) + ".pool"); };
  namespace log = primitives::log;
  for (log::Kind kind : {log::Kind::classic, log::Kind::header, log::Kind::header_dancing, log::Kind::zero}) {
    for (uint32_t lanes : {1u, 3u}) {
      log::Options o;
      o.kind = kind;
      o.lanes = lanes;
      o.padded = lanes == 3;
      o.dancing_slots = 4;
      const std::string p = path();
      {
        // A few entries in every lane, so recovery has records to walk.
        auto made = log::create_pool(p, kPoolSize, o);
        if (!made) harness_failure(made.status().message().c_str());
        auto opened = log::open_in_pool(**made);
        if (!opened) harness_failure(opened.status().message().c_str());
        for (uint32_t lane = 0; lane < lanes; ++lane)
          for (int i = 0; i < 5; ++i) {
            const std::string payload(static_cast<size_t>(8 + 40 * i), static_cast<char>('a' + i));
            if (!(*opened)->append(lane, payload.data(), payload.size())) harness_failure("cannot append");
          }
      }
      add(images, pool::Pool::open(p));
    }
  }
  namespace page = primitives::page;
  for (uint32_t page_size : {4096u, 16384u}) {
    for (uint32_t lanes : {1u, 2u}) {
      page::StoreOptions o;
      o.page_size = page_size;
      o.lanes = lanes;
      o.pages = page::PageStore::pages_that_fit(kPoolSize - pool::kHeaderSize, page_size, lanes);
      const std::string p = path();
      {
        auto made = page::create_pool(p, kPoolSize, o);
        if (!made) harness_failure(made.status().message().c_str());
      }
      add(images, pool::Pool::open(p));
    }
  }
  // The library's structures, each with some content: a heap holding a map, a tree, two sets, a ring.
  const auto library_image = [&](auto&& make) {
    const std::string p = path();
    make(p);
    add(images, pool::Pool::open(p));
  };
  library_image([](const std::string& p) {
    auto ptm = pmlab::Ptm::create(p, kPoolSize, {pmlab::PtmKind::redo, 2, 16 << 10});
    auto map = pmlab::Map::create(ptm, 0, {});
    for (uint64_t i = 0; i < 40; ++i) ptm.run([&](pmlab::Transaction& tx) { map.put(tx, key(i), &i); });
  });
  library_image([](const std::string& p) {
    auto tree = pmlab::Tree::create(p, kPoolSize, {8, 16});
    const char value[16] = "value";
    for (uint64_t i = 0; i < 100; ++i) tree.put(key(i), value);
  });
  for (const pmlab::SetDesign design : {pmlab::SetDesign::linkfree, pmlab::SetDesign::tlog})
    library_image([&](const std::string& p) {
      auto set = pmlab::Set::create(p, {design, 2, 256});
      for (uint64_t k = 1; k <= 60; ++k) set.insert(0, k * 3);
    });
  library_image([](const std::string& p) {
    auto ring = pmlab::Ring::create(p, {pmlab::RingDesign::tx, 2, 16, 32});
    char record[32] = "record";
    for (int i = 0; i < 12; ++i) ring.push(0, record);
    for (int i = 0; i < 3; ++i) ring.pop(1, record);
  });
  // Layouts registered without a formatter here (bench, and any added later) on a bare data area.
  for (const pool::Layout* layout : pool::LayoutRegistry::instance().all()) {
    bool covered = false;
    for (const Image& i : images) covered = covered || i.layout == layout;
    if (!covered) add(images, pool::Pool::create(path(), kPoolSize, layout->name, layout->version));
  }
  return images;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static std::vector<Image> images = make_images();
  if (size == 0) return 0;
  Image& image = images[data[0] % images.size()];
  pool::Pool& p = *image.pool;
  std::memcpy(p.base(), image.pristine.data(), image.pristine.size());
  const size_t n = std::min<size_t>(size - 1, p.data_size());
  for (size_t i = 0; i < n; ++i) p.data()[i] ^= static_cast<std::byte>(data[1 + i]);

  if (image.layout->recover) (void)image.layout->recover(p);
  if (image.layout->check) (void)image.layout->check(p);
  if (std::memcmp(p.base(), image.pristine.data(), pool::kHeaderSize) != 0)
    harness_failure("recovery wrote the pool header, outside the layout's data area");
  return 0;
}
