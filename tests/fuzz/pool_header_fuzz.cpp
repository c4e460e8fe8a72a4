// The pool header parser and `pmlab pool check` on arbitrary files: read_header, a read-only open and
// the layout's checker must return a Status for any bytes, never crash, hang or write the file.
//
// Input: one byte of switches, then the file's bytes. The switches let the fuzzer past the two checks
// random bytes never pass: bit 0 stores the magic, bit 1 makes the file as long as its header says
// (sparse, up to 8 MiB), bit 2 stores a valid checksum last.
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>
#include <vector>

#include "fuzz_support.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/pool/layout.hpp"
#include "pmlab/pool/pool.hpp"

using namespace pmlab;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const std::string path = fuzz::scratch_file("header.pool");
  if (size == 0) return 0;
  const uint8_t switches = data[0];
  std::vector<uint8_t> file(data + 1, data + size);
  uint64_t length = file.size();
  if (file.size() >= sizeof(pool::Header)) {
    pool::Header h;
    std::memcpy(&h, file.data(), sizeof h);
    if (switches & 1) std::memcpy(h.magic, pool::kMagic, sizeof pool::kMagic);
    if ((switches & 2) && h.pool_size >= file.size() && h.pool_size <= (8ULL << 20)) length = h.pool_size;
    if (switches & 4) h.checksum = pool::header_checksum(h);
    std::memcpy(file.data(), &h, sizeof h);
  }
  fuzz::write_bytes(path, file.data(), file.size());
  if (length > file.size() && truncate(path.c_str(), static_cast<off_t>(length)) != 0) std::abort();

  auto header = pool::read_header(path);
  if (header) {
    // What `pmlab pool info` prints of it.
    (void)printable(pool::layout_name(*header));
    (void)pool::uuid_string(*header);
  }
  pool::OpenOptions options;
  options.read_only = true;
  auto opened = pool::Pool::open(path, options);
  if (header.ok() != opened.ok()) std::abort();  // the two readers must agree on what is a pool
  if (opened) {
    const pool::Layout* layout = pool::LayoutRegistry::instance().find(pool::layout_name((*opened)->header()));
    if (layout != nullptr && layout->check) (void)layout->check(**opened);
  }
  return 0;
}
