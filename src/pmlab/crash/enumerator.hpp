// Crash states of one crash point, and which of them to check within a budget.
//
// The pending lines of a crash point (durability_tracker.hpp) split into pieces at the chosen granularity:
// a line; or its aligned words; or, in byte mode, the bytes of words that plain stores changed. A piece can be left
// durable or take one of the contents its line held (its options: the distinct slices of those contents). A crash state
// picks an option per piece; distinct states are distinct images.
//
// Exploration gives every strategy a share of the point's budget, so none starves the others:
//   - none, all (every line at its content now), every written-back line at its written-back content;
//   - every state, when there are no more than the budget (the point is then covered exhaustively);
//   - whole-line states (lines persist whole, each at any content it held): exhaustively when they fit
//     their share, else prefixes and suffixes in write order and in address order, then every state one,
//     two, … lines away from none and from all (a level that does not fit is sampled at random, and the
//     deepest complete level is reported), then random states whose persistence probability is itself
//     drawn per state, so deep and shallow subsets are both likely;
//   - in word and byte mode, half the budget goes to torn lines: a whole-line state with one or two lines
//     split between two of their contents.
// Everything is a function of (space, budget, seed): a state is replayed by its index.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "pmlab/crash/durability_tracker.hpp"

namespace pmlab::crash {

enum class Strategy : uint8_t { none, all, written_back, exhaustive, prefix, deviation, random, torn };
const char* to_string(Strategy s) noexcept;

// One piece of a pending line and the contents it may take.
struct Piece {
  uint32_t line = 0;    // index into CrashSpace::lines
  uint32_t offset = 0;  // in the line
  uint32_t size = 0;
  // Per value of the line: the option it means for this piece (0: the durable bytes).
  std::vector<uint8_t> option_of_value;
  // The options' bytes, option k at [(k-1) * size, k * size).
  std::vector<std::byte> options;
  uint32_t option_count() const noexcept { return size == 0 ? 0 : static_cast<uint32_t>(options.size() / size); }
};

struct CrashSpace {
  Granularity granularity = Granularity::line;
  std::vector<PendingLine> lines;
  std::vector<Piece> pieces;
  std::vector<uint32_t> first_piece;  // per line; its pieces are contiguous
  double states = 1;                  // crash states at this point (product over pieces)
  double line_states = 1;             // whole-line crash states (product over lines)
};

CrashSpace make_space(std::vector<PendingLine> lines, std::span<const std::byte> durable, Granularity g);

struct CrashState {
  std::vector<uint8_t> choice;  // option per piece
  Strategy strategy = Strategy::none;
};

struct Exploration {
  std::vector<CrashState> states;
  bool exhaustive = false;  // every state of the point is among them
  // The deepest whole-line deviation level (from none and from all) enumerated completely; the number of
  // pending lines when whole-line states were covered exhaustively.
  uint32_t deviation_depth = 0;
};

Exploration explore(const CrashSpace& space, uint64_t budget, uint64_t seed);

// Splits `budget` states over crash points of the given sizes (their state counts): each point gets all its
// states or the common level, whichever is less, so small points are covered whole and the rest share what
// remains.
std::vector<uint64_t> allocate_budget(const std::vector<double>& sizes, uint64_t budget);

// The crash image of a state: the durable image with the chosen options written over it.
void build_image(std::span<const std::byte> durable, const CrashSpace& space, const CrashState& state, std::byte* out);
// The same over an image that already holds the durable one: only the state's pieces are written.
void apply_state(const CrashSpace& space, const CrashState& state, std::byte* image);

// A content hash of an image: a sum over 8-byte words of a mix of (word index, value), so a state's hash
// follows from the durable image's by the words its pieces change.
uint64_t image_hash(const std::byte* image, size_t size);
// One word's term of image_hash: an image's hash changes by term(i, new) - term(i, old) when word i changes.
uint64_t word_hash_term(uint64_t index, uint64_t value);
uint64_t state_hash(uint64_t durable_hash, std::span<const std::byte> durable, const CrashSpace& space,
                    const CrashState& state);

// "0x40 (latest), 0x80 (written back), 0xc0 torn (+0:8 latest, +8:8 durable)": what a state persisted.
// `where` names an offset (default: hex).
std::string describe(const CrashSpace& space, const CrashState& state,
                     const std::function<std::string(size_t)>& where = {});
// What a state persisted of line `l`: "latest", "written back", "value 2 of 3", "torn (+0:8 latest, …)",
// or empty when it left the line durable.
std::string describe_line(const CrashSpace& space, const CrashState& state, uint32_t l);

}  // namespace pmlab::crash
