#include "cache.hpp"

#include <isaac/error.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/tune/database.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

namespace isaac::tune::cli {

namespace {

using nlohmann::json;

struct KernelFiles {
  std::size_t count = 0, bytes = 0;
};

KernelFiles kernel_files(const std::string& dir) {
  KernelFiles out;
  std::error_code ec;
  for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
       it.increment(ec))
    if (it->path().extension() == ".kernel") ++out.count, out.bytes += it->file_size();
  return out;
}

int show(bool list) {
  TuningDatabase db(tuning_database_path());
  const auto all = db.list();
  const std::string dir = kernel_cache_directory();
  const KernelFiles files = kernel_files(dir);
  fmt::print("tuning database {}: {} decisions\n", db.path(), all.size());
  fmt::print("kernel cache {}: {} kernels, {:.1f} MB\n", dir, files.count, files.bytes / 1e6);
  if (!caches_enabled()) fmt::print("ISAAC_NO_CACHE is set: isaac neither reads nor writes them\n");
  if (list)
    for (const auto& [k, d] : all)
      fmt::print("  {} (sm_{}, {} SMs, driver {}), isaac {}, {} {} {}: {}\n    {} ms, {}, {}\n", k.device,
                 k.compute_capability, k.sm_count, k.driver, k.isaac_version, k.template_name, k.dtype, k.layout,
                 k.shape, d.measured_ms, d.how, d.created);
  return 0;
}

int clear(bool decisions, bool kernels) {
  if (!decisions && !kernels) decisions = kernels = true;
  if (decisions) {
    TuningDatabase db(tuning_database_path());
    fmt::print("removed {} decisions from {}\n", db.erase_all(), db.path());
  }
  if (kernels) {
    const std::string dir = kernel_cache_directory();
    std::size_t n = 0;
    std::error_code ec;
    for (auto it = std::filesystem::directory_iterator(dir, ec); !ec && it != std::filesystem::directory_iterator();
         it.increment(ec))
      if (it->path().extension() == ".kernel" || it->path().string().find(".kernel.tmp.") != std::string::npos)
        n += std::filesystem::remove(it->path());
    fmt::print("removed {} kernels from {}\n", n, dir);
  }
  return 0;
}

int export_to(const std::string& path) {
  TuningDatabase db(tuning_database_path());
  json out = {{"format", "isaac-decisions"}, {"version", 1}, {"decisions", json::array()}};
  for (const auto& [k, d] : db.list())
    out["decisions"].push_back({{"device", k.device}, {"compute_capability", k.compute_capability},
                                {"sm_count", k.sm_count}, {"driver", k.driver}, {"isaac_version", k.isaac_version},
                                {"template", k.template_name}, {"dtype", k.dtype}, {"layout", k.layout},
                                {"shape", k.shape}, {"params", d.params}, {"measured_ms", d.measured_ms},
                                {"how", d.how}, {"created", d.created}});
  const std::string temp = path + ".tmp";
  std::ofstream(temp) << out.dump(1) << "\n";
  std::filesystem::rename(temp, path);
  fmt::print("exported {} decisions to {}\n", out["decisions"].size(), path);
  return 0;
}

int import_from(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument(fmt::format("cannot read {}", path));
  std::stringstream text;
  text << in.rdbuf();
  json doc = json::parse(text.str(), nullptr, false);
  if (doc.is_discarded() || !doc.is_object() || doc.value("format", "") != "isaac-decisions" ||
      doc.value("version", 0) != 1 || !doc.contains("decisions") || !doc["decisions"].is_array())
    throw InvalidArgument(fmt::format("{} is not a decisions file of `isaac-tune cache export` (version 1)", path));
  TuningDatabase db(tuning_database_path());
  std::size_t n = 0;
  for (const json& e : doc["decisions"]) {
    try {
      db.store({e.at("device"), e.at("compute_capability"), e.at("sm_count"), e.at("driver"), e.at("isaac_version"),
                e.at("template"), e.at("dtype"), e.at("layout"), e.at("shape")},
               {e.at("params"), e.at("measured_ms"), e.at("how"), e.at("created")});
    } catch (const json::exception& x) {
      throw InvalidArgument(fmt::format("{}: decision {} is malformed: {}", path, n, x.what()));
    }
    ++n;
  }
  fmt::print("imported {} decisions into {}\n", n, db.path());
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
