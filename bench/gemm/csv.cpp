#include "csv.hpp"

#include "problems.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace isaac::bench {

std::string csv_field(std::string_view text) {
  if (text.find_first_of(",\"\n\r") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::vector<std::string> split_csv_line(std::string_view line) {
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        fields.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        fields.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.emplace_back();
    } else if (c != '\r') {
      fields.back() += c;
    }
  }
  return fields;
}

std::optional<std::size_t> CsvTable::find_column(const std::string& name) const {
  for (std::size_t i = 0; i < header.size(); ++i)
    if (header[i] == name) return i;
  return std::nullopt;
}

std::size_t CsvTable::column(const std::string& name) const {
  if (auto i = find_column(name)) return *i;
  std::string have;
  for (const auto& h : header) have += (have.empty() ? "" : ",") + h;
  throw BenchError(fmt::format("{}: no column '{}' (the columns are {})", path, name, have));
}

CsvTable parse_csv(const std::string& text, const std::string& path_for_errors) {
  CsvTable t;
  t.path = path_for_errors;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::size_t first = line.find_first_not_of(" \t");
    if (first == std::string::npos || line[first] == '#') continue;
    auto fields = split_csv_line(line);
    if (t.header.empty()) {
      t.header = std::move(fields);
      continue;
    }
    if (fields.size() != t.header.size())
      throw BenchError(fmt::format("{}:{}: {} fields where the header has {}: '{}'", path_for_errors, number,
                                   fields.size(), t.header.size(), line));
    t.rows.push_back(std::move(fields));
    t.line_numbers.push_back(number);
  }
  if (t.header.empty()) throw BenchError(fmt::format("{}: no header line", path_for_errors));
  return t;
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw BenchError(fmt::format("cannot read {}: {}", path, std::strerror(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_csv(text.str(), path);
}

namespace {

void make_parent(const std::string& path) {
  auto parent = std::filesystem::path(path).parent_path();
  if (parent.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) throw BenchError(fmt::format("cannot create the folder {}: {}", parent.string(), ec.message()));
}

}  // namespace

void write_file(const std::string& path, const std::string& content) {
  make_parent(path);
  std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw BenchError(fmt::format("cannot write {}: {}", tmp, std::strerror(errno)));
    out << content;
    out.flush();
    if (!out) {
      const std::string reason = std::strerror(errno);
      out.close();
      std::remove(tmp.c_str());  // a full disk leaves no half-written temporary behind
      throw BenchError(fmt::format("writing {} failed: {}", path, reason));
    }
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    std::remove(tmp.c_str());
    throw BenchError(fmt::format("cannot rename {} to {}: {}", tmp, path, ec.message()));
  }
}

void append_file(const std::string& path, const std::string& header, const std::string& content) {
  make_parent(path);
  std::error_code ec;
  bool fresh = !std::filesystem::exists(path, ec) || std::filesystem::file_size(path, ec) == 0;
  std::ofstream out(path, std::ios::binary | std::ios::app);
  if (!out) throw BenchError(fmt::format("cannot append to {}: {}", path, std::strerror(errno)));
  if (fresh) out << header;
  out << content;
  out.flush();
  if (!out) throw BenchError(fmt::format("appending to {} failed: {}", path, std::strerror(errno)));
}

}  // namespace isaac::bench
