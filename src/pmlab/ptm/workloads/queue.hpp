// A persistent FIFO queue: a singly linked list with head and tail roots and a length root. A transaction
// dequeues the head node (freeing it) and enqueues a new node carrying the value (allocating it), so every
// transaction exercises the PTM's transactional allocator. Invariants: length == nodes from head, tail
// is the last node, the values leave in the order they came.
#pragma once

#include <algorithm>
#include <string>

#include "pmlab/common/status.hpp"
#include "pmlab/ptm/workloads/workload.hpp"

namespace pmlab::ptm::workloads {

// Roots: 2 = head, 3 = tail, 4 = length, 5 = next sequence number.
struct QueueNode {
  uint64_t value;
  uint64_t next;
};

template <class Tx>
bool queue_enqueue(Tx& tx, uint64_t value) {
  const uint64_t off = tx.alloc(sizeof(QueueNode));
  if (off == 0) return false;
  QueueNode* n = tx.template at<QueueNode>(off);
  tx.write(&n->value, value);
  tx.write(&n->next, 0);
  const uint64_t tail = tx.read(tx.root(3));
  if (tail == 0) tx.write(tx.root(2), off);
  else tx.write(&tx.template at<QueueNode>(tail)->next, off);
  tx.write(tx.root(3), off);
  tx.write(tx.root(4), tx.read(tx.root(4)) + 1);
  return true;
}

// The dequeued value, or UINT64_MAX when empty.
template <class Tx>
uint64_t queue_dequeue(Tx& tx) {
  const uint64_t head = tx.read(tx.root(2));
  if (head == 0) return UINT64_MAX;
  QueueNode* n = tx.template at<QueueNode>(head);
  const uint64_t value = tx.read(&n->value);
  const uint64_t next = tx.read(&n->next);
  tx.write(tx.root(2), next);
  if (next == 0) tx.write(tx.root(3), 0);
  tx.write(tx.root(4), tx.read(tx.root(4)) - 1);
  tx.free(head);
  return value;
}

template <class P>
class Queue {
 public:
  static constexpr const char* kName = "queue";
  // Records a run loads (config.records), in a full sweep and in a quick one.
  static constexpr uint64_t kRecords = 4096, kQuickRecords = 1024;
  static uint64_t heap_bytes(const Config& c) { return (c.records + 1024) * 64 + (1 << 20); }

  Status load(P& ptm, const Config& c) {
    bool ok = true;
    for (uint64_t done = 0; done < c.records && ok;) {
      const uint64_t batch = std::min<uint64_t>(256, c.records - done);
      ptm.run(0, [&](auto& tx) {
        uint64_t seq = tx.read(tx.root(5));
        for (uint64_t i = 0; i < batch && ok; ++i) ok = queue_enqueue(tx, seq++);
        tx.write(tx.root(5), seq);
      });
      done += batch;
    }
    if (!ok) return error(Errc::no_space, "queue: heap too small");
    return Status::success();
  }

  void op(P& ptm, int slot, Rng&) {
    ptm.run(slot, [&](auto& tx) {
      queue_dequeue(tx);
      const uint64_t seq = tx.read(tx.root(5));
      tx.write(tx.root(5), seq + 1);
      queue_enqueue(tx, seq);
    });
  }

  Status check(P& ptm) {
    Status st;
    ptm.run(0, [&](auto& tx) {
      uint64_t count = 0, last = 0, prev_value = 0;
      for (uint64_t off = tx.read(tx.root(2)); off != 0; off = tx.read(&tx.template at<QueueNode>(off)->next)) {
        const uint64_t v = tx.read(&tx.template at<QueueNode>(off)->value);
        if (count > 0 && v <= prev_value) {
          st = error(Errc::corrupted, "queue: values out of FIFO order");
          return;
        }
        prev_value = v;
        last = off;
        ++count;
      }
      if (count != tx.read(tx.root(4)))
        st = error(Errc::corrupted, "queue: " + std::to_string(count) + " nodes, length root says " +
                                        std::to_string(tx.read(tx.root(4))));
      else if (last != tx.read(tx.root(3))) st = error(Errc::corrupted, "queue: tail root is not the last node");
    });
    return st;
  }
};

}  // namespace pmlab::ptm::workloads
