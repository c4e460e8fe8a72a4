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

#include "pmlab/platform/clock.hpp"
#include "pmlab/platform/cpu.hpp"
#include "pmlab/platform/topology.hpp"

extern char** environ;

namespace pmlab::suites::idio {

namespace fs = std::filesystem;

std::optional<std::string> find_program(const std::string& name) {
  if (name.find('/') != std::string::npos) return access(name.c_str(), X_OK) == 0 ? std::optional(name) : std::nullopt;
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + name;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return std::nullopt;
}

namespace {

std::string last_line(const std::string& text) {
  std::string t = text;
  while (!t.empty() && (t.back() == '\n' || t.back() == '\r' || t.back() == ' ')) t.pop_back();
  const size_t nl = t.rfind('\n');
  return nl == std::string::npos ? t : t.substr(nl + 1);
}

}  // namespace

Result<ToolOutput> run_tool(const std::vector<std::string>& argv, const std::vector<std::string>& env, double timeout_s) {
  if (argv.empty()) return error(Errc::invalid_argument, "no program to run");
  const auto program = find_program(argv[0]);
  if (!program) return error(Errc::unsupported, argv[0] + " not found in PATH");
  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0) return error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  if (pipe2(err_pipe, O_CLOEXEC) != 0) {
    close(out_pipe[0]);
    close(out_pipe[1]);
    return error(Errc::io_error, std::string("pipe: ") + std::strerror(errno));
  }
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) env_strings.emplace_back(*e);
  for (const auto& add : env) {
    const std::string key = add.substr(0, add.find('=') + 1);
    std::erase_if(env_strings, [&](const std::string& s) { return s.rfind(key, 0) == 0; });
    env_strings.push_back(add);
  }
  std::vector<char*> cargv, cenv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  for (const auto& e : env_strings) cenv.push_back(const_cast<char*>(e.c_str()));
  cenv.push_back(nullptr);

  const pid_t pid = fork();
  if (pid < 0) return error(Errc::io_error, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(out_pipe[1], STDOUT_FILENO);
    dup2(err_pipe[1], STDERR_FILENO);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    execve(program->c_str(), cargv.data(), cenv.data());
    _exit(127);
  }
  close(out_pipe[1]);
  close(err_pipe[1]);
  ToolOutput result;
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  const uint64_t deadline = platform::Clock::monotonic_ns() + static_cast<uint64_t>(timeout_s * 1e9);
  bool timed_out = false;
  int open_fds = 2;
  char buffer[65536];
  while (open_fds > 0) {
    const uint64_t now = platform::Clock::monotonic_ns();
    if (now >= deadline) {
      timed_out = true;
      break;
    }
    const int wait_ms = static_cast<int>(std::min<uint64_t>((deadline - now) / 1000000 + 1, 1000));
    const int ready = poll(fds, 2, wait_ms);
    if (ready < 0 && errno != EINTR) break;
    for (auto& fd : fds) {
      if (fd.fd < 0 || !(fd.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fd.fd, buffer, sizeof buffer);
      if (n > 0) {
        (fd.fd == out_pipe[0] ? result.out : result.err).append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fd.fd);
        fd.fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& fd : fds)
    if (fd.fd >= 0) close(fd.fd);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (timed_out) return error(Errc::failed, argv[0] + " did not finish within " + std::to_string(static_cast<int>(timeout_s)) + " s");
  if (WIFSIGNALED(status)) return error(Errc::failed, argv[0] + " was killed by signal " + std::to_string(WTERMSIG(status)));
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  if (result.exit_code == 127 && result.out.empty()) return error(Errc::unsupported, "cannot execute " + *program);
  if (result.exit_code != 0) {
    std::string why = last_line(result.err.empty() ? result.out : result.err);
    return error(Errc::failed, argv[0] + " exited with " + std::to_string(result.exit_code) + (why.empty() ? "" : ": " + why));
  }
  return result;
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
    } catch (const std::exception&) {
    }
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
  auto out = run_tool({"likwid-bench", "-t", kernel, "-w", workgroup, "-i", std::to_string(std::max<uint64_t>(iterations, 10))},
                      env, 120);
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
  std::error_code ec;
  return fs::is_directory("/dev/shm", ec) ? "/dev/shm" : fs::temp_directory_path(ec).string();
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
                      " with the libpmem engine, bs=" + std::to_string(job.size) + ", numjobs=" +
                      std::to_string(job.threads) + ", files in " + job.directory);
}

}  // namespace pmlab::suites::idio
