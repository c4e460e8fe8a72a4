#include "pmlab/crash/exec/campaign.hpp"

#include <algorithm>
#include <cinttypes>
#include <optional>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <unordered_set>

#include "pmlab/common/files.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/common/stop_signal.hpp"
#include "pmlab/crash/enumerator.hpp"
#include "pmlab/crash/exec/failure_causes.hpp"
#include "pmlab/crash/exec/judges.hpp"
#include "pmlab/crash/exec/check_setup.hpp"
#include "pmlab/crash/exec/replay.hpp"
#include "pmlab/crash/exec/starting_files.hpp"
#include "pmlab/crash/exec/symbolizer.hpp"
#include "pmlab/crash/exec/trace_file.hpp"
#include "pmlab/crash/exec/trace_summary.hpp"
#include "pmlab/crash/exec/traced_run.hpp"
#include "pmlab/crash/exec/trap_sites.hpp"
#include "pmlab/crash/simulator.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

namespace fs = std::filesystem;

constexpr size_t kStackFrames = 4;  // of the program's own, per stack in a failure

// Replay::run's `wants_files` for a replay that builds no crash image.
bool no_files(uint64_t) { return false; }

// A state judged inconsistent, with what it takes to explain it later.
struct Judged {
  CrashPointInfo at;
  uint64_t state = 0;
  std::string strategy, persisted;
  std::string lost;                                        // of the changes of the file system since the last sync
  std::vector<std::pair<std::string, std::string>> lines;  // (where, content)
  std::vector<LineOrigin> origins;
  Verdict verdict;
};

// Where a line's content was stored: in the fence interval that ends at fence #N. A store not yet seen by a
// fence is in the crash point's own interval.
std::string stored_text(const LineOrigin& o, const CrashPointInfo& at, Symbolizer& symbols, const TraceFile& t) {
  if (o.stored_before_fence == 0 && at.at_exit) return "after the last fence, before exit";
  const uint64_t fence = o.stored_before_fence ? o.stored_before_fence : at.index;
  const uint32_t stack = o.stored_before_fence ? o.stored_stack : at.stack;
  return "before fence #" + std::to_string(fence) + " at " + joined(symbols.own_frames(t.stack(stack), 2));
}

std::string written_back_text(const LineOrigin& o, Symbolizer& symbols) {
  if (o.written_back_site == 0) return "never written back";
  return "at " + symbols.own_frame(o.written_back_site).text() + ", after fence #" +
         std::to_string(o.written_back_after_fence);
}

struct GranularityRun {
  const ExecOptions& o;
  const TraceFile& trace;
  persist::Domain domain;
  uint32_t schedule;
  Granularity granularity;
  Judges& judges;
  std::unordered_set<uint64_t>& seen;  // images judged in this domain and granularity, by every schedule
  const std::function<void(const ExecProgress&)>& progress;
  ExecRun result;
  std::vector<Judged> failed;
  std::mutex mutex;
  ExecProgress shown;
  bool replayed = false;  // --replay's state was judged

  Status run() {
    const uint64_t start = platform::Clock::monotonic_ns();
    result.domain = domain;
    result.schedule = schedule;
    result.granularity = granularity;
    auto allocation = allocate();
    if (!allocation) return allocation.status();
    // Second replay: explore and judge.
    Replay replay(trace, domain, o.metadata);
    auto judged_at = [&](uint64_t point) {
      return point <= allocation->size() && (*allocation)[point - 1] > 0 && (!o.replay || o.replay->first == point);
    };
    Status status = replay.run(
        [&](const CrashPointInfo& p, const LineModel& m) {
          return judged_at(p.index) ? judge_point(p, m, (*allocation)[p.index - 1], replay) : Status{};
        },
        judged_at);
    judges.drain();
    if (!status) return status;
    result.changes_taken_as_durable = replay.findings().changes_taken_as_durable;
    if (o.replay && !replayed)
      return error(Errc::invalid_argument, "--replay " + std::to_string(o.replay->first) + ":" +
                                               std::to_string(o.replay->second) +
                                               " names no state of that crash point in this shard and budget");
    result.seconds = static_cast<double>(platform::Clock::monotonic_ns() - start) * 1e-9;
    return {};
  }

  // Explores crash point `p` with its `budget` of states and judges them.
  Status judge_point(const CrashPointInfo& p, const LineModel& m, uint64_t budget, const Replay& replay) {
    const CrashSpace space = make_space(m.pending(), m.durable(), granularity);
    result.max_pending_lines = std::max<uint64_t>(result.max_pending_lines, space.lines.size());
    // The files as every change of the file system left them, then as a crash that loses the changes not yet
    // durable from one of them on leaves them (MetadataDurability::at_sync, at_own_sync), sharing the budget.
    // A state's number counts on through them.
    std::vector<const UnsyncedFiles*> left;
    const UnsyncedFiles every{p.changes_since_sync, p.files};
    left.push_back(&every);
    for (const UnsyncedFiles& files : p.unsynced) left.push_back(&files);
    uint64_t first = 0;
    bool covered = false;
    for (size_t c = 0; c < left.size(); ++c) {
      const uint64_t share = budget / left.size() + (c < budget % left.size() ? 1 : 0);
      if (share == 0) continue;
      const Exploration ex = explore(space, share, mix64(o.seed ^ (p.index * 0x9e3779b97f4a7c15ULL)) ^ c);
      result.states_enumerated += ex.states.size();
      result.exhaustive_points += ex.exhaustive && c == 0 ? 1 : 0;
      FilesLeft files{left[c]->files, "", {}, first};
      if (c > 0) {
        // The earliest lost cut's content is laid last: it was there before the later ones.
        for (auto cut = p.cuts.rbegin(); cut != p.cuts.rend(); ++cut)
          if ((*cut)->change >= left[c]->kept) files.restored.push_back(cut->get());
        files.lost = describe_lost(left[c]->files, p.files, p.changes_since_sync - left[c]->kept, files.restored,
                                   changes_lost(o.metadata));
      }
      PMLAB_TRY(judge_states(p, m, space, ex, files, covered, replay));
      first += ex.states.size();
    }
    if (covered) ++result.crash_points_checked;
    result.dropped_values = std::max(result.dropped_values, m.dropped_values());
    return {};
  }

  // What a crash leaves of the files in the states of one exploration: the files, what it lost of the
  // changes since the last sync ("": none) and the content of the cuts it lost, and the number of its first
  // state.
  struct FilesLeft {
    const std::vector<FileAtCrash>& files;
    std::string lost;
    std::vector<const CutContent*> restored;
    uint64_t first = 0;
  };

  // Judges the states `ex` found at crash point `p`, but those another shard judges or an earlier state's
  // image was; `covered`: some were this shard's.
  Status judge_states(const CrashPointInfo& p, const LineModel& m, const CrashSpace& space, const Exploration& ex,
                      const FilesLeft& left, bool& covered, const Replay& replay) {
    for (uint64_t k = 0; k < ex.states.size(); ++k) {
      // A stop signal ends the run between states (the checker running is killed: platform/process.hpp).
      if (stop_requested()) return error(Errc::failed, "stopped on " + signal_name(stop_signal()));
      const uint64_t i = left.first + k;
      if (o.replay && o.replay->second != i) continue;
      const CrashState& state = ex.states[k];
      uint64_t h = state_hash(m.durable_hash(), m.durable(), space, state);
      // One image is two states where the operations it must hold differ, or where the program had exited.
      if ((p.ops.begun | p.ops.ended) != 0) h = mix64(h ^ mix64(p.ops.begun * 0x9e3779b97f4a7c15ULL + p.ops.ended));
      if (p.at_exit) h = mix64(h ^ 0x5851f42d4c957f2dULL);
      for (size_t f = 0; f < left.files.size(); ++f) {  // which files, under which names, how long
        if (!left.files[f].present) continue;
        h = mix64(h ^ (f + 1) ^ std::hash<std::string>{}(left.files[f].name) ^ mix64(left.files[f].length));
        for (const std::string& link : left.files[f].links) h = mix64(h ^ std::hash<std::string>{}(link));
      }
      for (const CutContent* cut : left.restored) h = mix64(h ^ cut->hash);
      if (o.shards > 1 && h % o.shards != o.shard) {
        note_done(false);
        continue;
      }
      covered = true;
      if (!o.replay && !seen.insert(h).second) {
        ++result.duplicate_states;
        note_done(false);
        continue;
      }
      PMLAB_TRY(judge(p, m, space, i, state, replay, left));
      replayed = replayed || o.replay.has_value();
    }
    return {};
  }

  // First replay: every crash point's state space, so the budget goes where the states are. Returns each
  // point's share.
  Result<std::vector<uint64_t>> allocate() {
    std::vector<double> sizes;
    std::vector<uint32_t> stacks;
    Replay sizing(trace, domain, o.metadata);
    if (Status s = sizing.run(
            [&](const CrashPointInfo& p, const LineModel& m) {
              sizes.push_back(make_space(m.pending(), m.durable(), granularity).states *
                              static_cast<double>(1 + p.unsynced.size()));
              stacks.push_back(p.stack);
              return Status{};
            },
            no_files);
        !s)
      return s;
    std::vector<uint64_t> allocation = allocate_exec_budget(sizes, stacks, o.budget, o.seed);
    result.crash_points = sizes.size();
    for (double s : sizes) result.state_space += s;
    shown.phase = result.label();
    for (uint64_t a : allocation) shown.total += a;
    if (o.replay) {
      if (o.replay->first == 0 || o.replay->first > sizes.size())
        return error(Errc::invalid_argument, "--replay " + replay_id(o.replay->first, o.replay->second) +
                                                 " names no crash point (the run has " + std::to_string(sizes.size()) +
                                                 ")");
      shown.total = 1;
    }
    return allocation;
  }

  // Builds state `i` of crash point `p` and hands it to a judge, with what explains it if it fails; with
  // --replay, also writes its image.
  Status judge(const CrashPointInfo& p, const LineModel& m, const CrashSpace& space, uint64_t i,
               const CrashState& state, const Replay& replay, const FilesLeft& left) {
    Judged j;
    // The crash point without the other ways its files could be left, which a failure does not need.
    j.at = CrashPointInfo{p.index, p.at_exit, p.thread, p.site, p.stack, p.call, p.ops, p.files, {}, 0, {}};
    j.state = i;
    j.lost = left.lost;
    j.strategy = to_string(state.strategy);
    j.persisted = describe(space, state, [&](size_t off) { return replay.where(off); });
    for (uint32_t l = 0; l < space.lines.size(); ++l) {
      const std::string what = describe_line(space, state, l);
      if (what.empty()) continue;
      j.lines.emplace_back(replay.where(space.lines[l].offset), what);
      const LineOrigin* origin = m.origin(space.lines[l].offset / kLineBytes);
      j.origins.push_back(origin ? *origin : LineOrigin{});
    }
    Judges::Slot& slot = judges.acquire();
    PMLAB_TRY(judges.restore(slot, m.durable(), m.content_pages(), m.has_content()));
    apply_state(space, state, slot.image);
    for (const CutContent* cut : left.restored) cut->restore(slot.image);
    slot.left = left.files;
    if (o.replay)
      if (Status s = judges.write_files({slot.image, m.size()}, m.content_pages(), o.replay_image, left.files); !s)
        return s;
    std::vector<std::string> env = {
        "PMLAB_CRASH_POINT=" + std::to_string(p.index), "PMLAB_CRASH_STATE=" + std::to_string(i),
        "PMLAB_CRASH_OPS_BEGUN=" + std::to_string(p.ops.begun), "PMLAB_CRASH_OPS_DONE=" + std::to_string(p.ops.ended),
        std::string("PMLAB_CRASH_AT_EXIT=") + (p.at_exit ? "1" : "0")};
    auto shared = std::make_shared<Judged>(std::move(j));
    return judges.submit(slot, std::move(env), [this, shared](const Verdict& v) { judged(*shared, v); });
  }

  void note_done(bool failure) {
    std::lock_guard lock(mutex);
    ++shown.done;
    if (failure) ++shown.failures;
    if (progress) progress(shown);
  }

  void judged(Judged& j, const Verdict& v) {
    {
      std::lock_guard lock(mutex);
      ++result.states_checked;
      if (!v.consistent) ++result.failures;
      // A replayed state is explained whatever its verdict: the user asked for that one.
      if (!v.consistent || o.replay) {
        j.verdict = v;
        failed.push_back(std::move(j));
      }
    }
    note_done(!v.consistent);
  }

  uint64_t cause_of(const Judged& j) const {
    FailureFacts facts{.at_exit = j.at.at_exit,
                       .call = static_cast<uint32_t>(j.at.call),
                       .crash_stack = &trace.stack(j.at.stack),
                       .persisted = {},
                       .lost = j.lost,
                       .outcome = j.verdict.outcome,
                       .output = j.verdict.output};
    for (const LineOrigin& o : j.origins)
      facts.persisted.emplace_back(&trace.stack(o.stored_before_fence ? o.stored_stack : j.at.stack),
                                   o.written_back_site);
    return failure_cause(facts);
  }

  // The first failure of each of the first causes, by crash point and state, in the program's terms.
  void explain(Symbolizer& symbols, size_t max) {
    std::sort(failed.begin(), failed.end(), [](const Judged& a, const Judged& b) {
      return std::tie(a.at.index, a.state) < std::tie(b.at.index, b.state);
    });
    std::vector<uint64_t> causes;
    for (const Judged& j : failed) causes.push_back(cause_of(j));
    const auto groups = group_alike(causes);
    result.failure_kinds = groups.size();
    std::vector<Judged> first;
    std::vector<std::vector<std::string>> alike;  // the replays of those after the first, up to kAlikeListed
    for (size_t g = 0; g < groups.size() && g < max; ++g) {
      auto& listed = alike.emplace_back();
      for (size_t k = 1; k < groups[g].size() && listed.size() < kAlikeListed; ++k) {
        const Judged& a = failed[groups[g][k]];
        listed.push_back(replay_id(a.at.index, a.state));
      }
      first.push_back(std::move(failed[groups[g].front()]));
    }
    failed = std::move(first);
    std::vector<uint64_t> wanted;  // one addr2line per module for every address named below
    auto want = [&](uint32_t stack) {
      wanted.insert(wanted.end(), trace.stack(stack).begin(), trace.stack(stack).end());
    };
    for (const Judged& j : failed) {
      want(j.at.stack);
      for (const LineOrigin& o : j.origins) {
        want(o.stored_before_fence ? o.stored_stack : j.at.stack);
        wanted.push_back(o.written_back_site);
      }
    }
    symbols.resolve(wanted);
    for (size_t i = 0; i < failed.size(); ++i) {
      const Judged& j = failed[i];
      ExecFailure f{
          .crash_point = j.at.index,
          .state = j.state,
          .ops = j.at.ops,
          .at_exit = j.at.at_exit,
          .call = j.at.call,
          .strategy = j.strategy,
          .persisted = j.persisted,
          .lost = j.lost,
          .consistent = j.verdict.consistent,
          .outcome = j.verdict.consistent ? "consistent" : j.verdict.outcome,
          .output = j.verdict.output,
          .stack = {},
          .lines = {},
          .alike = {
              .cause = causes[groups[i].front()], .others = groups[i].size() - 1, .replays = std::move(alike[i])}};
      for (const Frame& fr : symbols.own_frames(trace.stack(j.at.stack), kStackFrames)) f.stack.push_back(fr.text());
      for (size_t l = 0; l < j.lines.size(); ++l)
        f.lines.push_back({j.lines[l].first, j.lines[l].second, stored_text(j.origins[l], j.at, symbols, trace),
                           written_back_text(j.origins[l], symbols)});
      result.details.push_back(std::move(f));
    }
  }
};

}  // namespace

namespace {

std::string program_name(const std::vector<std::string>& program) {
  return program.empty() ? "program" : fs::path(program[0]).filename().string();
}

}  // namespace

const char* check_option(ExecOptions::CheckBy by) {
  switch (by) {
    case ExecOptions::CheckBy::command: return "--check";
    case ExecOptions::CheckBy::server: return "--check-server";
    case ExecOptions::CheckBy::python: return "--check-python";
  }
  return "--check";
}

std::string ExecRun::label() const {
  return std::string(persist::to_string(domain)) + "/" + to_string(granularity) +
         (schedule > 1 ? ", schedule " + std::to_string(schedule) : "");
}

uint64_t ExecReport::failures() const {
  uint64_t n = 0;
  for (const ExecRun& r : runs) n += r.failures;
  return n;
}

namespace {

// What is wrong with the options, found before anything runs.
// Every traced run of a campaign, each judged at every granularity.
struct Campaign {
  const ExecOptions& o;
  const std::function<void(const ExecProgress&)>& progress;
  const std::string& scratch;
  ExecReport report;
  ModuleCodeCache module_code;  // the same modules in every run
  FirstRun first;
  // The program's own instructions the runtime traps, decided after the first traced run.
  bool traps_decided = false;
  std::string trap_sites;                              // their file, "" when none
  std::set<std::pair<std::string, uint64_t>> trapped;  // (module, own address)
  std::vector<std::string> trap_notes;                 // what could not be trapped
  bool random_image_passed = false;
  std::map<std::pair<persist::Domain, Granularity>, std::unordered_set<uint64_t>> seen;

  // Writes the traps for the program's own code in `modules` and keeps what they trap; false where that is
  // what the runtime traps already.
  Result<bool> trap(const std::vector<std::string>& modules, std::vector<std::string>& notes) {
    const std::vector<ModuleTraps> traps = own_traps(modules, module_code, notes);
    auto addresses = trapped_addresses(traps);
    if (addresses == trapped) return false;
    trap_sites = (fs::path(scratch) / "trap-sites").string();
    PMLAB_TRY(write_trap_sites(traps, trap_sites));
    trapped = std::move(addresses);
    return true;
  }

  // Before the first traced run: the executable's own instructions, so that a program that has them all
  // there runs once. Where it is a script or the system's, its first run shows which modules are its own.
  Status trap_executable() {
    if (!o.trap_own_instructions || (!o.trace.empty() && fs::exists(o.trace))) return {};
    const auto program = platform::find_program(o.program.front());
    std::error_code ec;
    const std::string path = program ? fs::canonical(*program, ec).string() : std::string();
    if (path.empty() || ec || !own_code(path)) return {};
    std::vector<std::string> ignored;  // said after the first run, where every module is searched
    return trap({path}, ignored).status();
  }

  // After the first traced run: the traps for every module of the program's own code that it loaded; where
  // they trap more than the run had trapped, the run is to be traced again with them (true).
  Result<bool> decide_traps(const TraceFile& t, const TracedRun& traced) {
    traps_decided = true;
    if (!o.trap_own_instructions || traced.outcome.rfind("reused ", 0) == 0) return false;
    std::vector<std::string> modules;
    for (const TraceModule* m : own_modules(t)) modules.push_back(m->path);
    return trap(modules, trap_notes);
  }

  Status trace_and_judge(persist::Domain domain, uint32_t schedule) {
    std::string phase = "tracing " + std::string(persist::to_string(domain));
    if (o.schedules > 1) phase += ", schedule " + std::to_string(schedule);
    if (progress) progress({phase, 0, 0, 0});
    auto traced = run_or_reuse(o, domain, schedule, scratch, first, trap_sites);
    if (!traced) return traced.status();
    auto trace = TraceFile::open(traced->trace_path);
    if (!trace) return trace.status();
    first.found(*trace, traced->trace_path);
    if (!traps_decided) {
      auto trap = decide_traps(*trace, *traced);
      if (!trap) return trap.status();
      if (*trap) {
        // Written by this campaign, so not one to reuse; kept aside for the files every later run starts from.
        const std::string aside = (fs::path(scratch) / "trace-untrapped").string();
        std::error_code ec;
        fs::copy_file(traced->trace_path, aside, fs::copy_options::overwrite_existing, ec);
        if (!ec) fs::remove(traced->trace_path, ec);
        if (ec) return error(Errc::io_error, "cannot move the trace " + traced->trace_path + " aside: " + ec.message());
        if (first.trace == traced->trace_path) first.trace = aside;
        traced = run_or_reuse(o, domain, schedule, scratch, first, trap_sites);
        if (!traced) return traced.status();
        trace = TraceFile::open(traced->trace_path);
        if (!trace) return trace.status();
      }
      traced->notes.insert(traced->notes.end(), trap_notes.begin(), trap_notes.end());
    }
    const Replay layout(*trace, domain);
    describe_trace(*traced, *trace, layout, o.schedules);
    if (layout.files().empty()) {
      std::string why =
          "the program mapped no persistent memory and wrote none (PMDK's pools are found by themselves; name a "
          "file it maps or writes itself with --pool)";
      for (const auto& n : trace->notes()) why += "; " + n;  // they may say why
      return error(Errc::failed, why);
    }
    const auto at_end = paths_at_end(*trace, layout.files());
    note_untraced_first_pool(*traced, layout.files(), at_end);
    Symbolizer symbols(trace->modules());
    // The findings are the same at every granularity: one replay gives them.
    Replay findings(*trace, domain);
    if (Status s = findings.run([](const CrashPointInfo&, const LineModel&) { return Status{}; }, no_files); !s)
      return s;
    add_findings(*traced, findings.findings(), symbols, *trace);
    note_unseen_instructions(*traced, *trace, findings.findings(), symbols, module_code, trapped);
    report.traces.push_back(*traced);
    if (o.trace_only) return {};
    PMLAB_TRY(check_reads_crash_images(o.check, layout.files()));
    auto judges = start_judges(o, *trace, layout, at_end, scratch);
    if (!judges) return judges.status();
    const bool probed = report.traces.size() == 1 && !o.replay;
    if (probed) {
      auto passed = passes_random_bytes(**judges, o, findings.content_pages());
      if (!passed) return passed.status();
      random_image_passed = *passed;
    }
    uint64_t judged = 0;
    for (Granularity g : o.granularities) {
      GranularityRun run{o, *trace, domain, schedule, g, **judges, seen[{domain, g}], progress, {}, {}, {}, {}};
      PMLAB_TRY(run.run());
      if (const uint64_t taken = run.result.changes_taken_as_durable; taken > 0 && g == o.granularities.front()) {
        const std::string kept = std::to_string(kMaxNotDurable);
        report.traces.back().notes.push_back(std::to_string(taken) +
                                             " changes of the file system were taken as durable before a sync made "
                                             "them so: a replay keeps the latest " +
                                             kept + " not yet durable, and a crash loses none of those before");
      }
      run.explain(symbols, o.max_failure_details);
      judged += run.result.states_checked;
      report.runs.push_back(std::move(run.result));
    }
    if (probed && o.check_by == ExecOptions::CheckBy::server && judged > 0)
      PMLAB_TRY(probe_again(**judges, findings.content_pages(), judged));
    return {};
  }

  // `{}` names the first --pool's image. A path the run never mapped or wrote (a typo, a file another run
  // makes) is in no crash state: the check is given a path where no file is, at every state.
  void note_untraced_first_pool(TracedRun& traced, const std::vector<ImageFile>& files,
                                const std::vector<std::vector<std::string>>& at_end) const {
    std::error_code ec;
    if (o.pools.empty() || fs::is_directory(o.pools.front(), ec) || traced_file(files, o.pools.front(), at_end)) return;
    std::string names;
    for (size_t i = 0; i < files.size() && i < 4; ++i) names += (i ? ", " : "") + files[i].path;
    if (files.size() > 4) names += ", …";
    traced.notes.push_back("the first --pool, " + o.pools.front() +
                           ", whose crash image {} and $PMLAB_CRASH_IMAGE name, is a file the run neither mapped "
                           "nor wrote: no crash state holds it, so the check is given a path where no file is "
                           "(the run's files: " +
                           names + ")");
  }

  // A server that keeps something from one image to the next (an open pool, what it read) judges an image
  // by what came before it. The image of random bytes it judged first is judged again once it has judged
  // the states: another verdict on the same image shows such a server (not every one: a server whose verdict
  // on random bytes cannot change, or whose kept state does not touch it, passes).
  Status probe_again(Judges& judges, const std::vector<size_t>& pages, uint64_t judged) {
    auto passed = passes_random_bytes(judges, o, pages);
    if (!passed) return passed.status();
    if (*passed == random_image_passed) return {};
    const auto verdict = [](bool consistent) { return consistent ? "consistent" : "inconsistent"; };
    report.traces.back().notes.push_back(
        std::string("--check-server judged one image of random bytes ") + verdict(random_image_passed) +
        " before the crash states and " + verdict(*passed) + " after " + std::to_string(judged) +
        " of them: it keeps something from one image to the next, so a state's verdict may be that of the "
        "states before it. Keep nothing between requests (or judge each in a fork); --check-python forks");
    return {};
  }
};

}  // namespace

Result<ExecReport> run_exec(const ExecOptions& o, const std::function<void(const ExecProgress&)>& progress) {
  PMLAB_TRY(check_options(o));
  // The user's --work-dir is kept; a scratch directory of our own is removed afterwards.
  std::optional<ScratchDirectory> own_scratch;
  if (o.work_dir.empty()) {
    auto made = ScratchDirectory::make("pmlab-exec");
    if (!made) return made.status();
    own_scratch.emplace(std::move(*made));
  } else {
    std::error_code ec;
    fs::create_directories(o.work_dir, ec);
    if (ec) return error(Errc::io_error, "cannot create " + o.work_dir + ": " + ec.message());
  }
  const std::string scratch = own_scratch ? own_scratch->path() : o.work_dir;
  // Before the judges' threads start, which inherit it and start the checks.
  std::optional<platform::ProcessesWithoutAslr> fixed_layout;
  if (!o.keep_aslr) fixed_layout.emplace();
  Campaign campaign{o, progress, scratch, {}, {}, {}, false, {}, {}, {}, false, {}};
  campaign.report.program = program_name(o.program);
  PMLAB_TRY(campaign.trap_executable());
  for (persist::Domain domain : o.domains)
    for (uint32_t schedule = 1; schedule <= o.schedules; ++schedule)
      PMLAB_TRY(campaign.trace_and_judge(domain, schedule));
  ExecReport& report = campaign.report;
  if (fixed_layout && !fixed_layout->ok() && !report.traces.empty())
    report.traces.front().notes.push_back("address-space randomization stays on (" + fixed_layout->why() +
                                          "): pointers the program stores may differ from run to run, and with "
                                          "them the states a granularity tears out of them");
  if (campaign.random_image_passed && report.failures() == 0)
    report.traces.front().notes.push_back(
        "--check passed an image of random bytes too: unless its recovery accepts any content, it does not read "
        "the crash images ({}, $PMLAB_CRASH_IMAGE or $PMLAB_CRASH_DIR), and its verdicts say nothing of the "
        "crash states");
  return std::move(report);
}

}  // namespace pmlab::crash::exec
