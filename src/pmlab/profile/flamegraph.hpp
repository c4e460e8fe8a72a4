// An SVG flame graph from folded stacks, written here rather than with Brendan Gregg's Perl scripts:
// one box per frame, width proportional to its samples, callers below callees, coloured by the activity
// the breakdown assigns (persistence, logging, allocation, search, other). Each box has a <title>
// tooltip (frame, samples, share); opened on its own, the SVG zooms into a frame on click.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace pmlab::profile {

struct FlameGraphOptions {
  std::string title;
  std::string subtitle;  // e.g. "cpu-clock, 1234 samples"
  int width = 1200;
  int frame_height = 16;
  double min_width_px = 0.3;  // narrower frames are left out (their time stays in the parent)
};

std::string flame_graph_svg(const std::map<std::string, uint64_t>& folded, const FlameGraphOptions& options);

}  // namespace pmlab::profile
