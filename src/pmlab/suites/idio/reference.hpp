// Published numbers to print beside ours: PMIdioBench's data (the artifact of [PMIdioBench]) as dumped in
// shared/reference/pmidiobench/pmem-idiosyncrasies.txt, read at run time so every printed number can be
// traced to its cell. Never presented as ours: the summary labels them kind published, with the source.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "pmlab/common/status.hpp"

namespace pmlab::suites::idio {

class PublishedSheets {
 public:
  // Parses the dump: "######## sheet N NAME" headers, then "A1=text | B1=number | …" cell lines.
  static PublishedSheets parse(const std::string& text);
  // Reads the file; an error names the path.
  static Result<PublishedSheets> load(const std::string& path);
  // The default location: $PMLAB_REFERENCE_DIR, else ../shared/reference beside the source tree.
  static std::string default_path();

  // The number in `cell` (e.g. "C13") of sheet `sheet` (e.g. "I1"), or nothing.
  std::optional<double> number(const std::string& sheet, const std::string& cell) const;
  std::optional<std::string> text(const std::string& sheet, const std::string& cell) const;
  bool empty() const { return sheets_.empty(); }
  const std::string& origin() const { return origin_; }

 private:
  std::map<std::string, std::map<std::string, std::string>> sheets_;
  std::string origin_;
};

// The source string every published metric carries.
std::string published_source(const std::string& sheet, const std::string& what);

}  // namespace pmlab::suites::idio
