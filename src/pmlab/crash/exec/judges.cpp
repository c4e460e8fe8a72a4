#include "pmlab/crash/exec/judges.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "pmlab/common/files.hpp"
#include "pmlab/common/random.hpp"
#include "pmlab/crash/exec/trace_format.hpp"
#include "pmlab/platform/process.hpp"

namespace pmlab::crash::exec {
namespace {

namespace fs = std::filesystem;

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

Status write_span(const std::string& path, const std::byte* data, size_t n) {
  // Overwritten in place: truncating would free every page only for the write to allocate it again.
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return errno_status(errno, "cannot write the crash image " + path);
  size_t done = 0;
  while (done < n) {
    const ssize_t w = pwrite(fd, data + done, n - done, static_cast<off_t>(done));
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      const int err = errno;
      ::close(fd);
      return errno_status(err, "cannot write the crash image " + path);
    }
    done += static_cast<size_t>(w);
  }
  // A checker that grew the file leaves no tail behind.
  const int cut = ftruncate(fd, static_cast<off_t>(n));
  const int err = errno;
  ::close(fd);
  return cut == 0 ? Status{} : errno_status(err, "cannot write the crash image " + path);
}

}  // namespace

// One image file of a slot, kept open and mapped between checks, so that putting the next image there
// writes only the pages that differ from what the file holds: the slot's last image, or what its checker
// left of it (a recovery writes). Reading both costs less than writing every page through the kernel.
class SlotFile {
 public:
  ~SlotFile() { unmap(); }

  Status put(const std::string& path, const std::byte* data, size_t n) {
    struct stat st {};
    // A checker may have removed or replaced the file: the path is what the next checker opens.
    if (fd_.get() < 0 || ::stat(path.c_str(), &st) != 0 || st.st_dev != dev_ || st.st_ino != ino_) {
      unmap();
      fd_ = FileDescriptor(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600));
      if (fd_.get() < 0 || fstat(fd_.get(), &st) != 0)
        return errno_status(errno, "cannot write the crash image " + path);
      dev_ = st.st_dev;
      ino_ = st.st_ino;
    } else if (fstat(fd_.get(), &st) != 0) {
      return errno_status(errno, "cannot write the crash image " + path);
    }
    // A tail a checker added goes; a part it cut comes back as zeros, to be compared like any other.
    if (static_cast<size_t>(st.st_size) != n && ftruncate(fd_.get(), static_cast<off_t>(n)) != 0)
      return errno_status(errno, "cannot write the crash image " + path);
    if (n == 0) return {};
    if (base_ == nullptr || size_ != n) {
      unmap();
      void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_SHARED, fd_.get(), 0);
      if (p == MAP_FAILED) return errno_status(errno, "cannot map the crash image " + path);
      base_ = static_cast<std::byte*>(p);
      size_ = n;
    }
    constexpr size_t kPage = trace::kPageBytes;  // the granule the images are built and compared in
    for (size_t at = 0; at < n; at += kPage) {
      const size_t len = std::min(kPage, n - at);
      if (std::memcmp(base_ + at, data + at, len) != 0) std::memcpy(base_ + at, data + at, len);
    }
    return {};
  }

 private:
  void unmap() {
    if (base_ != nullptr) munmap(base_, size_);
    base_ = nullptr;
    size_ = 0;
  }
  FileDescriptor fd_;
  dev_t dev_ = 0;
  ino_t ino_ = 0;
  std::byte* base_ = nullptr;
  size_t size_ = 0;
};

namespace {

std::string read_tail(const std::string& path, size_t lines) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "";
  const off_t size = lseek(fd, 0, SEEK_END);
  const off_t from = std::max<off_t>(0, size - 8192);
  std::string text(static_cast<size_t>(size - from), '\0');
  const ssize_t n = pread(fd, text.data(), text.size(), from);
  ::close(fd);
  text.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return platform::tail_lines(text, lines);
}

}  // namespace

Judges::Slot::~Slot() = default;

Result<std::unique_ptr<Judges>> Judges::start(const JudgeOptions& options) {
  std::unique_ptr<Judges> j(new Judges(options));
  // Each file's image keeps its name (a checker may look for it), made unique where two files share one.
  for (size_t i = 0; i < options.files.size(); ++i) {
    std::string name = fs::path(options.files[i].path).filename().string();
    if (name.empty()) name = "pool";
    if (std::count(j->names_.begin(), j->names_.end(), name)) name = std::to_string(i) + "-" + name;
    j->names_.push_back(name);
  }
  const unsigned jobs = std::max(1u, options.jobs);
  // One slot more than checkers, so the next image is built while every checker runs.
  for (size_t s = 0; s < jobs + 1u; ++s) {
    auto slot = std::make_unique<Slot>();
    slot->index = s;
    slot->dir = (fs::path(options.work_dir) / ("slot-" + std::to_string(s))).string();
    std::error_code ec;
    fs::create_directories(slot->dir, ec);
    if (ec) return error(Errc::io_error, "cannot create " + slot->dir + ": " + ec.message());
    slot->image.resize(options.image_bytes);
    for (size_t i = 0; i < options.files.size(); ++i) slot->files.push_back(std::make_unique<SlotFile>());
    j->free_.push_back(slot.get());
    j->slots_.push_back(std::move(slot));
  }
  for (unsigned w = 0; w < jobs; ++w) j->workers_.emplace_back([p = j.get()] { p->work(); });
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
  return (fs::path(slot.dir) / names_[file]).string();
}

Judges::Slot& Judges::acquire() {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return !free_.empty(); });
  Slot* s = free_.back();
  free_.pop_back();
  return *s;
}

Status Judges::write_files(const std::vector<std::byte>& image, const std::string& path) const {
  for (size_t i = 0; i < options_.files.size(); ++i) {
    const ImageFile& f = options_.files[i];
    const std::string to = i == 0 ? path : path + "." + std::to_string(i);
    if (Status s = write_span(to, image.data() + f.base, f.size); !s) return s;
  }
  return {};
}

Status Judges::submit(Slot& slot, std::vector<std::string> env, std::function<void(const Verdict&)> done) {
  for (size_t i = 0; i < options_.files.size(); ++i) {
    const ImageFile& f = options_.files[i];
    if (Status s = slot.files[i]->put(image_path(slot, i), slot.image.data() + f.base, f.size); !s) {
      std::lock_guard lock(mutex_);
      free_.push_back(&slot);
      changed_.notify_all();
      return s;
    }
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

void Judges::work() {
  for (;;) {
    Slot* slot = nullptr;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return stopping_ || !queued_.empty(); });
      if (queued_.empty()) return;
      slot = queued_.front();
      queued_.erase(queued_.begin());
    }
    const Verdict v = judge(*slot);
    slot->done(v);
    {
      std::lock_guard lock(mutex_);
      free_.push_back(slot);
      --busy_;
    }
    changed_.notify_all();
  }
}

Result<Verdict> Judges::judge_random_image(uint64_t seed) {
  drain();
  Slot& slot = acquire();
  Random rng(seed);
  for (size_t at = 0; at < slot.image.size(); at += sizeof(uint64_t)) {
    const uint64_t word = rng.next();
    std::memcpy(slot.image.data() + at, &word, std::min(sizeof word, slot.image.size() - at));
  }
  Verdict verdict;
  if (Status s = submit(
          slot, {"PMLAB_CRASH_POINT=0", "PMLAB_CRASH_STATE=0", "PMLAB_CRASH_OPS_BEGUN=0", "PMLAB_CRASH_OPS_DONE=0"},
          [&](const Verdict& v) { verdict = v; });
      !s)
    return s;
  drain();
  return verdict;
}

// The checker's command line: split into words when it is a plain list of words (one process fewer per
// check), else run by the shell; `{}` becomes the image's path either way.
std::vector<std::string> checker_argv(const std::string& check, const std::string& image) {
  auto replaced = [&](std::string text, bool quote) {
    const std::string path = quote ? shell_quote(image) : image;
    for (size_t at = text.find("{}"); at != std::string::npos; at = text.find("{}", at + path.size()))
      text.replace(at, 2, path);
    return text;
  };
  if (check.find_first_of("'\"\\$`;&|<>()*?~#=\n\t") != std::string::npos)
    return {"/bin/sh", "-c", replaced(check, true)};
  std::vector<std::string> words;
  for (size_t from = 0; from < check.size();) {
    const size_t begin = check.find_first_not_of(' ', from);
    if (begin == std::string::npos) break;
    const size_t end = std::min(check.find(' ', begin), check.size());
    words.push_back(replaced(check.substr(begin, end - begin), false));
    from = end;
  }
  return words;
}

Status check_reads_crash_images(const std::string& check, const std::vector<ImageFile>& files) {
  if (check.find("{}") != std::string::npos || check.find("PMLAB_CRASH_") != std::string::npos) return {};
  auto canonical = [](const std::string& path) {
    std::error_code ec;
    const fs::path p = fs::weakly_canonical(path, ec);
    return ec ? fs::path(path) : p;
  };
  std::string word;
  for (size_t i = 0; i <= check.size(); ++i) {
    const char c = i < check.size() ? check[i] : ' ';
    if (c != ' ' && c != '\t' && c != '\'' && c != '"' && c != ';' && c != '&' && c != '|' && c != '=') {
      word += c;
      continue;
    }
    for (const ImageFile& f : files)
      if (!word.empty() && canonical(word) == canonical(f.path))
        return error(Errc::invalid_argument,
                     "--check names " + f.path +
                         ", a file the program maps, and not its crash image: it would judge the file as the "
                         "traced run left it, whatever the crash. Write {} where the image's path goes (or read "
                         "$PMLAB_CRASH_IMAGE; every file's image is in $PMLAB_CRASH_DIR under its own name)");
    word.clear();
  }
  return {};
}

Verdict Judges::judge(Slot& slot) {
  const std::string image = image_path(slot, 0);
  platform::ProcessSpec spec;
  spec.argv = checker_argv(options_.check, image);
  spec.set_env = slot.env;
  spec.set_env.push_back("PMLAB_CRASH_IMAGE=" + image);
  spec.set_env.push_back("PMLAB_CRASH_DIR=" + slot.dir);
  // The checker is not the traced program: nothing of the tracer reaches it.
  spec.unset_env = {"LD_PRELOAD", "PMLAB_TRACE_FILE", "PMLAB_TRACE_PID", "PMLAB_TRACE_POOLS", "PMLAB_TRACE_DOMAIN"};
  spec.output = platform::ProcessSpec::Output::file;
  spec.output_file = (std::filesystem::path(slot.dir) / "check.log").string();
  spec.timeout_s = options_.timeout_s;
  Verdict v;
  for (int round = 0; round < (options_.recheck ? 2 : 1); ++round) {
    auto run = platform::run_process(spec);
    if (!run) {
      v.outcome = "the checker could not run: " + run.status().message();
      return v;
    }
    if (!run->ok()) {
      v.outcome = (round == 1 ? "recheck on the image the first check left: " : "") + run->outcome();
      v.output = read_tail(spec.output_file, 6);
      return v;
    }
  }
  v.consistent = true;
  return v;
}

}  // namespace pmlab::crash::exec
