#include "pmlab/crash/exec/judges.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <linux/falloc.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "pmlab/common/files.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/common/text.hpp"
#include "pmlab/crash/exec/trace_format.hpp"
#include "pmlab/platform/line_server.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

namespace fs = std::filesystem;
constexpr size_t kPage = trace::kPageBytes;  // the granule images are built, compared and punched in

// Writes [data, data+n) to `path` as a file of n bytes that holds the listed pages (page indices from
// `first`) and holes elsewhere, which read zero: the rest of an image is.
Status write_sparse(const std::string& path, const std::byte* data, size_t n, size_t first,
                    const std::vector<size_t>& pages) {
  FileDescriptor fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0 || ftruncate(fd.get(), static_cast<off_t>(n)) != 0)
    return errno_status(errno, "cannot write the crash image " + path);
  for (size_t page : pages) {
    if (page < first || (page - first) * kPage >= n) continue;
    const size_t at = (page - first) * kPage, len = std::min(kPage, n - at);
    for (size_t done = 0; done < len;) {
      const ssize_t w = pwrite(fd.get(), data + at + done, len - done, static_cast<off_t>(at + done));
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return errno_status(errno, "cannot write the crash image " + path);
      done += static_cast<size_t>(w);
    }
  }
  return {};
}

}  // namespace

// One image file of a slot, kept open and mapped at its place in the slot's image between checks.
class SlotFile {
 public:
  // The file at `path` (opened anew where a checker removed or replaced it), `n` bytes long (a tail a checker
  // added goes; a part it cut comes back as a hole), mapped at `at`.
  Status attach(const std::string& path, std::byte* at, size_t n) {
    struct stat st {};
    if (fd_.get() < 0 || ::stat(path.c_str(), &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
      fd_ = FileDescriptor(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
      if (fd_.get() < 0 || fstat(fd_.get(), &st) != 0)
        return errno_status(errno, "cannot write the crash image " + path);
      dev_ = st.st_dev;
      ino_ = st.st_ino;
      mapped_ = false;
    } else if (fstat(fd_.get(), &st) != 0) {
      return errno_status(errno, "cannot write the crash image " + path);
    }
    if (static_cast<size_t>(st.st_size) != n && ftruncate(fd_.get(), static_cast<off_t>(n)) != 0)
      return errno_status(errno, "cannot write the crash image " + path);
    if (!mapped_ && n > 0) {
      if (mmap(at, n, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd_.get(), 0) == MAP_FAILED)
        return errno_status(errno, "cannot map the crash image " + path);
      mapped_ = true;
    }
    at_ = at;
    size_ = n;
    return {};
  }

  // Makes every page `listed` does not mark (a page index in the file) zero: where the file holds data
  // there, a hole is punched. Pages are never read for it: reading a hole through a mapping fills it.
  Status zero_unlisted(const std::function<bool(size_t)>& listed) {
    for (off_t from = 0; static_cast<size_t>(from) < size_;) {
      const off_t data = lseek(fd_.get(), from, SEEK_DATA);
      if (data < 0) return errno == ENXIO ? Status{} : errno_status(errno, "cannot read a crash image's extents");
      off_t hole = lseek(fd_.get(), data, SEEK_HOLE);
      hole = hole <= data ? static_cast<off_t>(size_) : std::min(hole, static_cast<off_t>(size_));
      for (size_t page = static_cast<size_t>(data) / kPage; page * kPage < static_cast<size_t>(hole);) {
        size_t end = page;
        while (end * kPage < static_cast<size_t>(hole) && !listed(end)) ++end;
        if (end > page) PMLAB_TRY(zero(page * kPage, std::min(end * kPage, size_) - page * kPage));
        page = end + 1;
      }
      from = hole;
    }
    return {};
  }

 private:
  Status zero(size_t at, size_t n) {
    if (fallocate(fd_.get(), FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(at),
                  static_cast<off_t>(n)) == 0)
      return {};
    if (errno != EOPNOTSUPP) return errno_status(errno, "cannot clear a crash image");
    std::memset(at_ + at, 0, n);  // a file system without holes
    return {};
  }

  FileDescriptor fd_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  bool mapped_ = false;
  std::byte* at_ = nullptr;
  size_t size_ = 0;
};

namespace {

// The last `lines` lines of the file, of what it holds past `since`.
std::string read_tail(const std::string& path, size_t lines, uint64_t since = 0) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const off_t size = lseek(fd, 0, SEEK_END);
  const off_t from = std::max<off_t>({0, size - 8192, static_cast<off_t>(std::min<uint64_t>(since, INT64_MAX))});
  std::string text(static_cast<size_t>(size - from), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return platform::tail_lines(text, lines);
}

constexpr uint64_t kServerLogBytes = 1 << 20;

// The checker is not the traced program: nothing of the tracer reaches it.
std::vector<std::string> not_for_the_checker() {
  return {"LD_PRELOAD",        "PMLAB_TRACE_FILE",   "PMLAB_TRACE_PID",
          "PMLAB_TRACE_POOLS", "PMLAB_TRACE_DOMAIN", "PMLAB_TRACE_TRAPS"};
}

}  // namespace

Judges::Slot::~Slot() {
  if (image != nullptr) munmap(image, bytes);
}

Result<std::unique_ptr<Judges>> Judges::start(const JudgeOptions& options) {
  std::unique_ptr<Judges> j(new Judges(options));
  // Each file's image keeps its name (a checker may look for it), made unique where files at two paths share
  // one. Files at one path (one replaced another) share it: a crash leaves one of them there.
  const auto& files = options.files;
  for (size_t i = 0; i < files.size(); ++i) {
    std::string name = j->given_name(i);
    if (name.empty()) name = "pool";
    for (size_t k = 0; k < i; ++k)
      if (j->names_[k] == name && files[k].path != files[i].path) {
        const fs::path p(name);  // beside the other, in its directory
        name = (p.parent_path() / (std::to_string(i) + "-" + p.filename().string())).string();
      }
    const auto same_path = std::find_if(files.begin(), files.begin() + static_cast<std::ptrdiff_t>(i),
                                        [&](const ImageFile& f) { return f.path == files[i].path; });
    j->names_.push_back(same_path != files.begin() + static_cast<std::ptrdiff_t>(i)
                            ? j->names_[static_cast<size_t>(same_path - files.begin())]
                            : name);
  }
  const unsigned jobs = std::max(1u, options.jobs);
  // One slot more than checkers, so the next image is built while every checker runs.
  for (size_t s = 0; s < jobs + 1u; ++s) {
    auto slot = std::make_unique<Slot>();
    slot->index = s;
    const fs::path home = fs::path(options.work_dir) / ("slot-" + std::to_string(s));
    slot->dir = (home / "crash").string();
    slot->store = (home / "images").string();
    for (const std::string& d : {slot->dir, slot->store}) {
      std::error_code ec;
      fs::create_directories(d, ec);
      if (ec) return error(Errc::io_error, "cannot create " + d + ": " + ec.message());
    }
    // The image's address range, held so the files map side by side in it.
    void* range = mmap(nullptr, std::max<size_t>(options.image_bytes, 1), PROT_NONE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (range == MAP_FAILED) return errno_status(errno, "cannot reserve the address range of a crash image");
    slot->image = static_cast<std::byte*>(range);
    slot->bytes = std::max<size_t>(options.image_bytes, 1);
    for (size_t i = 0; i < options.files.size(); ++i) slot->files.push_back(std::make_unique<SlotFile>());
    j->free_.push_back(slot.get());
    j->slots_.push_back(std::move(slot));
  }
  for (unsigned w = 0; w < jobs; ++w) j->workers_.emplace_back([p = j.get(), w] { p->work(w); });
  return j;
}

Judges::~Judges() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  for (auto& w : workers_) w.join();
}

std::string Judges::image_path(const Slot& slot, size_t file) const {
  return (fs::path(slot.store) / std::to_string(file)).string();
}

std::string Judges::shown_path(const Slot& slot, size_t file) const {
  return (fs::path(slot.dir) / names_[file]).string();
}

std::string Judges::given_name(size_t file) const {
  return file < options_.names.size() ? options_.names[file] : fs::path(options_.files[file].path).filename().string();
}

std::set<std::string> Judges::lost_directories(const std::vector<FileAtCrash>& left) const {
  // A name two entries had (a directory made where another was moved from) is lost only where neither is there.
  std::set<std::string> lost, there;
  for (size_t d = 0; d < options_.files.size() && d < left.size(); ++d)
    if (options_.files[d].directory) (in_image(left[d]) ? there : lost).insert(left[d].name);
  for (const std::string& name : there) lost.erase(name);
  return lost;
}

// A file whose directory a crash lost (made, not yet durable) is not reached by its path.
bool Judges::left_there(const std::vector<FileAtCrash>& left, size_t file, const std::set<std::string>& lost) const {
  if (file < left.size() && !in_image(left[file])) return false;
  return reachable(file < left.size() ? left[file].name : names_[file], lost);
}

bool Judges::reachable(const std::string& name, const std::set<std::string>& lost) {
  for (size_t slash = name.rfind('/'); slash != std::string::npos && slash > 0; slash = name.rfind('/', slash - 1))
    if (lost.count(name.substr(0, slash))) return false;
  return true;
}

// A file's links: `placed` (in `dir`) under each other name a crash leaves it, the same file.
Status Judges::place_links(const std::string& dir, const std::string& placed, const FileAtCrash& left,
                           const std::set<std::string>& lost) {
  for (const std::string& l : left.links) {
    if (l.empty() || !reachable(l, lost)) continue;
    const std::string at = (fs::path(dir) / l).string();
    std::error_code ec;
    fs::create_directories(fs::path(at).parent_path(), ec);
    if (ec) return error(Errc::io_error, "cannot place the crash image " + at + ": " + ec.message());
    ::unlink(at.c_str());
    if (::link(placed.c_str(), at.c_str()) != 0) return errno_status(errno, "cannot place the crash image " + at);
  }
  return {};
}

// A checker may add files (a database's lock or index file), remove or replace its image's: each check
// starts from a directory that holds the present files' images and nothing else.
Status Judges::lay_out(const Slot& slot) const {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(slot.dir, ec)) fs::remove_all(entry.path(), ec);
  if (ec) return error(Errc::io_error, "cannot clear " + slot.dir + ": " + ec.message());
  const std::set<std::string> lost = lost_directories(slot.left);
  for (size_t i = 0; i < options_.files.size(); ++i) {
    const ImageFile& f = options_.files[i];
    const FileAtCrash left = i < slot.left.size() ? slot.left[i] : FileAtCrash{true, names_[i], f.size};
    if (!left_there(slot.left, i, lost)) continue;
    if (f.directory) {
      if (fs::create_directories(fs::path(slot.dir) / left.name, ec); ec)
        return error(Errc::io_error, "cannot make the crash image's directory " + left.name + ": " + ec.message());
      continue;
    }
    const bool renamed = i < slot.left.size() && left.name != given_name(i);
    const std::string shown = renamed ? (fs::path(slot.dir) / left.name).string() : shown_path(slot, i);
    // Its directory, made now: the directories' own entries follow the files.
    if (left.name.find('/') != std::string::npos) {
      fs::create_directories(fs::path(shown).parent_path(), ec);
      if (ec) return error(Errc::io_error, "cannot place the crash image " + shown + ": " + ec.message());
    }
    ::unlink(shown.c_str());  // a file at the same path the crash leaves instead
    if (::link(image_path(slot, i).c_str(), shown.c_str()) != 0)
      return errno_status(errno, "cannot place the crash image " + shown);
    // The file as long as the crash leaves it, not its page-rounded image (acquire() extends it again).
    if (left.length < f.size && ::truncate(shown.c_str(), static_cast<off_t>(left.length)) != 0)
      return errno_status(errno, "cannot place the crash image " + shown);
    PMLAB_TRY(place_links(slot.dir, shown, left, lost));
  }
  return {};
}

Judges::Slot& Judges::acquire() {
  Slot* s = nullptr;
  {
    std::unique_lock lock(mutex_);
    changed_.wait(lock, [&] { return !free_.empty(); });
    s = free_.back();
    free_.pop_back();
  }
  s->files_ready = Status::success();
  for (size_t i = 0; i < options_.files.size() && s->files_ready; ++i) {
    const ImageFile& f = options_.files[i];
    if (!f.directory) s->files_ready = s->files[i]->attach(image_path(*s, i), s->image + f.base, f.size);
  }
  return *s;
}

void Judges::release(Slot& slot) {
  std::lock_guard lock(mutex_);
  free_.push_back(&slot);
  changed_.notify_all();
}

Status Judges::restore(Slot& slot, std::span<const std::byte> durable, const std::vector<size_t>& pages,
                       const std::vector<bool>& listed) {
  Status s = slot.files_ready;
  for (size_t i = 0; i < options_.files.size() && s; ++i) {
    const size_t first = options_.files[i].base / kPage;
    if (!options_.files[i].directory)
      s = slot.files[i]->zero_unlisted([&](size_t p) { return first + p < listed.size() && listed[first + p]; });
  }
  if (!s) {
    release(slot);
    return s;
  }
  for (size_t page : pages) {
    const size_t at = page * kPage;
    if (at >= durable.size()) continue;
    const size_t len = std::min(kPage, durable.size() - at);
    if (std::memcmp(slot.image + at, durable.data() + at, len) != 0)
      std::memcpy(slot.image + at, durable.data() + at, len);
  }
  return {};
}

Status Judges::write_files(std::span<const std::byte> image, const std::vector<size_t>& pages, const std::string& path,
                           const std::vector<FileAtCrash>& left) const {
  std::error_code ec;
  if (options_.image_is_directory && !fs::create_directories(path, ec) && ec)
    return error(Errc::io_error, "cannot make " + path + ": " + ec.message());
  const std::set<std::string> lost = lost_directories(left);
  for (size_t i = 0; i < options_.files.size(); ++i) {
    const ImageFile& f = options_.files[i];
    if (!left_there(left, i, lost)) continue;
    if (f.directory) {
      if (!options_.image_is_directory) continue;
      fs::create_directories(fs::path(path) / left[i].name, ec);
      if (ec)
        return error(Errc::io_error, "cannot make " + (fs::path(path) / left[i].name).string() + ": " + ec.message());
      continue;
    }
    const std::string to = options_.image_is_directory ? (fs::path(path) / left[i].name).string()
                           : i == options_.image_file  ? path
                                                       : path + "." + std::to_string(i);
    const size_t length = std::min(left[i].length, f.size);
    if (options_.image_is_directory) {
      fs::create_directories(fs::path(to).parent_path(), ec);
      if (ec) return error(Errc::io_error, "cannot make the directory of " + to + ": " + ec.message());
    }
    if (Status s = write_sparse(to, image.data() + f.base, length, f.base / kPage, pages); !s) return s;
    if (options_.image_is_directory) PMLAB_TRY(place_links(path, to, left[i], lost));
  }
  return {};
}

Status Judges::submit(Slot& slot, std::vector<std::string> env, std::function<void(const Verdict&)> done) {
  if (!slot.files_ready) {
    release(slot);
    return slot.files_ready;
  }
  slot.env = std::move(env);
  slot.done = std::move(done);
  {
    std::lock_guard lock(mutex_);
    queued_.push_back(&slot);
    ++busy_;
  }
  changed_.notify_all();
  return {};
}

void Judges::drain() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return busy_ == 0; });
}

// A worker's check server, where --check-server gives one: started at its first image, and again after it
// ended; its stderr goes to `log`.
struct Judges::CheckServer {
  std::unique_ptr<platform::LineServer> process;
  std::string log;
  bool answered = false;  // ever: one that ends before its first answer may be a command that cannot run
};

void Judges::work(unsigned worker) {
  CheckServer server;
  server.log = (fs::path(options_.work_dir) / ("check-server-" + std::to_string(worker) + ".log")).string();
  for (;;) {
    Slot* slot = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (queued_.empty()) return;
      slot = queued_.front();
      queued_.erase(queued_.begin());
    }
    const Verdict v = judge(*slot, server);
    slot->done(v);
    {
      std::lock_guard lock(mutex_);
      free_.push_back(slot);
      --busy_;
    }
    changed_.notify_all();
  }
}

Result<Verdict> Judges::judge_random_image(uint64_t seed, const std::vector<size_t>& pages) {
  drain();
  Slot& slot = acquire();
  slot.left.clear();  // every file, whole, under the names the run left it (a renamed one under its new name)
  for (size_t i = 0; i < options_.names_at_end.size() && i < options_.files.size(); ++i) {
    const std::string& at_end = options_.names_at_end[i];
    slot.left.push_back({.present = !at_end.empty(),
                         .name = i < options_.names.size() && at_end == options_.names[i] ? names_[i] : at_end,
                         .length = options_.files[i].size});
  }
  Random rng(seed);
  for (size_t page : pages)
    for (size_t at = page * kPage; at < std::min((page + 1) * kPage, options_.image_bytes); at += sizeof(uint64_t)) {
      const uint64_t word = rng.next();
      std::memcpy(slot.image + at, &word, std::min(sizeof word, options_.image_bytes - at));
    }
  Verdict verdict;
  if (Status s = submit(slot,
                        {"PMLAB_CRASH_POINT=0", "PMLAB_CRASH_STATE=0", "PMLAB_CRASH_OPS_BEGUN=0",
                         "PMLAB_CRASH_OPS_DONE=0", "PMLAB_CRASH_AT_EXIT=0"},
                        [&](const Verdict& v) { verdict = v; });
      !s)
    return s;
  drain();
  return verdict;
}

bool check_needs_shell(const std::string& check) {
  return check.find_first_of("'\"\\$`;&|<>()*?~#=\n\t") != std::string::npos;
}

// A plain list of words saves a process per check.
std::vector<std::string> checker_argv(const std::string& check, const std::string& image) {
  if (check_needs_shell(check)) return {"/bin/sh", "-c", shell_substitute(check, "{}", image)};
  std::vector<std::string> words;
  for (size_t from = 0; from < check.size();) {
    const size_t begin = check.find_first_not_of(' ', from);
    if (begin == std::string::npos) break;
    const size_t end = std::min(check.find(' ', begin), check.size());
    std::string word = check.substr(begin, end - begin);
    for (size_t at = word.find("{}"); at != std::string::npos; at = word.find("{}", at + image.size()))
      word.replace(at, 2, image);
    words.push_back(std::move(word));
    from = end;
  }
  return words;
}

namespace {
fs::path canonical(const std::string& path) {
  std::error_code ec;
  const fs::path p = fs::weakly_canonical(path, ec);
  return ec ? fs::path(path) : p;
}
}  // namespace

Verdict Judges::ask(CheckServer& server, const std::vector<std::string>& env) {
  nlohmann::json request = nlohmann::json::object();
  for (const std::string& e : env) request[e.substr(0, e.find('='))] = e.substr(e.find('=') + 1);
  const std::string line = json_text(request);
  Verdict v;
  for (int round = 0; round < (options_.recheck ? 2 : 1); ++round) {
    const std::string again = round == 1 ? "recheck on the image the first check left: " : "";
    if (!server.process) {
      platform::ProcessSpec spec;
      spec.argv = options_.server;
      spec.set_env = {"PMLAB_CHECK_SERVER=1"};
      spec.unset_env = not_for_the_checker();
      spec.output_file = server.log;
      auto started = platform::LineServer::start(spec);
      if (!started) {
        v.outcome = "the check server could not start: " + started.status().message();
        v.not_run = true;
        return v;
      }
      server.process = std::move(*started);
    }
    struct stat log {};
    uint64_t logged = ::stat(server.log.c_str(), &log) == 0 ? static_cast<uint64_t>(log.st_size) : 0;
    // Only what it says while judging one image is shown, and the log lies in memory (/dev/shm): a chatty
    // server's is emptied as it grows. Its stderr appends, so it goes on at the new end.
    if (logged > kServerLogBytes && ::truncate(server.log.c_str(), 0) == 0) logged = 0;
    const platform::LineServer::Answer a = server.process->ask(line, options_.timeout_s);
    const std::string said = read_tail(server.log, 6, logged);
    if (!a.answered) {
      v.outcome = again + "the check server " + a.why + (a.timed_out ? " without an answer" : "");
      v.output = said;
      v.not_run = !server.answered && !a.timed_out && (a.exit_code == 126 || a.exit_code == 127);
      server.process.reset();  // the next image starts another
      return v;
    }
    server.answered = true;
    if (a.line != "ok") {
      v.outcome = again + "the check server answered other than ok";
      v.output = said.empty() ? a.line : said + "\n" + a.line;  // its answer last: what a failure is keyed by
      return v;
    }
  }
  v.consistent = true;
  return v;
}

std::optional<size_t> traced_file(const std::vector<ImageFile>& files, const std::string& path,
                                  const std::vector<std::vector<std::string>>& at_end) {
  const fs::path wanted = canonical(path);
  for (size_t i = 0; i < files.size(); ++i) {
    if (files[i].directory) continue;
    if (wanted == canonical(files[i].path)) return i;
    if (i < at_end.size())
      for (const std::string& name : at_end[i])
        if (wanted == canonical(name)) return i;
  }
  return std::nullopt;
}

size_t named_image(const std::vector<ImageFile>& files, const std::vector<std::string>& pools,
                   const std::vector<std::vector<std::string>>& at_end) {
  for (const std::string& pool : pools)
    if (auto i = traced_file(files, pool, at_end)) return *i;
  return 0;
}

Status check_reads_crash_images(const std::string& check, const std::vector<ImageFile>& files) {
  if (check.find("{}") != std::string::npos || check.find("PMLAB_CRASH_") != std::string::npos) return {};
  std::string word;
  for (size_t i = 0; i <= check.size(); ++i) {
    const char c = i < check.size() ? check[i] : ' ';
    if (c != ' ' && c != '\t' && c != '\'' && c != '"' && c != ';' && c != '&' && c != '|' && c != '=') {
      word += c;
      continue;
    }
    for (const ImageFile& f : files)
      if (!word.empty() && !f.directory && canonical(word) == canonical(f.path))
        return error(Errc::invalid_argument,
                     "--check names " + f.path +
                         ", a file the program maps, and not its crash image: it would judge the file as the "
                         "traced run left it, whatever the crash. Write {} where the image's path goes (or read "
                         "$PMLAB_CRASH_IMAGE; every file's image is in $PMLAB_CRASH_DIR under its own name)");
    word.clear();
  }
  return {};
}

Verdict Judges::judge(Slot& slot, CheckServer& server) {
  Verdict v;
  if (Status s = lay_out(slot); !s) {
    v.outcome = "the checker could not run: " + s.message();
    v.not_run = true;
    return v;
  }
  const std::string image = options_.image_is_directory   ? slot.dir
                            : options_.image_name.empty() ? shown_path(slot, options_.image_file)
                                                          : (fs::path(slot.dir) / options_.image_name).string();
  std::vector<std::string> env = slot.env;
  env.push_back("PMLAB_CRASH_IMAGE=" + image);
  env.push_back("PMLAB_CRASH_DIR=" + slot.dir);
  if (!options_.server.empty()) return ask(server, env);
  platform::ProcessSpec spec;
  spec.argv = checker_argv(options_.check, image);
  spec.set_env = std::move(env);
  spec.unset_env = not_for_the_checker();
  spec.output = platform::ProcessSpec::Output::file;
  spec.output_file = (fs::path(slot.dir).parent_path() / "check.log").string();
  spec.timeout_s = options_.timeout_s;
  for (int round = 0; round < (options_.recheck ? 2 : 1); ++round) {
    auto run = platform::run_process(spec);
    if (!run) {
      v.outcome = "the checker could not run: " + run.status().message();
      v.not_run = true;
      return v;
    }
    if (!run->ok()) {
      v.outcome = (round == 1 ? "recheck on the image the first check left: " : "") + run->outcome();
      v.output = read_tail(spec.output_file, 6);
      v.not_run = !run->timed_out && run->signal == 0 && (run->exit_code == 126 || run->exit_code == 127);
      return v;
    }
  }
  v.consistent = true;
  return v;
}

}  // namespace pmlab::crash::exec
