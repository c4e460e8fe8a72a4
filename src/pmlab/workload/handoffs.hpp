// How often a workload itself moves a record from one thread's cache to another's: the coherence
// traffic that no structure and no concurrency control can remove, because the threads read and write
// the same records.
//
// The model: the threads run their streams in lockstep (operation i of every thread before operation
// i + 1 of any), and each thread's cache is unbounded, so a thread loses a record only when another
// thread writes it. An operation is a hand-off when its record must come from another thread's cache,
// or be taken from it:
//  - a read (or the first record of a scan) of a record whose newest version another thread wrote in
//    the run phase, and which this thread has not read since;
//  - a write (update, insert, read-modify-write) of a record another thread holds.
// Records the load phase wrote start uncached (a first touch is a miss, not a hand-off). Scans count as
// a read of their first record: the records after it follow key order, which record numbers do not.
//
// A structure turns each hand-off into the cache lines it moves per record (the value, the slot or node
// around it, the version or lock beside it); each costs a core-to-core transfer. On cores that share no
// cache, that price caps how far two threads can scale on a workload that shares records.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "pmlab/workload/ycsb.hpp"

namespace pmlab::workload {

// Hand-offs per operation over one pass of every stream (a stream per thread), or nullopt for more than
// 64 streams (the model keeps a thread set as one 64-bit word). 0 for a single stream.
std::optional<double> record_handoffs_per_op(const std::vector<std::vector<Op>>& streams);

}  // namespace pmlab::workload
