#include "pmlab/suites/idio/peers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "pmlab/common/files.hpp"
#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/process.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/topology.hpp"

namespace pmlab::suites::idio {

namespace fs = std::filesystem;

Result<ToolOutput> run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                            double timeout_s) {
  platform::ProcessSpec spec;
  spec.argv = argv;
  spec.set_env = env;
  spec.timeout_s = timeout_s;
  auto run = platform::run_process(spec);
  if (!run)
    return error(run.status().code() == Errc::not_found ? Errc::unsupported : run.status().code(),
                 run.status().message());
  if (run->timed_out)
    return error(Errc::failed,
                 argv[0] + " did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s");
  if (run->signal) return error(Errc::failed, argv[0] + " was " + run->outcome());
  if (run->exit_code == 127 && run->out.empty()) return error(Errc::unsupported, "cannot execute " + argv[0]);
  if (run->exit_code != 0) {
    const std::string why = platform::tail_lines(run->err.empty() ? run->out : run->err, 1);
    return error(Errc::failed,
                 argv[0] + " exited with " + std::to_string(run->exit_code) + (why.empty() ? "" : ": " + why));
  }
  return ToolOutput{run->exit_code, std::move(run->out), std::move(run->err)};
}

// ---------------------------------------------------------------------------------------------- likwid

std::string likwid_kernel(LikwidKind kind) {
  const auto& cpu = platform::CpuFeatures::host();
  const std::string isa = cpu.avx512f ? "avx512" : cpu.avx2 ? "avx" : "sse";
  return (kind == LikwidKind::load ? "load_" : "store_mem_") + isa;
}

Result<double> parse_likwid_bandwidth(const std::string& report) {
  std::istringstream in(report);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("MByte/s:", 0) != 0) continue;
    try {
      const double mb = std::stod(line.substr(8));
      if (mb > 0) return mb * 1e6 / 1048576.0;
    } catch (const std::exception&) {}
    return error(Errc::failed, "likwid-bench printed an unreadable bandwidth line: '" + line + "'");
  }
  return error(Errc::failed, "likwid-bench printed no 'MByte/s:' line");
}

Result<double> run_likwid(LikwidKind kind, int threads, uint64_t bytes, uint64_t iterations, bool huge_pages) {
  const std::string kernel = likwid_kernel(kind);
  // N: the node-wide thread domain; the size is split among the threads. kB keeps it exact.
  const std::string workgroup = "N:" + std::to_string(bytes / 1000) + "kB:" + std::to_string(threads);
  std::vector<std::string> env;
  if (huge_pages) env.push_back("GLIBC_TUNABLES=glibc.malloc.hugetlb=1");
  auto out = run_tool(
      {"likwid-bench", "-t", kernel, "-w", workgroup, "-i", std::to_string(std::max<uint64_t>(iterations, 10))}, env,
      120);
  if (!out) return out.status();
  auto mib = parse_likwid_bandwidth(out->out);
  if (!mib) return error(Errc::failed, "likwid-bench " + kernel + ": " + mib.status().message());
  return mib;
}

// ------------------------------------------------------------------------------------------------- fio

std::vector<std::string> fio_arguments(const FioJob& job, const std::string& name, const std::vector<int>& cpus) {
  const bool write = job.op != StreamOp::load;
  const bool seq = job.pattern == bench::Pattern::seq;
  std::string rw = write ? (seq ? "write" : "randwrite") : (seq ? "read" : "randread");
  std::string cpu_list;
  for (size_t i = 0; i < cpus.size(); ++i) cpu_list += (i ? "," : "") + std::to_string(cpus[i]);
  const int ms = std::max(100, static_cast<int>(job.duration_s * 1000));
  std::vector<std::string> args = {
      "--name=" + name,
      "--directory=" + job.directory,
      "--ioengine=libpmem",
      "--rw=" + rw,
      "--bs=" + std::to_string(job.size),
      "--size=" + std::to_string(job.span),
      "--numjobs=" + std::to_string(job.threads),
      "--thread",
      "--iodepth=1",
      // nt-stores (direct=1) or stores + flush (direct=0); sync=1 drains (fences) after every write, as
      // our p-store does. A plain store drains nothing and flushes nothing (PMEM_NO_FLUSH, below).
      std::string("--direct=") + (job.op == StreamOp::pstore && job.nontemporal ? "1" : "0"),
      std::string("--sync=") + (job.op == StreamOp::pstore ? "1" : "0"),
      "--time_based",
      "--runtime=" + std::to_string(ms) + "ms",
      "--ramp_time=" + std::to_string(std::max(20, ms / 5)) + "ms",
      "--group_reporting",
      "--output-format=json",
  };
  if (!cpu_list.empty()) {
    args.push_back("--cpus_allowed=" + cpu_list);
    args.push_back("--cpus_allowed_policy=split");
  }
  if (!seq) args.push_back("--norandommap");
  return args;
}

std::vector<std::string> fio_environment(const FioJob& job) {
  // Forcing "is pmem" is right on real PMEM too (it is), and makes fio flush CPU caches instead of calling
  // msync on an emulated pool or DRAM, as our p-store does.
  std::vector<std::string> env = {"PMEM_IS_PMEM_FORCE=1"};
  if (job.op == StreamOp::store) env.push_back("PMEM_NO_FLUSH=1");
  return env;
}

Result<double> parse_fio_bandwidth(const std::string& text, bool write) {
  // fio may print notes before the JSON document.
  const size_t start = text.find('{');
  if (start == std::string::npos) return error(Errc::failed, "fio printed no JSON");
  nlohmann::json doc = nlohmann::json::parse(text.substr(start), nullptr, false);
  if (doc.is_discarded() || !doc.contains("jobs") || !doc["jobs"].is_array() || doc["jobs"].empty())
    return error(Errc::failed, "fio's JSON has no jobs");
  double bytes_per_s = 0;
  for (const auto& j : doc["jobs"]) {
    const char* dir = write ? "write" : "read";
    if (!j.contains(dir) || !j[dir].contains("bw_bytes") || !j[dir]["bw_bytes"].is_number())
      return error(Errc::failed, std::string("fio's JSON has no ") + dir + ".bw_bytes");
    if (j.contains("error") && j["error"].is_number() && j["error"].get<int>() != 0)
      return error(Errc::failed, "fio job failed with error " + std::to_string(j["error"].get<int>()));
    bytes_per_s += j[dir]["bw_bytes"].get<double>();
  }
  if (bytes_per_s <= 0) return error(Errc::failed, "fio reported no bandwidth");
  return bytes_per_s / 1048576.0;
}

Result<double> run_fio(const FioJob& job) {
  if (job.directory.empty()) return error(Errc::invalid_argument, "fio job without a directory");
  const std::string name = "pmlab-idio-fio-" + std::to_string(getpid());
  std::vector<int> cpus = platform::allowed_cpus();
  std::vector<std::string> argv = {"fio"};
  for (auto& a : fio_arguments(job, name, cpus)) argv.push_back(std::move(a));
  auto out = run_tool(argv, fio_environment(job), 60 + job.duration_s * 4);
  // fio names each job's file <name>.<job>.<file>: remove them whatever happened.
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(job.directory, ec))
    if (entry.path().filename().string().rfind(name + ".", 0) == 0) fs::remove(entry.path(), ec);
  if (!out) return out.status();
  return parse_fio_bandwidth(out->out, job.op != StreamOp::load);
}

std::string directory_beside(const void* memory) {
  const auto addr = reinterpret_cast<uintptr_t>(memory);
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    uintptr_t lo = 0, hi = 0;
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) != 2 || addr < lo || addr >= hi) continue;
    const size_t slash = line.find('/');
    if (slash == std::string::npos) break;  // anonymous: DRAM
    return fs::path(line.substr(slash)).parent_path().string();
  }
  return scratch_base_directory().string();
}

void record_fio_beside(bench::RunContext& ctx, FioJob job, const void* memory, double ours_mib_s) {
  job.directory = directory_beside(memory);
  auto fio = run_fio(job);
  if (!fio) {
    ctx.note("fio", "no fio number: " + fio.status().message());
    return;
  }
  ctx.metric("fio_bandwidth", *fio, "MiB/s");
  ctx.metric("ratio_vs_fio", ours_mib_s / *fio, "ratio");
  ctx.note("fio", "fio " + std::string(job.op == StreamOp::load ? "read" : "write") +
                      " with the libpmem engine, bs=" + std::to_string(job.size) +
                      ", numjobs=" + std::to_string(job.threads) + ", files in " + job.directory);
}

}  // namespace pmlab::suites::idio
