#include "pmlab/workload/handoffs.hpp"

#include <algorithm>

namespace pmlab::workload {

std::optional<double> record_handoffs_per_op(const std::vector<std::vector<Op>>& streams) {
  if (streams.size() > 64) return std::nullopt;
  uint64_t records = 0, operations = 0;
  size_t longest = 0;
  for (const std::vector<Op>& stream : streams) {
    for (const Op& op : stream) records = std::max(records, op.record + 1);
    operations += stream.size();
    longest = std::max(longest, stream.size());
  }
  if (operations == 0) return 0.0;

  struct Copies {
    uint64_t holders = 0;  // threads holding the newest version
    bool written = false;  // the newest version was written in the run phase (not by the load)
  };
  std::vector<Copies> copies(records);
  uint64_t handoffs = 0;
  for (size_t i = 0; i < longest; ++i) {
    for (size_t t = 0; t < streams.size(); ++t) {
      if (i >= streams[t].size()) continue;
      const Op& op = streams[t][i];
      Copies& c = copies[op.record];
      const uint64_t me = uint64_t{1} << t;
      if (op.type == OpType::read || op.type == OpType::scan) {
        // Not held and written since: the writer (another thread; a writer keeps its copy) supplies it.
        handoffs += (c.holders & me) == 0 && c.written;
        c.holders |= me;
      } else {
        handoffs += (c.holders & ~me) != 0;
        c.holders = me;
        c.written = true;
      }
    }
  }
  return static_cast<double>(handoffs) / static_cast<double>(operations);
}

}  // namespace pmlab::workload
