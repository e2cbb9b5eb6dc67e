#include "cache.hpp"
#include "files.hpp"

#include <isaac/error.hpp>
#include <isaac/ir/dtype.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/tune/database.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <sstream>
#include <vector>

namespace isaac::tune::cli {

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct KernelFiles {
  std::size_t count = 0, bytes = 0;
  std::vector<std::string> others;  // entries named *.kernel that are not regular files
};

KernelFiles kernel_files(const std::string& dir) {
  KernelFiles out;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    if (it->path().extension() != ".kernel") continue;
    // A dangling link or a folder of that name is not one of the cache's files: counted apart.
    std::error_code why;
    const bool regular = it->is_regular_file(why);
    const std::uintmax_t size = regular ? it->file_size(why) : 0;
    if (!regular || why) {
      out.others.push_back(it->path().filename().string());
      continue;
    }
    ++out.count, out.bytes += size;
  }
  return out;
}

std::string first_names(const std::vector<std::string>& names) {
  std::string text;
  for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += (i ? ", " : "") + names[i];
  return names.size() > 3 ? text + ", ..." : text;
}

int show(bool list) {
  TuningDatabase db(tuning_database_path());
  const auto all = db.list();
  const std::string dir = kernel_cache_directory();
  const KernelFiles files = kernel_files(dir);
  fmt::print("tuning database {}: {} decisions\n", db.path(), all.size());
  fmt::print("kernel cache {}: {} kernels, {:.1f} MB\n", dir, files.count, files.bytes / 1e6);
  if (!files.others.empty())
    fmt::print("  and {} entries named *.kernel that are not files, which isaac ignores: {}\n", files.others.size(),
               first_names(files.others));
  if (!caches_enabled()) fmt::print("ISAAC_NO_CACHE is set: isaac neither reads nor writes them\n");
  if (list)
    for (const auto& [k, d] : all)
      fmt::print("  {} (sm_{}, {} SMs, driver {}), isaac {}, {} {} {}: {}\n    {} ms, {}, {}\n", k.device,
                 k.compute_capability, k.sm_count, k.driver, k.isaac_version, k.template_name, k.dtype, k.layout,
                 k.shape, d.measured_ms, d.how, d.created);
  return 0;
}

// Whether `path` starts as every SQLite database does.
bool is_sqlite_file(const std::string& path) {
  static constexpr char magic[] = "SQLite format 3";  // with its terminating zero: 16 bytes
  char head[sizeof magic] = {};
  std::ifstream in(path, std::ios::binary);
  return in.read(head, sizeof head) && std::equal(head, head + sizeof head, magic);
}

void clear_decisions() {
  const std::string path = tuning_database_path();
  try {
    TuningDatabase db(path);
    fmt::print("removed {} decisions from {}\n", db.erase_all(), db.path());
  } catch (const DamagedDatabase&) {
    // Clearing is the way out of a damaged database, which holds only decisions that tuning makes
    // again. A file that is not SQLite at all may be something else that ISAAC_TUNING_DB names by
    // mistake: that one is left to the user, whom the error tells to delete it.
    if (!is_sqlite_file(path)) throw;
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) {
      fs::remove(path + suffix, ec);
      if (ec) throw Error(fmt::format("cannot remove the damaged tuning database {}{}: {}", path, suffix, ec.message()));
    }
    fmt::print("removed the damaged tuning database {} (isaac makes a new one when it next stores a decision)\n", path);
  }
}

// Removes the cache's files; a folder of a cache file's name is not one of them and stays. Returns
// whether every file could be removed.
bool clear_kernels() {
  const std::string dir = kernel_cache_directory();
  std::size_t removed = 0;
  std::vector<std::string> folders, failures;
  std::error_code ec;
  for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->path().extension() != ".kernel" && name.find(".kernel.tmp.") == std::string::npos) continue;
    std::error_code why;
    if (it->symlink_status(why).type() == fs::file_type::directory) {
      folders.push_back(name);
      continue;
    }
    if (fs::remove(it->path(), why)) ++removed;
    else if (why) failures.push_back(fmt::format("{}: {}", name, why.message()));
  }
  if (ec && ec != std::errc::no_such_file_or_directory) failures.push_back(fmt::format("{}: {}", dir, ec.message()));
  fmt::print("removed {} kernels from {}\n", removed, dir);
  if (!folders.empty())
    fmt::print("  left {} folders named like kernel files, which isaac does not write: {}\n", folders.size(),
               first_names(folders));
  if (!failures.empty())
    fmt::print(stderr, "isaac-tune: cache clear could not remove {} entries: {}\n", failures.size(),
               first_names(failures));
  return failures.empty();
}

int clear(bool decisions, bool kernels) {
  if (!decisions && !kernels) decisions = kernels = true;
  if (decisions) clear_decisions();
  return !kernels || clear_kernels() ? 0 : 1;
}

int export_to(const std::string& path) {
  check_output_path(path);
  TuningDatabase db(tuning_database_path());
  json out = {{"format", "isaac-decisions"}, {"version", 1}, {"decisions", json::array()}};
  for (const auto& [k, d] : db.list())
    out["decisions"].push_back({{"device", k.device}, {"compute_capability", k.compute_capability},
                                {"sm_count", k.sm_count}, {"driver", k.driver}, {"isaac_version", k.isaac_version},
                                {"template", k.template_name}, {"dtype", k.dtype}, {"layout", k.layout},
                                {"shape", k.shape}, {"params", d.params}, {"measured_ms", d.measured_ms},
                                {"how", d.how}, {"created", d.created}});
  write_file_atomically(path, out.dump(1) + "\n");
  fmt::print("exported {} decisions to {}\n", out["decisions"].size(), path);
  return 0;
}

// Decision `index` of an export, checked as isaac will use it: a key that a device can have, and
// parameters that the template's parser reads (an autotune bucket holds several, one per line).
std::pair<DecisionKey, Decision> decision_of(const json& e, std::size_t index, const std::string& path) {
  const auto fail = [&](const std::string& what) {
    return InvalidArgument(fmt::format("{}: decision {} {}; nothing was imported", path, index, what));
  };
  if (!e.is_object()) throw fail(fmt::format("is {} {}, not an object", e.type_name(), e.dump()));
  const auto field = [&](const char* name) -> const json& {
    const auto it = e.find(name);
    if (it == e.end()) throw fail(fmt::format("has no \"{}\"", name));
    return *it;
  };
  const auto text = [&](const char* name, bool may_be_empty) {
    const json& v = field(name);
    if (!v.is_string() || (!may_be_empty && v.get_ref<const std::string&>().empty()))
      throw fail(fmt::format("\"{}\" is {}, not a{} string", name, v.dump(), may_be_empty ? "" : " non-empty"));
    return v.get<std::string>();
  };
  const auto integer = [&](const char* name, std::int64_t low, std::int64_t high, const char* what) {
    const json& v = field(name);
    // nlohmann::json keeps non-negative integers unsigned: 2^64 - 1 must not read as -1.
    bool in_range = false;
    if (v.is_number_unsigned())
      in_range = v.get<std::uint64_t>() <= std::uint64_t(high) && std::int64_t(v.get<std::uint64_t>()) >= low;
    else if (v.is_number_integer())
      in_range = v.get<std::int64_t>() >= low && v.get<std::int64_t>() <= high;
    if (!in_range) throw fail(fmt::format("\"{}\" is {}: {}, from {} to {}", name, v.dump(), what, low, high));
    return int(v.get<std::int64_t>());
  };
  DecisionKey key{text("device", false),
                  integer("compute_capability", 10, 999, "a compute capability times ten, such as 90"),
                  integer("sm_count", 1, 65536, "the GPU's multiprocessors"),
                  integer("driver", 0, std::numeric_limits<int>::max(), "a CUDA driver version such as 13000"),
                  text("isaac_version", false),
                  text("template", false),
                  text("dtype", false),
                  text("layout", false),
                  text("shape", false)};
  if (key.template_name != "gemm" && key.template_name != "conv")
    throw fail(fmt::format("\"template\" is \"{}\": gemm or conv", key.template_name));
  try {
    ir::parse_dtype(key.dtype);
  } catch (const InvalidArgument& x) {
    throw fail(fmt::format("\"dtype\": {}", x.what()));
  }
  Decision decision{text("params", false), 0, text("how", true), text("created", true)};
  std::istringstream lines(decision.params);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    try {
      if (key.template_name == "gemm") lower::parse_gemm_params(line);
      else lower::parse_conv_params(line);
    } catch (const InvalidArgument& x) {
      throw fail(fmt::format("\"params\" \"{}\": {}", line, x.what()));
    }
  }
  const json& ms = field("measured_ms");
  decision.measured_ms = ms.is_number() ? ms.get<double>() : 0;
  if (!ms.is_number() || !(decision.measured_ms == -1 || (decision.measured_ms > 0 && std::isfinite(decision.measured_ms))))
    throw fail(fmt::format("\"measured_ms\" is {}: a time in milliseconds above 0, or -1 when nothing was timed",
                           ms.dump()));
  return {std::move(key), std::move(decision)};
}

int import_from(const std::string& path) {
  if (fs::is_directory(path))
    throw InvalidArgument(fmt::format("{} is a directory: give a file of `isaac-tune cache export`", path));
  std::ifstream in(path);
  if (!in) throw InvalidArgument(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "isaac-decisions" ||
      doc.value("version", 0) != 1 || !doc.contains("decisions") || !doc["decisions"].is_array())
    throw InvalidArgument(fmt::format("{} is not a decisions file of `isaac-tune cache export` (version 1)", path));
  // Every entry is checked before any is stored, and all are stored in one transaction: a file with
  // one bad entry changes nothing.
  std::vector<std::pair<DecisionKey, Decision>> decisions;
  for (const json& e : doc["decisions"]) decisions.push_back(decision_of(e, decisions.size(), path));
  TuningDatabase db(tuning_database_path());
  db.store_all(decisions);
  fmt::print("imported {} decisions into {}\n", decisions.size(), db.path());
  return 0;
}

}  // namespace

void add_cache_command(CLI::App& app, int& exit_code) {
  auto* cache = app.add_subcommand("cache", "the tuning database and the kernel cache (ISAAC_CACHE_DIR, "
                                            "ISAAC_TUNING_DB, ISAAC_KERNEL_CACHE_DIR move them; ISAAC_NO_CACHE=1 "
                                            "turns them off)");
  cache->require_subcommand(1);
  auto list = std::make_shared<bool>(false);
  auto* show_cmd = cache->add_subcommand("show", "where the caches are and what they hold");
  show_cmd->add_flag("--list", *list, "every decision");
  show_cmd->callback([list, &exit_code] { exit_code = show(*list); });
  auto decisions = std::make_shared<bool>(false), kernels = std::make_shared<bool>(false);
  auto* clear_cmd = cache->add_subcommand("clear", "empty the caches (both unless one is named)");
  clear_cmd->add_flag("--decisions", *decisions, "the tuning database only");
  clear_cmd->add_flag("--kernels", *kernels, "the kernel cache only");
  clear_cmd->callback([=, &exit_code] { exit_code = clear(*decisions, *kernels); });
  auto path = std::make_shared<std::string>();
  auto* export_cmd = cache->add_subcommand("export", "write the decisions to a JSON file (to take to another machine)");
  export_cmd->add_option("file", *path, "JSON file to write")->required();
  export_cmd->callback([path, &exit_code] { exit_code = export_to(*path); });
  auto* import_cmd = cache->add_subcommand("import", "add the decisions of an exported JSON file");
  import_cmd->add_option("file", *path, "JSON file of `cache export`")->required();
  import_cmd->callback([path, &exit_code] { exit_code = import_from(*path); });
}

}  // namespace isaac::tune::cli
