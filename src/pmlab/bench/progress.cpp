#include "pmlab/bench/progress.hpp"

#include <unistd.h>

#include <cstdio>

namespace pmlab::bench {

Progress::Progress(size_t total, bool enabled) : total_(total), enabled_(enabled), tty_(isatty(STDERR_FILENO) != 0) {}

Progress::~Progress() {
  if (enabled_ && tty_ && done_ > 0) std::fprintf(stderr, "\r\033[K");
}

void Progress::step(const std::string& name) {
  ++done_;
  if (!enabled_ || total_ == 0) return;
  if (tty_) {
    constexpr int kWidth = 30;
    int filled = static_cast<int>(kWidth * (done_ - 1) / total_);
    std::string bar(static_cast<size_t>(filled), '=');
    bar.resize(kWidth, ' ');
    std::string shown = name.size() > 70 ? name.substr(0, 67) + "..." : name;
    std::fprintf(stderr, "\r\033[K[%s] %zu/%zu %s", bar.c_str(), done_, total_, shown.c_str());
    std::fflush(stderr);
  } else {
    int decile = static_cast<int>(10 * (done_ - 1) / total_);
    if (decile != last_decile_) {
      last_decile_ = decile;
      std::fprintf(stderr, "pmlab: %3d%% (%zu/%zu) %s\n", decile * 10, done_, total_, name.c_str());
    }
  }
}

void Progress::note(const std::string& line) {
  if (tty_ && enabled_) std::fprintf(stderr, "\r\033[K");
  std::fprintf(stderr, "%s\n", line.c_str());
}

}  // namespace pmlab::bench
