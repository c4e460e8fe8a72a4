// corpus.blob-directory and its broken twin: a directory of four named entries, each one word naming the
// entry's current blob (its version in the high half, its offset in the low half). Blobs are one to
// three lines, written once into fresh space and never changed; an update writes a new blob and repoints
// the entry.
//
// Protocol. Write the blob [entry][version][lines][payload…][checksum] and persist it, then store the
// entry's word with one atomic store and persist it.
//
// Twin:
//  - plain-pointer: stores the entry's word by copying it (a memcpy of 8 bytes), a plain store the
//    compiler may split: a persistency race [Yashme]. Between the store and its write-back a crash may
//    keep some of its bytes and not others, and the torn word names a blob that is not the entry's, or
//    none. An aligned word persists whole in line and word mode, so only byte mode sees it.
#include <array>
#include <cstring>
#include <vector>

#include "pmlab/crash/corpus/history.hpp"

namespace pmlab::crash::corpus {
namespace {

constexpr uint64_t kEntries = 4, kMaxLines = 3, kWordsPerLine = 8;

struct alignas(64) Directory {
  uint64_t entry[kEntries];  // version << 32 | offset of the blob; 0 when the entry was never written
  uint64_t pad[4];
};

using Versions = std::array<uint64_t, kEntries>;  // per entry, 1 + the update that wrote its blob, or 0

enum class Bug { none, plain_pointer };

class BlobDirectory final : public Design<Bug> {
 public:
  using Design::Design;

  size_t image_bytes() const override { return sizeof(Directory) + ops_ * kMaxLines * 64; }

  void run(Image image, const persist::Persister& p, OpTracker& ops) override {
    Directory* dir = reinterpret_cast<Directory*>(image.base);
    uint64_t next = sizeof(Directory);
    for (uint64_t i = 0; i < ops_; ++i) {
      const uint64_t e = entry_of(i);
      ops.begin(i, "write entry " + std::to_string(e) + ", version " + std::to_string(i + 1));
      const std::vector<uint64_t> words = blob(e, i);
      std::memcpy(image.base + next, words.data(), words.size() * 8);
      p.persist(image.base + next, words.size() * 8);
      const uint64_t word = (i + 1) << 32 | next;
      if (variant_ != Bug::plain_pointer) p.store8(&dir->entry[e], word);
      else std::memcpy(&dir->entry[e], &word, sizeof word);
      p.persist(&dir->entry[e], 8);
      next += words.size() * 8;
      ops.end(i);
    }
  }

  Status recover(Image, const persist::Persister&) override {
    return Status::success();  // nothing to repair: the entry words are the commits
  }

  Status check(Image image, const persist::Persister&, const CrashPoint& at) override {
    const Directory* dir = reinterpret_cast<const Directory*>(image.base);
    Versions found{};
    for (uint64_t e = 0; e < kEntries; ++e) {
      const uint64_t word = dir->entry[e];
      if (word == 0) continue;
      const uint64_t version = word >> 32, offset = word & 0xffffffffULL;
      const uint64_t* at_blob = blob_at(image, offset);
      const uint64_t lines = at_blob == nullptr ? 0 : at_blob[2];
      if (at_blob == nullptr || version == 0 || version > ops_ || lines < 1 || lines > kMaxLines ||
          offset + lines * 64 > image.size ||
          std::vector<uint64_t>(at_blob, at_blob + lines * kWordsPerLine) != blob(e, version - 1))
        return broken("entry " + std::to_string(e) + " names offset " + std::to_string(offset) + " for version " +
                      std::to_string(version) + ", which holds no such blob");
      found[e] = version;
    }
    return durably_linearizable(
        found, at, [this](uint64_t k) { return after(k); }, "the directory's versions");
  }

 private:
  uint64_t entry_of(uint64_t op) const { return payload_word(seed_, op, 1) % kEntries; }

  static const uint64_t* blob_at(Image image, uint64_t offset) {
    if (offset < sizeof(Directory) || offset % 64 != 0 || offset + 64 > image.size) return nullptr;
    return reinterpret_cast<const uint64_t*>(image.base + offset);
  }

  // The words of the blob update `op` writes for entry `e`.
  std::vector<uint64_t> blob(uint64_t e, uint64_t op) const {
    std::vector<uint64_t> w((1 + payload_word(seed_, op, 2) % kMaxLines) * kWordsPerLine);
    w[0] = e;
    w[1] = op + 1;
    w[2] = w.size() / kWordsPerLine;
    fill_payload(&w[3], w.size() - 4, op);
    w.back() = checksum_words(w.data(), w.size() - 1);
    return w;
  }

  Versions after(uint64_t ops) const {
    return replay(ops, Versions{}, [this](Versions& v, uint64_t i) { v[entry_of(i)] = i + 1; });
  }
};

const CorpusDesign<BlobDirectory, Bug> registered{"blob-directory", {Bug::plain_pointer}};

}  // namespace
}  // namespace pmlab::crash::corpus
