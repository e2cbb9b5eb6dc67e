#include <isaac/error.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/tune/database.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/version.hpp>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace isaac {

namespace {

using nlohmann::json;

std::atomic<std::size_t> hits{0}, misses{0}, stores{0}, damaged{0};

std::uint64_t fnv1a(const std::string& text, std::uint64_t h) {
  for (unsigned char c : text) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

std::string file_of(const std::string& key) {
  return fmt::format("{}/{:016x}{:016x}.kernel", kernel_cache_directory(), fnv1a(key, 0xcbf29ce484222325ull),
                     fnv1a(key, 0x84222325cbf29ce4ull));
}

void forget_damaged(const std::string& key) {
  const std::string path = file_of(key);
  ++damaged;
  std::remove(path.c_str());
  fmt::print(stderr, "isaac: warning: removed the damaged kernel cache file {}\n", path);
}

// A hash of the entry's fields but its checksum. The entry's CBOR is the same for the same fields
// (nlohmann::json keeps an object's keys sorted), so a changed byte of PTX, cubin or launch figures
// changes it: a damaged entry that still parses would otherwise be launched.
std::uint64_t checksum_of(json entry) {
  entry.erase("checksum");
  const std::vector<std::uint8_t> bytes = json::to_cbor(entry);
  return fnv1a(std::string(bytes.begin(), bytes.end()), 0xcbf29ce484222325ull);
}

// The entry's fields, or nothing when the file is absent, damaged or holds another key.
std::optional<json> read_entry(const std::string& key) {
  const std::string path = file_of(key);
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::stringstream bytes;
  bytes << in.rdbuf();
  const std::string data = bytes.str();
  json entry = json::from_cbor(data, true, false);
  if (entry.is_discarded() || !entry.is_object() || entry.value("format", "") != "isaac-kernel" ||
      entry.value("version", 0) != 1 || !entry.contains("checksum") || !entry["checksum"].is_number_unsigned() ||
      entry["checksum"].get<std::uint64_t>() != checksum_of(entry)) {
    forget_damaged(key);
    return std::nullopt;
  }
  if (entry.value("key", "") != key) return std::nullopt;
  return entry;
}

void write_entry(const std::string& key, json entry) {
  entry["format"] = "isaac-kernel";
  entry["version"] = 1;
  entry["key"] = key;
  entry["checksum"] = checksum_of(entry);
  const std::string path = file_of(key);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path).parent_path(), ec);
  const std::string temp =
      fmt::format("{}.tmp.{}.{}", path, ::getpid(), std::hash<std::thread::id>{}(std::this_thread::get_id()));
  const std::vector<std::uint8_t> bytes = json::to_cbor(entry);
  std::FILE* f = std::fopen(temp.c_str(), "wb");
  if (!f) return;  // a cache that cannot be written is not an error: the kernel still runs
  const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size() && std::fflush(f) == 0 &&
                  ::fsync(::fileno(f)) == 0;
  if (std::fclose(f) != 0 || !ok) {
    std::remove(temp.c_str());
    return;
  }
  std::filesystem::rename(temp, path, ec);
  if (ec) std::remove(temp.c_str());
  else ++stores;
}

// The fields GemmKernel and ConvKernel share, to and from an entry.
template <class Kernel>
json shared_fields(const Kernel& k) {
  json e = {{"ptx", k.ptx},          {"main", k.main_name},           {"prepare", k.prepare_name},
          {"threads", k.threads}, {"shared_bytes", k.shared_bytes}, {"helper_threads", k.helper_threads},
          {"overlaps_previous", k.overlaps_previous}, {"tile_loop", k.tile_loop}};
  if (!k.cubin.empty()) e["cubin"] = json::binary(std::vector<std::uint8_t>(k.cubin.begin(), k.cubin.end()));
  return e;
}

template <class Kernel>
Kernel with_shared_fields(const json& e) {
  Kernel k;
  k.ptx = e.at("ptx").get<std::string>();
  k.main_name = e.at("main").get<std::string>();
  k.prepare_name = e.at("prepare").get<std::string>();
  k.threads = e.at("threads").get<int>();
  k.shared_bytes = e.at("shared_bytes").get<int>();
  k.helper_threads = e.at("helper_threads").get<int>();
  // Entries written before the field existed hold kernels that do not wait: launch them in order.
  k.overlaps_previous = e.value("overlaps_previous", false);
  k.tile_loop = e.at("tile_loop").get<bool>();
  if (e.contains("cubin")) {
    const auto& bin = e.at("cubin").get_binary();
    k.cubin.assign(bin.begin(), bin.end());
  }
  return k;
}

// An entry without a cubin, read when one is wanted and ptxas could make it, is a miss: the entry is
// rewritten with one.
bool has_wanted_cubin(const json& e, bool cubin) { return !cubin || !lower::ptxas_available() || e.contains("cubin"); }

template <class Kernel>
void assemble_or_throw(Kernel& k, const lower::Target& target, const char* what, const std::string& params) {
  if (std::string failure = lower::assemble(k.ptx, target, k.cubin); !failure.empty())
    throw Error(fmt::format("the {} kernel {} was not assembled; {}", what, params, failure));
}

// The kernel stored under `key`, or the one `emit` makes (assembled where `cubin`), then stored.
// `read_own` and `write_own` move the fields of the template's kernel that the others lack.
template <class Kernel, class Emit, class ReadOwn, class WriteOwn>
Kernel cached_kernel(const std::string& key, bool cubin, const lower::Target& target, const char* what,
                     const std::string& params, const Emit& emit, const ReadOwn& read_own, const WriteOwn& write_own) {
  const bool enabled = tune::caches_enabled();
  if (enabled)
    if (auto e = read_entry(key); e && has_wanted_cubin(*e, cubin)) try {
      auto k = with_shared_fields<Kernel>(*e);
      read_own(*e, k);
      ++hits;
      return k;
    } catch (const json::exception&) {
      forget_damaged(key);
    }
  ++misses;
  Kernel k = emit();
  if (cubin) assemble_or_throw(k, target, what, params);
  if (enabled) {
    json e = shared_fields(k);
    write_own(k, e);
    write_entry(key, std::move(e));
  }
  return k;
}

}  // namespace

KernelCacheStats kernel_cache_stats() { return {hits.load(), misses.load(), stores.load(), damaged.load()}; }

std::string kernel_cache_directory() {
  const char* env = std::getenv("ISAAC_KERNEL_CACHE_DIR");
  if (env && *env) return env;
  return tune::cache_directory() + "/kernels";
}

lower::GemmKernel cached_gemm_kernel(const ir::Gemm& problem, const lower::GemmParams& params,
                                     const lower::Target& target, lower::SplitMode mode, bool cubin) {
  const std::string key = fmt::format("isaac {}|gemm|{}|{}|{}|{}", version(), ir::to_string(problem), params.str(),
                                      target.name(), lower::name(mode));
  return cached_kernel<lower::GemmKernel>(
      key, cubin, target, "GEMM", params.str(), [&] { return lower::emit_gemm(problem, params, target, mode); },
      [](const json& e, lower::GemmKernel& k) {
        k.reduce_name = e.at("reduce").get<std::string>();
        k.c_by_tma = e.at("c_by_tma").get<bool>();
      },
      [](const lower::GemmKernel& k, json& e) {
        e["reduce"] = k.reduce_name;
        e["c_by_tma"] = k.c_by_tma;
      });
}

lower::ConvKernel cached_conv_kernel(const ir::Conv& problem, const lower::ConvParams& params,
                                     const lower::ConvEpilogue& epilogue, const lower::Target& target, bool cubin) {
  const std::string key = fmt::format("isaac {}|conv|{}|{}|{}|{}", version(), ir::to_string(problem), params.str(),
                                      lower::to_string(epilogue), target.name());
  return cached_kernel<lower::ConvKernel>(
      key, cubin, target, "CONV", params.str(), [&] { return lower::emit_conv(problem, params, target, epilogue); },
      [](const json& e, lower::ConvKernel& k) {
        k.transform_name = e.at("transform").get<std::string>();
        k.input_transform_name = e.at("input_transform").get<std::string>();
        k.output_transform_name = e.at("output_transform").get<std::string>();
      },
      [](const lower::ConvKernel& k, json& e) {
        e["transform"] = k.transform_name;
        e["input_transform"] = k.input_transform_name;
        e["output_transform"] = k.output_transform_name;
      });
}

}  // namespace isaac
