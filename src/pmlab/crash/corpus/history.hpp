// What the bug corpus's designs share beyond the self-tests' base, payloads, checksums and registration:
// the last check each one makes, durable linearizability against the operation history, and bounds-checked
// offsets, so a design's recovery never follows a torn or stale link out of its own structure.
//
// Every design computes its expected state from the options alone (the operation stream is a function of
// `ops` and `seed`), never from what its run left in DRAM: recovery runs on a freshly made subject.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "pmlab/crash/selftest/support.hpp"
#include "pmlab/crashtest/subject.hpp"

namespace pmlab::crash::corpus {

using selftest::broken;
using selftest::checksum_words;
using selftest::Design;
using selftest::FixedLayoutDesign;
using selftest::HeaderAndRecordsDesign;
using selftest::in_both_halves;
using selftest::kAdrOnly;
using selftest::kBothDomains;
using selftest::payload_word;

// The bug corpus's designs, one row each (corpus/catalog.cpp).
const std::vector<selftest::DesignText>& corpus_catalog();

// A corpus design and its broken twins (in its catalog row's order), registered as corpus.<name> and
// corpus.broken.<name>-<twin>: a twin's name starts with the name of the design it breaks.
template <class D, class Bug>
struct CorpusDesign {
  CorpusDesign(const std::string& name, std::initializer_list<Bug> twins) {
    selftest::register_with_twins<D>("corpus", selftest::catalog_row(corpus_catalog(), name, twins.size()), twins,
                                     name + "-");
  }
};

// The state recovery found must be the one the operations that returned left (`after(at.ops_completed)`),
// or, with an operation in flight, the one it leaves when it completes: wholly absent or wholly present.
template <class State, class After>
Status durably_linearizable(const State& found, const CrashPoint& at, const After& after, const std::string& what) {
  if (found == after(at.ops_completed)) return Status::success();
  if (at.op_in_flight && found == after(at.ops_completed + 1)) return Status::success();
  return broken("recovered " + what + ": not what the " + std::to_string(at.ops_completed) +
                " operations that returned left" + (at.op_in_flight ? ", nor that and the one in flight" : ""));
}

// The element of an array of `count` T's at `first` (an offset in the image) that `offset` names, or null
// when it names none: outside the array, or not on an element's boundary.
template <class T>
T* element_at(Image image, uint64_t offset, uint64_t first, uint64_t count) {
  if (offset < first || (offset - first) % sizeof(T) != 0 || (offset - first) / sizeof(T) >= count) return nullptr;
  if (offset + sizeof(T) > image.size) return nullptr;
  return reinterpret_cast<T*>(image.base + offset);
}

template <class T>
uint64_t offset_of(Image image, const T* object) {
  return static_cast<uint64_t>(reinterpret_cast<const std::byte*>(object) - image.base);
}

}  // namespace pmlab::crash::corpus
