// Published numbers to print beside ours: PMIdioBench's data (the artifact of [PMIdioBench]) as dumped in
// data/reference/pmidiobench/pmem-idiosyncrasies.txt, read at run time so every printed number can be
// traced to its cell. Never presented as ours: the summary labels them kind published, with the source.
#pragma once

#include <optional>
#include <string>
#include <utility>

#include "pmlab/common/status.hpp"
#include "pmlab/model/published.hpp"

namespace pmlab::suites::idio {

// The dump as cells named the spreadsheet's way ("C13"), over the one parser of reference dumps
// (model::SheetBook).
class PublishedSheets {
 public:
  PublishedSheets() = default;
  explicit PublishedSheets(model::SheetBook book) : book_(std::move(book)) {}
  // Parses the dump: "######## sheet N NAME" headers, then "A1=text | B1=number | …" cell lines; text
  // that is not a dump gives no sheets.
  static PublishedSheets parse(const std::string& text);
  // Reads the file; an error names the path.
  static Result<PublishedSheets> load(const std::string& path);
  // The default location: model::reference_dir() ($PMLAB_REFERENCE_DIR, else data/reference).
  static std::string default_path();

  // The number in `cell` (e.g. "C13") of sheet `sheet` (e.g. "I1"), or nothing.
  std::optional<double> number(const std::string& sheet, const std::string& cell) const;
  std::optional<std::string> text(const std::string& sheet, const std::string& cell) const;
  bool empty() const { return book_.empty(); }
  const std::string& origin() const { return book_.origin(); }

 private:
  model::SheetBook book_;
};

// The source string every published metric carries.
std::string published_source(const std::string& sheet, const std::string& what);

}  // namespace pmlab::suites::idio
