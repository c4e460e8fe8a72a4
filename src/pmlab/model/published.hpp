// Published measurements the device model is validated against and the suites print beside their own,
// read at run time from the reference data (data/reference in the source tree, share/pmlab/reference
// when installed; see its README), so no published number is copied into the code. Every value carries
// its source, for metrics of kind published.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pmlab/common/status.hpp"

namespace pmlab::model {

struct Published {
  double value = 0;
  std::string source;
};

// Where the reference data is: $PMLAB_REFERENCE_DIR when set (even if it holds nothing: the user asked
// for it), else share/pmlab/reference under the prefix the running executable is installed in (also a
// moved installation), else the source tree's data/reference, else the configured install prefix's.
struct ReferenceLocation {
  std::string directory;  // empty when none was found
  std::string found_by;   // "PMLAB_REFERENCE_DIR", "source tree", "install prefix", or "none"
};
const ReferenceLocation& reference_location();
// reference_location().directory, or a path that names why nothing can be read there.
std::string reference_dir();

// A reference file a lookup needed and could not read (missing, unreadable): every published comparison
// that needs it is left out of the run, and the run says so instead of staying silent.
struct ReferenceProblem {
  std::string file;  // relative to the reference directory, e.g. "optane-study/02-best_case_latency.csv"
  std::string reason;
};
// The problems met so far in this process, once per file, in the order met. Thread-safe.
std::vector<ReferenceProblem> reference_problems();

// The text dumps of PMIdioBench's spreadsheets: "######## sheet N NAME" headers, then rows of
// "A1=text | B1=text" cells.
class SheetBook {
 public:
  static Result<SheetBook> load(const std::string& path);
  static Result<SheetBook> parse(const std::string& text, const std::string& origin);

  std::optional<std::string> cell(const std::string& sheet, const std::string& column, int row) const;
  // The first row >= `from` whose cell in `column` satisfies `match` (exact text, or containing it).
  std::optional<int> find_row(const std::string& sheet, const std::string& column, const std::string& text,
                              int from = 1, bool exact = true) const;
  // The column of row `row` whose text is exactly `text`.
  std::optional<std::string> find_column(const std::string& sheet, int row, const std::string& text) const;
  const std::string& origin() const noexcept { return origin_; }
  bool empty() const noexcept { return sheets_.empty(); }

 private:
  std::string origin_;
  // sheet -> (row -> (column -> text))
  std::map<std::string, std::map<int, std::map<std::string, std::string>>> sheets_;
};

// pmidiobench/pmem-idiosyncrasies.txt, sheet I3: EWR of 16-thread SeqW / RandW writes of `size` bytes.
Result<Published> published_i3_ewr(const std::string& pattern, int size);
// Sheet I3: bandwidth (MiB/s) of the same runs.
Result<Published> published_i3_bandwidth(const std::string& pattern, int size);
// Sheet I6: XPBuffer read hit ratio of 16-thread 256 B reads, pattern "SeqR" or "RandR".
Result<Published> published_i6_read_hit_ratio(const std::string& pattern);
// Sheet I7: a counter of repeated 256 B nt-stores to one XPLine ("EWR", "RWR", "write_hit_ratio", …).
Result<Published> published_i7(const std::string& counter);

// Sheet I1: p-store latency (ns) at LLC hit ratio 1, medium "PMEM" or "DRAM" (8 threads persisting the
// region's first line, as test_i1.c does).
Result<Published> published_i1_pstore_ns(const std::string& medium);

// One cell of a CSV table under the reference directory (e.g. "optane-study/02-best_case_latency.csv"): the
// row whose first field is `row` (e.g. "Read\Random", or a thread count "4") and the column whose header is
// `column` (e.g. "Optane"). The value carries `source`.
Result<Published> published_csv_cell(const std::string& file, const std::string& row, const std::string& column,
                                     std::string source);

// cxl/cxl-points.csv: the published CXL point named `point` (e.g. "sun23.cxl-a.ld_over_ddr5r"), its source
// the study's key and where in the study it stands, as the file's row gives them.
Result<Published> published_cxl(const std::string& point);

// optane-study/09-infer_xpbuffer.csv: (region bytes, write amplification) in file order.
Result<std::vector<std::pair<double, double>>> published_xpbuffer_curve();
std::string xpbuffer_source();

}  // namespace pmlab::model
