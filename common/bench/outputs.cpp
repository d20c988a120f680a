#include "common/bench/outputs.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace sw::bench {
namespace {

bool is_folder(const std::string& dir) {
  struct stat st;
  return stat(dir.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The names in `dir` besides "." and "..", or false when it cannot be listed.
bool list_folder(const std::string& dir, std::vector<std::string>* names) {
  DIR* d = opendir(dir.c_str());
  if (!d) return false;
  while (const dirent* e = readdir(d)) {
    const std::string name = e->d_name;
    if (name != "." && name != "..") names->push_back(name);
  }
  closedir(d);
  return true;
}

// Opens `path` for reading only if it is a regular file: never through a link, never
// waiting on a pipe. Returns the descriptor and its size, or -1 with `why` set.
int open_regular(const std::string& path, const std::string& name, int64_t* size,
                 std::string* why) {
  const int fd = open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = errno == ENOENT  ? name + " is missing"
           : errno == ELOOP ? name + " is a link, not a file"
                            : name + " cannot be opened: " + std::strerror(errno);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    *why = name + " is not a regular file";
    return -1;
  }
  *size = static_cast<int64_t>(st.st_size);
  return fd;
}

// Reads exactly `bytes` bytes; false on an error or an early end.
bool read_all(int fd, char* to, int64_t bytes) {
  while (bytes > 0) {
    const ssize_t got = read(fd, to, static_cast<size_t>(bytes));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    to += got;
    bytes -= got;
  }
  return true;
}

// Whether `name` is the file of one of the first `runs` runs.
bool run_read(const std::string& name, int64_t runs) {
  constexpr size_t kMaxDigits = 18;
  if (name.size() <= 8 || name.size() > 8 + kMaxDigits || name.rfind("run-", 0) != 0 ||
      name.compare(name.size() - 4, 4, ".bin") != 0 ||
      name.find_first_not_of("0123456789", 4) != name.size() - 4)
    return false;
  const int64_t k = std::stoll(name.substr(4, name.size() - 8));
  return k < runs && run_file(k) == name;
}

// A line of the manifest holds no line break: the check rows' text is one line.
std::string one_line(std::string text) {
  for (char& c : text)
    if (c == '\n' || c == '\r') c = ' ';
  return text;
}

// At most 200 characters of what the dump says, for a detail.
std::string quoted(const std::string& text) {
  return "'" + (text.size() > 200 ? text.substr(0, 200) + "..." : text) + "'";
}

}  // namespace

std::string run_file(int64_t k) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "run-%06lld.bin", static_cast<long long>(k));
  return buf;
}

std::string row_line(int64_t r, int64_t first, int64_t count, const std::string& problem,
                     const std::string& what) {
  return "row " + std::to_string(r) + " runs " + std::to_string(first) + " " +
         std::to_string(count) + " " + one_line(problem) + " " + one_line(what);
}

Exchange::~Exchange() {
  if (manifest_) std::fclose(manifest_);
}

std::string Exchange::start(const CommonOptions& opt) {
  if (opt.repeat != 1 && !opt.verify_only)
    return "--repeat: applies only with --verify-only (the checks' runs)";
  repeats_ = opt.repeat;
  const bool dump = !opt.dump_outputs.empty(), check = !opt.check_outputs.empty();
  if (!dump && !check) return "";
  if (dump && check) return "--dump-outputs and --check-outputs: give one of them, not both";
  option_ = dump ? "--dump-outputs" : "--check-outputs";
  dir_ = dump ? opt.dump_outputs : opt.check_outputs;
  if (!opt.verify_only) return option_ + ": applies only with --verify-only (the checks' outputs)";
  if (!is_folder(dir_)) return option_ + " " + dir_ + ": not a folder";
  if (check) {
    manifest_error_ = read_manifest();
    mode_ = Mode::kCheck;
    return "";
  }
  std::vector<std::string> names;
  if (!list_folder(dir_, &names)) return option_ + " " + dir_ + ": cannot be listed";
  if (!names.empty()) return option_ + " " + dir_ + ": not empty (give a fresh folder)";
  manifest_ = std::fopen((dir_ + "/" + kManifest).c_str(), "w");
  if (!manifest_) return option_ + " " + dir_ + ": cannot be written: " + std::strerror(errno);
  std::fprintf(manifest_, "%s\n", kManifestHeader);
  std::fflush(manifest_);
  mode_ = Mode::kDump;
  return "";
}

// The dump's row lines, or why they cannot be read (then every row fails).
std::string Exchange::read_manifest() {
  int64_t size = 0;
  std::string why;
  const int fd = open_regular(dir_ + "/" + kManifest, kManifest, &size, &why);
  if (fd < 0) return "the dump's " + why;
  if (size > kMaxManifestBytes) {
    close(fd);
    return std::string("the dump's ") + kManifest + " holds more than " +
           std::to_string(kMaxManifestBytes) + " bytes";
  }
  std::string text(static_cast<size_t>(size), '\0');
  const bool read = read_all(fd, text.data(), size);
  close(fd);
  if (!read) return std::string("the dump's ") + kManifest + " cannot be read";
  size_t at = text.find('\n');
  if (text.substr(0, at) != kManifestHeader)
    return std::string("the dump's ") + kManifest + " does not start with '" + kManifestHeader +
           "'";
  while (at != std::string::npos && at + 1 < text.size()) {
    const size_t end = text.find('\n', at + 1);
    const std::string line = text.substr(at + 1, end == std::string::npos ? end : end - at - 1);
    if (line.rfind("row ", 0) == 0) dump_rows_.push_back(line);
    at = end;
  }
  return "";
}

std::string Exchange::run(const std::vector<HostBytes>& parts) {
  if (mode_ == Mode::kOff) return "";
  const int64_t k = runs_++;
  const std::string name = run_file(k), path = dir_ + "/" + name;
  int64_t want = 0;
  for (const HostBytes& p : parts) want += p.bytes;
  if (mode_ == Mode::kDump) {
    std::string sizes;
    for (const HostBytes& p : parts) sizes += " " + std::to_string(p.bytes);
    std::fprintf(manifest_, "run %lld bytes%s\n", static_cast<long long>(k), sizes.c_str());
    if (std::fflush(manifest_) != 0 && write_error_.empty())
      write_error_ = std::string("cannot write ") + kManifest + ": " + std::strerror(errno);
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f)
      return "run " + std::to_string(k) + ": cannot write " + name + ": " + std::strerror(errno);
    bool ok = true;
    for (const HostBytes& p : parts)
      ok = ok &&
           std::fwrite(p.data, 1, static_cast<size_t>(p.bytes), f) == static_cast<size_t>(p.bytes);
    ok = std::fclose(f) == 0 && ok;
    return ok ? "" : "run " + std::to_string(k) + ": cannot write " + name;
  }
  int64_t size = 0;
  std::string why;
  const int fd = open_regular(path, name, &size, &why);
  if (fd < 0) return "run " + std::to_string(k) + " of the dump: " + why;
  if (size != want) {
    close(fd);
    return "run " + std::to_string(k) + " of the dump: " + name + " holds " + std::to_string(size) +
           " bytes where the check reads " + std::to_string(want) +
           (size < want ? " (a short file)" : " (extra bytes)");
  }
  bool ok = true;
  for (const HostBytes& p : parts) ok = ok && read_all(fd, static_cast<char*>(p.data), p.bytes);
  close(fd);
  return ok ? "" : "run " + std::to_string(k) + " of the dump: " + name + " cannot be read";
}

std::string Exchange::row(const std::string& problem, const std::string& what, bool of_harness) {
  if (mode_ == Mode::kOff) return "";
  const int64_t r = rows_++, first = row_first_run_, count = runs_ - row_first_run_;
  row_first_run_ = runs_;
  const std::string line = row_line(r, first, count, problem, what);
  if (mode_ == Mode::kDump) {
    std::fprintf(manifest_, "%s\n", line.c_str());
    if (std::fflush(manifest_) != 0 && write_error_.empty())
      write_error_ = std::string("cannot write ") + kManifest + ": " + std::strerror(errno);
    return write_error_;
  }
  if (!manifest_error_.empty()) return manifest_error_;
  if (r >= static_cast<int64_t>(dump_rows_.size()))
    return "the dump holds " + std::to_string(dump_rows_.size()) + " rows, none for row " +
           std::to_string(r) + " (" + quoted(line) + ")";
  if (dump_rows_[r] != line)
    return "the dump's row " + std::to_string(r) + " is " + quoted(dump_rows_[r]) +
           ", this check " + quoted(line) + ": the two programs ran different checks";
  if (count == 0 && !of_harness)
    return "no dumped run backs this check: it cannot be judged from the outputs";
  return "";
}

std::string Exchange::finish() {
  if (mode_ == Mode::kDump) {
    if (manifest_ && std::fclose(manifest_) != 0 && write_error_.empty())
      write_error_ = std::string("cannot write ") + kManifest;
    manifest_ = nullptr;
    return write_error_;
  }
  if (mode_ != Mode::kCheck) return "";
  std::string left;
  if (manifest_error_.empty() && static_cast<int64_t>(dump_rows_.size()) > rows_)
    left += "the dump holds " + std::to_string(dump_rows_.size()) + " rows, the checks printed " +
            std::to_string(rows_) + "; ";
  std::vector<std::string> names, extra;
  list_folder(dir_, &names);
  for (const std::string& name : names) {
    if (name != kManifest && !run_read(name, runs_)) extra.push_back(name);
  }
  if (!extra.empty()) {
    left += std::to_string(extra.size()) + " file(s) that no check read (";
    for (size_t i = 0; i < extra.size() && i < 3; ++i) left += (i ? ", " : "") + quoted(extra[i]);
    left += extra.size() > 3 ? ", ...); " : "); ";
  }
  return left.empty() ? "" : left.substr(0, left.size() - 2);
}

std::string repeat_detail(const std::vector<RepeatOutcome>& repeats) {
  const auto bad = [](const RepeatOutcome& r) { return !r.ok; };
  const auto first = std::find_if(repeats.begin(), repeats.end(), bad);
  if (first == repeats.end()) return "";
  const auto failed = std::count_if(repeats.begin(), repeats.end(), bad);
  std::string text = "repeat " + std::to_string(first - repeats.begin() + 1) + " of " +
                     std::to_string(repeats.size()) + " (" + std::to_string(failed) +
                     " failed): " + first->detail;
  const auto other = std::find_if(first + 1, repeats.end(), [&](const RepeatOutcome& r) {
    return !r.ok && r.detail != first->detail;
  });
  if (other != repeats.end())
    text += " | repeat " + std::to_string(other - repeats.begin() + 1) + ": " + other->detail;
  return text;
}

Exchange& exchange() {
  static Exchange the_exchange;
  return the_exchange;
}

}  // namespace sw::bench
