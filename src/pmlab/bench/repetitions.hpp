// Repetitions: a run point measured several times, its metrics reported as the median with the spread and
// a bootstrap confidence interval (record::Stats), its targets judged from that interval. The runner
// executes repetitions in passes over the whole selection, so two repetitions of one point are apart in
// time and each follows different neighbours: a spell of load on a shared machine or the state one run
// leaves behind moves one sample, not all of them.
#pragma once

#include <optional>
#include <vector>

#include "pmlab/bench/case.hpp"

namespace pmlab::bench {

// How often a point of a case runs: `requested` (--repetitions) when given; otherwise 5 in a full run, and in a quick
// run 3 for target and peer cases (names `target`, `*_target`, `vs_*`: their verdict needs an interval),
// the case's own quick_repetitions where it sets one, and 1 elsewhere.
int repetitions_for(const CaseDef& def, const Params& point, bool quick, std::optional<int> requested);

// One record from the repetitions of a point, in the order they ran. An error or skip in any repetition
// is the point's status (a point that fails once is not reported as measured). Otherwise each measured or
// modelled number becomes the median of its repetitions with their Stats; flags (unit bool / flag) and
// published values are the first repetition's; the histograms are summed; targets are judged again.
RunRecord combine_repetitions(std::vector<RunRecord> repetitions);

}  // namespace pmlab::bench
