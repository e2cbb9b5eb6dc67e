#include "collect_csv.hpp"

#include <isaac/error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <fstream>
#include <sstream>
#include <sys/stat.h>
#include <unistd.h>
#include <vector>

namespace isaac::tune::cli {

namespace {

std::string number(double v, int digits) { return std::isfinite(v) ? fmt::format("{:.{}f}", v, digits) : std::string{}; }
std::string count(int v) { return v >= 0 ? std::to_string(v) : std::string{}; }

// Quoted, on one line, without double quotes inside (so that every CSV reader splits it alike).
std::string quoted(const std::string& text) {
  std::string s = one_line(text);
  for (char& c : s)
    if (c == '"') c = '\'';
  return fmt::format("\"{}\"", s);
}

// Fields of a line; a field in double quotes may hold commas.
std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out(1);
  bool in_quotes = false;
  for (char c : line) {
    if (c == '"') in_quotes = !in_quotes;
    else if (c == ',' && !in_quotes) out.emplace_back();
    else if (c != '\r') out.back() += c;
  }
  return out;
}

std::string system_error(const std::string& what, const std::string& path) {
  return fmt::format("{} {}: {}", what, path, std::strerror(errno));
}

}  // namespace

std::string one_line(const std::string& text, std::size_t limit) {
  std::string out;
  for (char c : text) {
    if (c == '\n' || c == '\r') {
      if (!out.empty() && out.back() != ' ') out += " | ";
    } else {
      out += c == '\t' ? ' ' : c;
    }
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '|')) out.pop_back();
  if (out.size() > limit) out = out.substr(0, limit) + "...";
  return out;
}

std::string layout_name(const ir::Conv& v) {
  return fmt::format("{}/{}", ir::name(v.input_layout), ir::name(v.filter_layout));
}

std::string problem_columns(const ir::Gemm& g) {
  return fmt::format("{},random,{},{},{},{},{}", ir::name(g.dtype), g.m, g.n, g.k, int(g.a_trans), int(g.b_trans));
}

std::string problem_columns(const ir::Conv& v) {
  return fmt::format("{},random,{},{},{},{},{},{},{},{},{},{},{}", ir::name(v.dtype), layout_name(v), v.n, v.c, v.h,
                     v.w, v.k, v.r, v.s, v.stride_h, v.pad_h, v.dilation_h);
}

std::string format_row(const ResultRow& r) {
  const bool ok = r.status == "ok";
  const double tflops = ok && r.median_ms > 0 ? r.flops / (r.median_ms * 1e-3) / 1e12 : std::nan("");
  return fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.index, r.problem,
                     r.params.empty() ? std::string{} : fmt::format("\"{}\"", r.params), r.status,
                     number(ok ? r.median_ms : std::nan(""), 6), number(ok ? r.min_ms : std::nan(""), 6),
                     number(ok ? r.max_ms : std::nan(""), 6), number(tflops, 3), count(r.registers),
                     count(r.local_bytes), count(r.shared_bytes), r.threads, r.blocks, number(r.emit_ms, 2),
                     number(r.compile_ms, 2), r.reason.empty() ? std::string{} : quoted(r.reason), r.phase);
}

std::map<std::uint64_t, StoredRow> read_for_resume(const std::string& path, const std::string& signature,
                                                    const std::string& header, std::size_t* truncated_bytes) {
  if (truncated_bytes) *truncated_bytes = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) return {};
  std::stringstream buffer;
  buffer << in.rdbuf();
  const std::string text = buffer.str();
  in.close();

  // A crash mid-write leaves a last line without its newline: drop it.
  std::size_t keep = text.size();
  if (!text.empty() && text.back() != '\n') {
    const std::size_t nl = text.rfind('\n');
    keep = nl == std::string::npos ? 0 : nl + 1;
  }
  std::vector<std::string> lines;
  for (std::size_t pos = 0; pos < keep;) {
    const std::size_t nl = text.find('\n', pos);
    lines.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  // The plan line and the header go out in one write: without both, start the file anew.
  if (lines.size() < 2) keep = 0;
  if (keep != text.size()) {
    if (::truncate(path.c_str(), off_t(keep)) != 0) throw InvalidArgument(system_error("cannot truncate", path));
    if (truncated_bytes) *truncated_bytes = text.size() - keep;
  }
  if (keep == 0) return {};

  if (lines[0].rfind(collect_plan_prefix, 0) != 0)
    throw InvalidArgument(fmt::format("{}:1: not an isaac-tune collect file (no \"{}\" line); use another --out", path,
                                      collect_plan_prefix));
  std::string theirs = lines[0].substr(std::strlen(collect_plan_prefix));
  if (theirs.rfind("template=", 0) != 0) theirs = "template=gemm " + theirs;  // written before CONV
  if (theirs != signature)
    throw InvalidArgument(fmt::format("{} was collected with another plan; resume it with the same options, or use "
                                      "another --out\n  file: {}\n  now:  {}",
                                      path, theirs, signature));
  if (lines[1] != header)
    throw InvalidArgument(fmt::format("{}:2: the header differs from this version's:\n  file: {}\n  now:  {}", path,
                                      lines[1], header));
  // The problem's columns lie between the index and the parameters.
  const std::vector<std::string> names = split(header);
  const std::size_t columns = names.size();
  const std::size_t params = std::size_t(std::find(names.begin(), names.end(), "params") - names.begin());
  if (params >= columns) throw InvalidArgument("read_for_resume: the header has no params column");
  std::map<std::uint64_t, StoredRow> rows;
  for (std::size_t ln = 2; ln < lines.size(); ++ln) {
    if (lines[ln].empty() || lines[ln][0] == '#') continue;
    const auto f = split(lines[ln]);
    if (f.size() != columns)
      throw InvalidArgument(fmt::format("{}:{}: {} fields where the header has {}", path, ln + 1, f.size(), columns));
    std::uint64_t index;
    try {
      std::size_t used = 0;
      index = std::stoull(f[0], &used);
      if (used != f[0].size()) throw std::invalid_argument(f[0]);
    } catch (const std::logic_error&) {
      throw InvalidArgument(fmt::format("{}:{}: the index \"{}\" is not a number", path, ln + 1, f[0]));
    }
    StoredRow stored{f[1], f[params]};
    for (std::size_t c = 2; c < params; ++c) stored.problem += "," + f[c];
    if (!rows.emplace(index, std::move(stored)).second)
      throw InvalidArgument(fmt::format("{}:{}: index {} appears twice", path, ln + 1, index));
  }
  return rows;
}

RowWriter::RowWriter(const std::string& path, const std::string& signature, const std::string& header, bool append)
    : path_(path), last_sync_(std::chrono::steady_clock::now()) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd_ < 0) throw InvalidArgument(system_error("cannot write", path));
  struct stat st{};
  if (::fstat(fd_, &st) != 0) throw InvalidArgument(system_error("cannot stat", path));
  if (st.st_size > 0 && !append) {
    ::close(fd_);
    fd_ = -1;
    throw InvalidArgument(fmt::format("{} already exists: add --resume to continue it, or remove it", path));
  }
  if (st.st_size == 0) {
    write_all(fmt::format("{}{}\n{}\n", collect_plan_prefix, signature, header));
    ::fsync(fd_);
  }
}

RowWriter::~RowWriter() {
  if (fd_ >= 0) {
    ::fsync(fd_);
    ::close(fd_);
  }
}

void RowWriter::write_all(const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) throw Error(system_error("cannot write", path_));
    done += std::size_t(n);
  }
}

void RowWriter::write(const std::string& line) {
  std::lock_guard lock(mutex_);
  write_all(line);
  const auto now = std::chrono::steady_clock::now();
  if (++unsynced_ >= 16 || now - last_sync_ >= std::chrono::seconds(1)) {
    ::fdatasync(fd_);
    unsynced_ = 0;
    last_sync_ = now;
  }
}

void RowWriter::sync() {
  std::lock_guard lock(mutex_);
  ::fdatasync(fd_);
  unsynced_ = 0;
  last_sync_ = std::chrono::steady_clock::now();
}

}  // namespace isaac::tune::cli
