// Progress on stderr: a redrawn bar on a terminal, a line per tenth of the work otherwise (CI logs).
#pragma once

#include <cstddef>
#include <string>

namespace pmlab::bench {

class Progress {
 public:
  Progress(size_t total, bool enabled);
  ~Progress();
  void step(const std::string& name);  // before a run starts
  void note(const std::string& line);  // a message that must not be overdrawn

 private:
  size_t total_;
  size_t done_ = 0;
  bool enabled_;
  bool tty_;
  int last_decile_ = -1;
};

}  // namespace pmlab::bench
