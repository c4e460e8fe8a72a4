// What the self-test designs (and the bug corpus's, which build on them) share: a base that keeps the
// variant and the stream's length and seed, bases for the two images most designs lay out (one structure;
// a header and a record per operation), reproducible payload words, counters and codes whose stores change
// both halves of their words, a checksum over words, and the registration of a design with its broken
// twins, so each design states its protocol and its recovery and nothing else.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include "pmlab/common/random.hpp"
#include "pmlab/common/status.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::selftest {

// Word k of the payload that operation `op` writes, for a stream seeded with `seed`.
inline uint64_t payload_word(uint64_t seed, uint64_t op, uint64_t k) noexcept {
  return mix64(seed * 0x100000001b3ULL + op * 0x9e3779b97f4a7c15ULL + k + 1);
}

// The designs' counters, sequence numbers, lengths and generations start at kCounterBase
// (crashtest/subject.hpp): a counter word below it is one no run wrote.

// A small code (a state, a mark) written in both halves of its word, so that every change of code changes
// both halves: a word torn between two codes (the new low half, the old high half) is no code, and a check
// that knows the codes sees it.
constexpr uint64_t in_both_halves(uint32_t code) noexcept { return uint64_t{code} << 32 | code; }

// Whether `word` holds one code in both halves, as in_both_halves writes it.
constexpr bool halves_agree(uint64_t word) noexcept { return (word >> 32) == (word & 0xffffffffu); }

// A checksum of `n` words that is never 0, so an all-zero (never written) record never validates.
inline uint64_t checksum_words(const uint64_t* words, size_t n) noexcept {
  uint64_t h = 0x5bd1e995ULL;
  for (size_t i = 0; i < n; ++i) h = mix64(h ^ words[i]) + i;
  return h | 1;
}

inline Status broken(const std::string& what) { return error(Errc::failed, what); }

inline const std::vector<persist::Domain> kBothDomains{persist::Domain::adr, persist::Domain::eadr};

// The registration of one variant of a self-test design: `Design` is made from `args...` and the options.
template <class Design, class... Args>
SubjectInfo variant(std::string name, std::string description, bool broken, std::vector<persist::Domain> domains,
                    Args... args) {
  SubjectInfo i;
  i.name = std::move(name);
  i.description = std::move(description);
  i.domains = std::move(domains);
  i.deliberately_broken = broken;
  i.make = [args...](const SubjectOptions& o) { return std::make_unique<Design>(args..., o); };
  return i;
}

// Designs whose bug exists only where flushes are needed (under eADR the fence persists every store).
inline const std::vector<persist::Domain> kAdrOnly{persist::Domain::adr};

// A broken twin as its family's catalog states it: its name, what it does wrong, and the domains in which
// the bug exists (and the simulator must catch it).
struct TwinText {
  std::string name;
  std::string description;
  std::vector<persist::Domain> domains = kBothDomains;
};

// A design as its family's catalog states it: its name, what it does, and its broken twins.
struct DesignText {
  std::string name;
  std::string description;
  std::vector<TwinText> twins;
};

// The self-test designs, one row each (selftest/catalog.cpp): what the family holds is read in one table,
// and each design's file states its protocol and recovery only.
const std::vector<DesignText>& selftest_catalog();

// The row of `catalog` for design `name`, checked against the variants its file registers: a design the
// catalog does not list, or whose twins it lists in another number, stops the program at start-up.
const DesignText& catalog_row(const std::vector<DesignText>& catalog, const std::string& name, size_t twins);

// Registers design D of `family` as "<family>.<name>" with the variant Variant{} (the first value of its
// enum is the correct design), claiming both domains, and each broken twin, the variants `twins` in the
// catalog row's order, as "<family>.broken.<twin_prefix><twin>", marked deliberately broken so that `all`
// leaves it out.
template <class D, class Variant>
void register_with_twins(const std::string& family, const DesignText& text, std::initializer_list<Variant> twins,
                         const std::string& twin_prefix) {
  SubjectRegistration{variant<D>(family + "." + text.name, text.description, false, kBothDomains, Variant{})};
  auto twin = text.twins.begin();
  for (Variant v : twins) {
    SubjectRegistration{
        variant<D>(family + ".broken." + twin_prefix + twin->name, twin->description, true, twin->domains, v)};
    ++twin;
  }
}

// A self-test design and its broken twins (in its catalog row's order), registered as selftest.<name> and
// selftest.broken.<twin>.
template <class D, class Variant>
struct SelfTestDesign {
  SelfTestDesign(const std::string& name, std::initializer_list<Variant> twins) {
    register_with_twins<D>("selftest", catalog_row(selftest_catalog(), name, twins.size()), twins, "");
  }
};

// What every self-test and corpus design keeps: which variant it is (the correct one or a broken twin) and
// its stream's length and seed. Its image starts zero-filled and durable unless the design lays out more.
// A design that needs nothing more takes this constructor as its own (`using Design::Design;`).
template <class Variant>
class Design : public Subject {
 public:
  Design(Variant variant, const SubjectOptions& o) : variant_(variant), ops_(o.ops), seed_(o.seed) {}

  void format(Image image, const persist::Persister& p) override { p.fill_persist(image.base, 0, image.size); }

 protected:
  // The payload operation `op` writes: n words, and whether `words` hold them.
  void fill_payload(uint64_t* words, size_t n, uint64_t op) const {
    for (size_t k = 0; k < n; ++k) words[k] = payload_word(seed_, op, k);
  }
  bool payload_is(const uint64_t* words, size_t n, uint64_t op) const {
    for (size_t k = 0; k < n; ++k)
      if (words[k] != payload_word(seed_, op, k)) return false;
    return true;
  }

  // The state the first `ops` operations of the stream leave (the whole stream when it is shorter), from
  // `state` and each operation's effect on it: what a recovered image is checked against.
  template <class State, class Effect>
  State replay(uint64_t ops, State state, const Effect& effect) const {
    for (uint64_t i = 0; i < ops && i < ops_; ++i) effect(state, i);
    return state;
  }

  const Variant variant_;
  const uint64_t ops_;
  const uint64_t seed_;
};

// A design whose image is one `Layout` and nothing more: the image is its size, and layout() is the
// structure in it.
template <class Variant, class Layout>
class FixedLayoutDesign : public Design<Variant> {
 public:
  using Design<Variant>::Design;

  size_t image_bytes() const override { return sizeof(Layout); }

 protected:
  static Layout* layout(Image image) { return reinterpret_cast<Layout*>(image.base); }
};

// A design whose image is a `Header` and then a `Record` for each operation of the stream.
template <class Variant, class Header, class Record>
class HeaderAndRecordsDesign : public Design<Variant> {
 public:
  using Design<Variant>::Design;

  size_t image_bytes() const override { return sizeof(Header) + this->ops_ * sizeof(Record); }

 protected:
  // The format of a design whose header counts its records in `count`: zero, from kCounterBase.
  void format_count(Image image, const persist::Persister& p, uint64_t Header::*count) {
    Design<Variant>::format(image, p);
    header(image)->*count = kCounterBase;
    p.persist(image.base, sizeof(Header));
  }

  static Header* header(Image image) { return reinterpret_cast<Header*>(image.base); }
  static Record& record(Image image, uint64_t i) { return reinterpret_cast<Record*>(image.base + sizeof(Header))[i]; }
};

}  // namespace pmlab::crash::selftest
