#include "pmlab/crash/enumerator.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <unordered_set>

#include "pmlab/common/enum_names.hpp"
#include "pmlab/common/random.hpp"

namespace pmlab::crash {
namespace {

constexpr size_t kWord = 8;
constexpr double kHuge = 1e300;

// A zero word adds nothing, so an image's hash is that of its words that are not zero: growing an image by
// zeros, or hashing a mostly empty pool, costs nothing per zero word.
uint64_t word_term(uint64_t index, uint64_t value) {
  const uint64_t at = index * 0x9e3779b97f4a7c15ULL;
  return mix64(value ^ at) - mix64(at);
}

uint64_t load_word(const std::byte* image, size_t size, size_t word) {
  uint64_t v = 0;
  const size_t off = word * kWord;
  std::memcpy(&v, image + off, std::min(kWord, size - off));
  return v;
}

// A line's value as a state gives it: -1 durable, else an index into its values.
using LineValues = std::vector<int>;

class Collector {
 public:
  Collector(const CrashSpace& space, uint64_t budget) : space_(space), budget_(budget) {}
  bool full() const { return out_.size() >= budget_; }
  size_t size() const { return out_.size(); }
  bool add(std::vector<uint8_t> choice, Strategy strategy) {
    if (full()) return false;
    uint64_t h = 0x243f6a8885a308d3ULL;
    for (size_t i = 0; i < choice.size(); ++i)
      if (choice[i] != 0) h = mix64(h ^ (i << 8 | choice[i]));
    if (!seen_.insert(h).second) return false;
    out_.push_back({std::move(choice), strategy});
    return true;
  }
  bool add_lines(const LineValues& v, Strategy strategy) { return add(choice_of(v), strategy); }
  std::vector<uint8_t> choice_of(const LineValues& v) const {
    std::vector<uint8_t> choice(space_.pieces.size(), 0);
    for (size_t l = 0; l < v.size(); ++l) {
      if (v[l] < 0) continue;
      const uint32_t end =
          l + 1 < space_.lines.size() ? space_.first_piece[l + 1] : static_cast<uint32_t>(space_.pieces.size());
      for (uint32_t p = space_.first_piece[l]; p < end; ++p)
        choice[p] = space_.pieces[p].option_of_value[static_cast<size_t>(v[l])];
    }
    return choice;
  }
  std::vector<CrashState> take() { return std::move(out_); }

 private:
  const CrashSpace& space_;
  uint64_t budget_;
  std::unordered_set<uint64_t> seen_;
  std::vector<CrashState> out_;
};

// Lexicographic successor of a d-subset of [0, n); false after the last.
bool next_subset(std::vector<size_t>& s, size_t n) {
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] < n - s.size() + i) {
      ++s[i];
      for (size_t j = i + 1; j < s.size(); ++j) s[j] = s[j - 1] + 1;
      return true;
    }
  }
  return false;
}

// The values a line may take away from `base`: every value other than base (-1 included).
std::vector<int> alternatives(const PendingLine& line, int base) {
  std::vector<int> out;
  for (int v = -1; v < static_cast<int>(line.values.size()); ++v)
    if (v != base) out.push_back(v);
  return out;
}

constexpr auto kStrategies = enum_names<Strategy>("strategy", {{Strategy::none, "none"},
                                                               {Strategy::all, "all"},
                                                               {Strategy::written_back, "written back"},
                                                               {Strategy::exhaustive, "exhaustive"},
                                                               {Strategy::prefix, "prefix"},
                                                               {Strategy::deviation, "deviation"},
                                                               {Strategy::random, "random"},
                                                               {Strategy::torn, "torn"}});
}  // namespace

const char* to_string(Strategy s) noexcept { return kStrategies.name(s); }

CrashSpace make_space(std::vector<PendingLine> lines, std::span<const std::byte> durable, Granularity g) {
  CrashSpace space;
  space.granularity = g;
  space.lines = std::move(lines);
  for (uint32_t li = 0; li < space.lines.size(); ++li) {
    const PendingLine& line = space.lines[li];
    space.first_piece.push_back(static_cast<uint32_t>(space.pieces.size()));
    space.line_states = std::min(kHuge, space.line_states * static_cast<double>(line.values.size() + 1));
    // The piece boundaries of this line.
    std::vector<std::pair<uint32_t, uint32_t>> bounds;  // offset, size
    if (g == Granularity::line) {
      bounds.push_back({0, static_cast<uint32_t>(line.size)});
    } else {
      for (uint32_t w = 0; w * kWord < line.size; ++w) {
        const uint32_t from = w * static_cast<uint32_t>(kWord);
        const uint32_t n = std::min<uint32_t>(kWord, static_cast<uint32_t>(line.size) - from);
        const bool plain = ((line.plain_bytes >> from) & ((uint64_t{1} << n) - 1)) != 0;
        if (g == Granularity::byte && plain) {
          for (uint32_t b = 0; b < n; ++b) bounds.push_back({from + b, 1});
        } else {
          bounds.push_back({from, n});
        }
      }
    }
    const std::byte* d = durable.data() + line.offset;
    for (auto [off, size] : bounds) {
      Piece piece;
      piece.line = li;
      piece.offset = off;
      piece.size = size;
      for (const LineBytes& value : line.values) {
        const std::byte* v = value.data() + off;
        uint8_t option = 0;
        if (std::memcmp(v, d + off, size) != 0) {
          const uint32_t known = piece.option_count();
          for (uint32_t k = 0; k < known && option == 0; ++k)
            if (std::memcmp(piece.options.data() + k * size, v, size) == 0) option = static_cast<uint8_t>(k + 1);
          if (option == 0) {
            piece.options.insert(piece.options.end(), v, v + size);
            option = static_cast<uint8_t>(known + 1);
          }
        }
        piece.option_of_value.push_back(option);
      }
      if (piece.option_count() == 0) continue;  // never differs from durable
      space.states = std::min(kHuge, space.states * static_cast<double>(piece.option_count() + 1));
      space.pieces.push_back(std::move(piece));
    }
  }
  return space;
}

namespace {

// One exploration: the strategies in the order they take their share of the budget, each adding states
// to one collector. The order of the random draws is part of the result (a seed replays a campaign).
class Explorer {
 public:
  Explorer(const CrashSpace& space, uint64_t budget, uint64_t seed)
      : space_(space),
        budget_(budget),
        c_(space, budget),
        n_(space.lines.size()),
        rng_(seed),
        none_(n_, -1),
        all_(n_, -1),
        written_(n_, -1) {
    for (size_t l = 0; l < n_; ++l) {
      all_[l] = space.lines[l].latest;
      written_[l] = space.lines[l].written_back;
    }
  }

  Exploration run() {
    c_.add_lines(none_, Strategy::none);
    c_.add_lines(all_, Strategy::all);
    if (std::any_of(written_.begin(), written_.end(), [](int v) { return v >= 0; }))
      c_.add_lines(written_, Strategy::written_back);
    if (space_.states <= static_cast<double>(budget_)) {
      every_piece_state();
      result_.exhaustive = true;
      result_.deviation_depth = static_cast<uint32_t>(n_);
      result_.states = c_.take();
      return result_;
    }
    const bool tears = space_.granularity != Granularity::line;
    line_budget_ = tears ? std::max<uint64_t>(c_.size(), budget_ / 2) : budget_;
    if (space_.line_states <= static_cast<double>(line_budget_ - std::min<uint64_t>(line_budget_, c_.size()))) {
      every_line_state();
    } else {
      prefixes();
      deviations();
      random_lines();
    }
    if (tears && n_ > 0) {
      single_tears();
      random_tears();
    }
    result_.states = c_.take();
    return result_;
  }

 private:
  // The collector's size after `fraction` of what is left below `cap`.
  uint64_t share_end(uint64_t cap, double fraction) const {
    const uint64_t left = cap - std::min<uint64_t>(cap, c_.size());
    return std::min<uint64_t>(cap, c_.size() + static_cast<uint64_t>(static_cast<double>(left) * fraction));
  }
  bool add_until(uint64_t cap, const LineValues& v, Strategy s) { return c_.size() < cap && c_.add_lines(v, s); }
  uint32_t piece_end(size_t l) const {
    return l + 1 < n_ ? space_.first_piece[l + 1] : static_cast<uint32_t>(space_.pieces.size());
  }
  // Line indices: in address order, and oldest write first.
  std::vector<size_t> address_order() const {
    std::vector<size_t> order(n_);
    std::iota(order.begin(), order.end(), 0);
    return order;
  }
  std::vector<size_t> by_write() const {
    std::vector<size_t> order = address_order();
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return space_.lines[a].order < space_.lines[b].order; });
    return order;
  }

  void every_piece_state() {
    const size_t pieces = space_.pieces.size();
    std::vector<uint8_t> choice(pieces, 0);
    while (!c_.full()) {
      c_.add(choice, Strategy::exhaustive);
      size_t i = 0;
      for (; i < pieces; ++i) {
        if (++choice[i] <= space_.pieces[i].option_count()) break;
        choice[i] = 0;
      }
      if (i == pieces) break;
    }
  }

  void every_line_state() {
    LineValues v(n_, -1);
    for (;;) {
      add_until(line_budget_, v, Strategy::exhaustive);
      size_t i = 0;
      for (; i < n_; ++i) {
        if (++v[i] < static_cast<int>(space_.lines[i].values.size())) break;
        v[i] = -1;
      }
      if (i == n_ || c_.size() >= line_budget_) break;
    }
    result_.deviation_depth = static_cast<uint32_t>(n_);
  }

  // Prefixes and suffixes, in write order and in address order.
  void prefixes() {
    const std::vector<size_t> by_address = address_order();
    const std::vector<size_t> written_order = by_write();
    const uint64_t cap = share_end(line_budget_, 0.25);
    for (size_t k = 1; k < n_ && c_.size() < cap; ++k) {
      for (const auto* order : {&written_order, &by_address}) {
        LineValues prefix(n_, -1), suffix(n_, -1);
        for (size_t i = 0; i < k; ++i) prefix[(*order)[i]] = all_[(*order)[i]];
        for (size_t i = n_ - k; i < n_; ++i) suffix[(*order)[i]] = all_[(*order)[i]];
        add_until(cap, prefix, Strategy::prefix);
        add_until(cap, suffix, Strategy::prefix);
      }
    }
  }

  // Deviations from none and from all, level by level; the first level that does not fit is sampled.
  void deviations() {
    const uint64_t cap = share_end(line_budget_, 0.5);
    std::vector<double> e(n_ + 1, 0.0);  // elementary symmetric sums of the lines' alternative counts
    e[0] = 1;
    for (size_t l = 0; l < n_; ++l)
      for (size_t d = std::min(n_, l + 1); d >= 1; --d)
        e[d] = std::min(kHuge, e[d] + e[d - 1] * static_cast<double>(space_.lines[l].values.size()));
    for (size_t d = 1; d <= n_ && c_.size() < cap; ++d) {
      if (2 * e[d] > static_cast<double>(cap - c_.size())) {
        sample_deviations(d, cap);
        return;
      }
      for (const LineValues* base : {&none_, &all_}) every_deviation(*base, d, cap);
      if (c_.size() >= cap) return;
      result_.deviation_depth = static_cast<uint32_t>(d);
    }
  }

  // Every state that differs from `base` in exactly d lines.
  void every_deviation(const LineValues& base, size_t d, uint64_t cap) {
    std::vector<size_t> subset(d);
    std::iota(subset.begin(), subset.end(), 0);
    do {
      std::vector<std::vector<int>> alts;
      for (size_t l : subset) alts.push_back(alternatives(space_.lines[l], base[l]));
      std::vector<size_t> digit(d, 0);
      for (;;) {
        LineValues v = base;
        for (size_t i = 0; i < d; ++i) v[subset[i]] = alts[i][digit[i]];
        add_until(cap, v, Strategy::deviation);
        size_t i = 0;
        for (; i < d; ++i) {
          if (++digit[i] < alts[i].size()) break;
          digit[i] = 0;
        }
        if (i == d) break;
      }
    } while (next_subset(subset, n_) && c_.size() < cap);
  }

  // `d` lines drawn at random, each given a random alternative to its value in none or all.
  void sample_deviations(size_t d, uint64_t cap) {
    std::vector<size_t> order = address_order();
    for (uint64_t attempt = 0; c_.size() < cap && attempt < 4 * budget_; ++attempt) {
      const LineValues& base = attempt % 2 == 0 ? all_ : none_;
      LineValues v = base;
      for (size_t i = 0; i < d; ++i) {
        const size_t j = i + static_cast<size_t>(rng_.next_below(n_ - i));
        std::swap(order[i], order[j]);
        const std::vector<int> alts = alternatives(space_.lines[order[i]], base[order[i]]);
        v[order[i]] = alts[rng_.next_below(alts.size())];
      }
      add_until(cap, v, Strategy::deviation);
    }
  }

  // Random whole-line states, each with its own persistence probability.
  void random_lines() {
    for (uint64_t attempt = 0; c_.size() < line_budget_ && attempt < 4 * budget_; ++attempt) {
      const double p = rng_.next_double();
      LineValues v(n_, -1);
      for (size_t l = 0; l < n_; ++l) {
        if (rng_.next_double() >= p) continue;
        const PendingLine& line = space_.lines[l];
        v[l] = line.latest >= 0 && rng_.next_below(2) == 0 ? line.latest
                                                           : static_cast<int>(rng_.next_below(line.values.size()));
      }
      add_until(line_budget_, v, Strategy::random);
    }
  }

  // Torn lines, first single pieces: none or all with one word of one line at another content, the lines
  // being written back first, newest first. A commit spread over two words of a line the program is
  // persisting tears there; random tears over many pending lines reach that one only by chance.
  void single_tears() {
    const std::vector<size_t> written_order = by_write();
    std::vector<size_t> tear_order(written_order.rbegin(), written_order.rend());
    std::stable_partition(tear_order.begin(), tear_order.end(),
                          [&](size_t l) { return space_.lines[l].written_back >= 0; });
    const uint64_t cap = share_end(budget_, 0.5);
    for (size_t l : tear_order) {
      const uint32_t end = piece_end(l);
      if (end - space_.first_piece[l] < 2) continue;  // a line of one piece cannot tear
      for (const LineValues* base : {&none_, &all_}) {
        const std::vector<uint8_t> from = c_.choice_of(*base);
        for (uint32_t p = space_.first_piece[l]; p < end && c_.size() < cap; ++p) {
          for (uint32_t o = 0; o <= space_.pieces[p].option_count() && c_.size() < cap; ++o) {
            if (o == from[p]) continue;
            std::vector<uint8_t> choice = from;
            choice[p] = static_cast<uint8_t>(o);
            c_.add(std::move(choice), Strategy::torn);
          }
        }
      }
      if (c_.size() >= cap) break;
    }
  }

  // Then a whole-line state (all, none or random) with one or two lines split between two of their
  // contents, or scattered over all of them.
  void random_tears() {
    const std::vector<size_t> written_order = by_write();
    for (uint64_t k = 0; !c_.full() && k < 4 * budget_; ++k) {
      LineValues base = k % 3 == 0 ? all_ : k % 3 == 1 ? none_ : LineValues(n_, -1);
      if (k % 3 == 2) {
        const double p = rng_.next_double();
        for (size_t l = 0; l < n_; ++l)
          if (rng_.next_double() < p) base[l] = static_cast<int>(rng_.next_below(space_.lines[l].values.size()));
      }
      std::vector<uint8_t> choice = c_.choice_of(base);
      const size_t torn_lines = k % 4 == 3 && n_ > 1 ? 2 : 1;
      for (size_t t = 0; t < torn_lines; ++t) {
        const size_t l = t == 0 ? written_order[(k / 3) % n_] : static_cast<size_t>(rng_.next_below(n_));
        const std::vector<int> alts = alternatives(space_.lines[l], base[l]);
        const int other = alts[rng_.next_below(alts.size())];
        const bool scatter = rng_.next_below(4) == 0;
        const double q = rng_.next_double();
        for (uint32_t p = space_.first_piece[l]; p < piece_end(l); ++p) {
          const Piece& piece = space_.pieces[p];
          if (scatter) choice[p] = static_cast<uint8_t>(rng_.next_below(piece.option_count() + 1));
          else if (rng_.next_double() < q)
            choice[p] = other < 0 ? 0 : piece.option_of_value[static_cast<size_t>(other)];
        }
      }
      c_.add(std::move(choice), Strategy::torn);
    }
  }

  const CrashSpace& space_;
  const uint64_t budget_;
  Collector c_;
  const size_t n_;
  Random rng_;
  LineValues none_, all_, written_;
  uint64_t line_budget_ = 0;
  Exploration result_;
};

}  // namespace

Exploration explore(const CrashSpace& space, uint64_t budget, uint64_t seed) {
  return Explorer(space, budget, seed).run();
}

std::vector<uint64_t> allocate_budget(const std::vector<double>& sizes, uint64_t budget) {
  std::vector<uint64_t> out(sizes.size(), 0);
  if (sizes.empty()) return out;
  auto used = [&](double level) {
    double sum = 0;
    for (double s : sizes) sum += std::min(s, level);
    return sum;
  };
  double lo = 0, hi = static_cast<double>(budget);
  if (used(hi) <= static_cast<double>(budget)) {
    lo = hi;
  } else {
    for (int i = 0; i < 100; ++i) {
      const double mid = (lo + hi) / 2;
      (used(mid) <= static_cast<double>(budget) ? lo : hi) = mid;
    }
  }
  uint64_t given = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    out[i] = static_cast<uint64_t>(std::floor(std::min(sizes[i], lo)));
    given += out[i];
  }
  for (size_t i = 0; i < sizes.size() && given < budget; ++i) {
    if (static_cast<double>(out[i]) < sizes[i]) {
      ++out[i];
      ++given;
    }
  }
  return out;
}

void apply_state(const CrashSpace& space, const CrashState& state, std::byte* image) {
  for (size_t p = 0; p < space.pieces.size(); ++p) {
    const uint8_t c = state.choice[p];
    if (c == 0) continue;
    const Piece& piece = space.pieces[p];
    std::memcpy(image + space.lines[piece.line].offset + piece.offset, piece.options.data() + (c - 1) * piece.size,
                piece.size);
  }
}

void build_image(std::span<const std::byte> durable, const CrashSpace& space, const CrashState& state, std::byte* out) {
  if (!durable.empty()) std::memcpy(out, durable.data(), durable.size());  // an image of no file has no memory
  apply_state(space, state, out);
}

uint64_t word_hash_term(uint64_t index, uint64_t value) { return word_term(index, value); }

uint64_t image_hash(const std::byte* image, size_t size) {
  uint64_t h = 0;
  for (size_t w = 0; w * kWord < size; ++w) h += word_term(w, load_word(image, size, w));
  return h;
}

uint64_t state_hash(uint64_t durable_hash, std::span<const std::byte> durable, const CrashSpace& space,
                    const CrashState& state) {
  uint64_t h = durable_hash;
  size_t word = SIZE_MAX;
  uint64_t old_value = 0, new_value = 0;
  auto finish = [&] {
    if (word != SIZE_MAX) h += word_term(word, new_value) - word_term(word, old_value);
  };
  for (size_t p = 0; p < space.pieces.size(); ++p) {
    const uint8_t c = state.choice[p];
    if (c == 0) continue;
    const Piece& piece = space.pieces[p];
    const std::byte* bytes = piece.options.data() + (c - 1) * piece.size;
    const size_t at = space.lines[piece.line].offset + piece.offset;
    for (size_t b = 0; b < piece.size;) {
      const size_t abs = at + b, w = abs / kWord, in = abs % kWord, k = std::min(piece.size - b, kWord - in);
      if (w != word) {
        finish();
        word = w;
        old_value = new_value = load_word(durable.data(), durable.size(), w);
      }
      std::memcpy(reinterpret_cast<std::byte*>(&new_value) + in, bytes + b, k);
      b += k;
    }
  }
  finish();
  return h;
}

std::string describe_line(const CrashSpace& space, const CrashState& state, uint32_t l) {
  char buf[96];
  auto value_name = [&](const PendingLine& line, int v) -> std::string {
    if (v < 0) return "durable";
    if (v == line.latest) return "latest";
    if (v == line.written_back) return "written back";
    return "value " + std::to_string(v + 1) + " of " + std::to_string(line.values.size());
  };
  const PendingLine& line = space.lines[l];
  const uint32_t begin = space.first_piece[l];
  const uint32_t end =
      l + 1 < space.lines.size() ? space.first_piece[l + 1] : static_cast<uint32_t>(space.pieces.size());
  bool changed = false;
  for (uint32_t p = begin; p < end; ++p) changed = changed || state.choice[p] != 0;
  if (!changed) return "";
  // A whole line at one of its values, the latest and the written-back one preferred.
  std::vector<int> order;
  if (line.latest >= 0) order.push_back(line.latest);
  if (line.written_back >= 0) order.push_back(line.written_back);
  for (int v = 0; v < static_cast<int>(line.values.size()); ++v) order.push_back(v);
  for (int v : order) {
    bool match = true;
    for (uint32_t p = begin; p < end && match; ++p)
      match = state.choice[p] == space.pieces[p].option_of_value[static_cast<size_t>(v)];
    if (match) return value_name(line, v);
  }
  std::string out = "torn (";
  bool first = true;
  for (uint32_t p = begin; p < end; ++p) {
    if (state.choice[p] == 0) continue;  // left durable
    const Piece& piece = space.pieces[p];
    int v = -1;
    for (size_t k = 0; k < piece.option_of_value.size(); ++k)
      if (piece.option_of_value[k] == state.choice[p] && (v < 0 || static_cast<int>(k) == line.latest))
        v = static_cast<int>(k);
    std::snprintf(buf, sizeof buf, "%s+%u:%u %s", first ? "" : ", ", piece.offset, piece.size,
                  value_name(line, v).c_str());
    out += buf;
    first = false;
  }
  return out + ")";
}

std::string describe(const CrashSpace& space, const CrashState& state,
                     const std::function<std::string(size_t)>& where) {
  std::string out;
  char buf[32];
  for (uint32_t l = 0; l < space.lines.size() && out.size() < 600; ++l) {
    const std::string what = describe_line(space, state, l);
    if (what.empty()) continue;
    if (!out.empty()) out += ", ";
    if (where) {
      out += where(space.lines[l].offset);
    } else {
      std::snprintf(buf, sizeof buf, "0x%zx", space.lines[l].offset);
      out += buf;
    }
    out += what.rfind("torn", 0) == 0 ? " " + what : " (" + what + ")";
  }
  if (out.size() >= 600) out += ", …";
  return out.empty() ? "nothing beyond the durable image" : out;
}

}  // namespace pmlab::crash
