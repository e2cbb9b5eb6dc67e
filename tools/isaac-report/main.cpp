// isaac-report: the main job without a GPU. Compiles the paper's GEMM and CONV problems to PTX with
// the parameters isaac chooses without timing anything: the shipped model's first choice over the
// whole legal space for the device named by --device (or, where no model ships, the brute-force
// sweep's winners, else the heuristic), and shows each kernel's resources as ptxas reports them.
// Kernels go through the kernel cache, so a second run emits nothing (the last line counts).
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/tune/heuristic.hpp>
#include <isaac/tune/models.hpp>
#include <isaac/tune/search.hpp>

#include <chrono>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>

using namespace isaac;

namespace {

struct Problem {
  std::string suite;
  std::int64_t m, n, k;
  bool at, bt;
};

// Fields of a CSV line; a field in double quotes may hold the separator.
std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (char ch : line) {
    if (ch == '"') quoted = !quoted;
    else if (ch == sep && !quoted) out.emplace_back();
    else out.back() += ch;
  }
  return out;
}

// A row of a CSV: its fields by column name, and where it is, for the messages.
struct CsvRow {
  std::map<std::string, std::string> fields;
  std::string where;  // "file:line"

  const std::string& operator[](const std::string& column) const { return fields.at(column); }
  // A whole field as an integer of at least `least` (std::stoll would take "12abc" as 12).
  std::int64_t integer(const std::string& column, std::int64_t least) const {
    const std::string& text = fields.at(column);
    std::int64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || ec != std::errc{} || end != text.data() + text.size() || value < least)
      throw InvalidArgument(fmt::format("{}: {} \"{}\" must be an integer of at least {}", where, column, text, least));
    return value;
  }
  bool flag(const std::string& column) const {
    const std::string& text = fields.at(column);
    if (text != "0" && text != "1")
      throw InvalidArgument(fmt::format("{}: {} \"{}\" must be 0 or 1", where, column, text));
    return text == "1";
  }
};

// Rows of a CSV with a header naming at least `columns`, '#' lines skipped; every row has the header's
// number of fields.
std::vector<CsvRow> read_csv(const std::string& path, const std::vector<std::string>& columns) {
  if (std::filesystem::is_directory(path)) throw InvalidArgument(fmt::format("{} is a directory, not a CSV file", path));
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read " + path);
  std::vector<CsvRow> rows;
  std::vector<std::string> header;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#') continue;
    auto fields = split(line);
    if (header.empty()) {
      header = fields;
      for (const std::string& column : columns)
        if (std::find(header.begin(), header.end(), column) == header.end())
          throw InvalidArgument(fmt::format("{}:{}: the header has no column \"{}\"", path, number, column));
      continue;
    }
    if (fields.size() != header.size())
      throw InvalidArgument(fmt::format("{}:{}: {} fields where the header has {}", path, number, fields.size(),
                                        header.size()));
    CsvRow row{{}, fmt::format("{}:{}", path, number)};
    for (size_t i = 0; i < header.size(); ++i) row.fields[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  if (header.empty()) throw InvalidArgument(fmt::format("{} has no header line (it holds nothing but comments and blank lines)", path));
  return rows;
}

Problem gemm_problem(const CsvRow& row) {
  return {row["suite"], row.integer("m", 1), row.integer("n", 1), row.integer("k", 1), row.flag("at"), row.flag("bt")};
}

std::string key(const std::string& dtype, const Problem& p) {
  return fmt::format("{} {} {} {} {} {}{}", dtype, p.suite, p.m, p.n, p.k, int(p.at), int(p.bt));
}

// ptxas's registers and spills for a kernel, or the estimate when ptxas is missing.
std::pair<std::string, std::string> resources(const std::string& ptx, const lower::Target& target,
                                              const std::string& kernel, int estimate) {
  if (!lower::ptxas_available()) return {"~" + std::to_string(estimate), "?"};
  auto report = lower::run_ptxas(ptx, target, kernel);
  if (!report.ok) return {"fail", "?"};
  return {std::to_string(report.registers), std::to_string(report.spill_stores + report.spill_loads)};
}

struct Device {
  std::string name;
  int compute_capability;
};

void report_conv(const std::string& problems_path, const std::string& winners_path, const std::vector<std::string>& dtypes,
                 const lower::Target& target, const lower::DeviceLimits& limits, const Device& device) {
  std::map<std::string, std::pair<std::string, std::string>> winners;  // "dtype name" -> layout, params
  if (std::ifstream(winners_path))
    for (auto& row : read_csv(winners_path, {"dtype", "name", "layout", "params"}))
      winners[row["dtype"] + " " + row["name"]] = {row["layout"], row["params"]};
  else
    std::cerr << "no CONV sweep winners at " << winners_path << ": using the first legal set everywhere\n";
  fmt::print("\n{:<4} {:<7} {:>3} {:>4} {:>4} {:>5} {:>5} {:>2}x{:<2} {:<10} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7}  {}\n", "type",
             "conv", "N", "P", "Q", "K", "C", "R", "S", "layout", "source", "thr", "smem", "regs", "spills", "llvm_ms",
             "parameters");
  const auto problems = read_csv(problems_path, {"name", "n", "p", "q", "k", "c", "r", "s"});
  for (const auto& dtype : dtypes)
    for (const auto& row : problems) {
      const auto n = row.integer("n", 1), p = row.integer("p", 1), q = row.integer("q", 1), k = row.integer("k", 1),
                 c = row.integer("c", 1), r = row.integer("r", 1), s = row.integer("s", 1);
      auto found = winners.find(dtype + " " + row["name"]);
      // bf16 has no sweep: its problems take the f16 winners' layouts (as isaac-bench-conv tuned --bf16).
      auto layout_of = found != winners.end() ? found
                       : dtype == "bf16"      ? winners.find("f16 " + row["name"])
                                              : winners.end();
      std::string layout = layout_of != winners.end() ? layout_of->second.first : "NCHW/KCRS";
      auto slash = layout.find('/');
      if (slash == std::string::npos)
        throw InvalidArgument(fmt::format("{}: the layout {} of {} {} names no filter layout (e.g. NCHW/KCRS)",
                                          winners_path, layout, dtype, row["name"]));
      ir::Conv conv = ir::dense_conv(ir::parse_dtype(dtype), n, c, p + r - 1, q + s - 1, k, r, s, 1, 0, 1,
                                     ir::parse_image_layout(layout.substr(0, slash)),
                                     ir::parse_filter_layout(layout.substr(slash + 1)));
      const auto model = tune::find_model("conv", conv.dtype, device.name, device.compute_capability);
      bool from_sweep = found != winners.end() && lower::check_conv(conv, lower::parse_conv_params(found->second.second), {}, limits);
      lower::ConvParams params;
      std::string source = "first";
      if (model) {
        const auto ranked = tune::rank_conv_space(conv, {}, limits, model->model, 1);
        if (ranked.empty()) throw InvalidArgument(fmt::format("{}: no legal CONV parameters for {}", row.where,
                                                              ir::to_string(conv)));
        params = ranked.front().params;
        source = "model";
      } else if (from_sweep) {
        params = lower::parse_conv_params(found->second.second);
        source = "sweep";
      } else {
        auto space = lower::conv_space(conv, {}, limits);
        if (space.empty())
          throw InvalidArgument(fmt::format("{}: no legal CONV parameters for {}", row.where, ir::to_string(conv)));
        params = space.front();
      }
      auto kernel = cached_conv_kernel(conv, params, {}, target, false);
      auto [regs, spills] = resources(kernel.ptx, target, kernel.main_name, 0);
      fmt::print("{:<4} {:<7} {:>3} {:>4} {:>4} {:>5} {:>5} {:>2}x{:<2} {:<10} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7.1f}  {}\n", dtype,
                 row["name"], n, p, q, k, c, r, s, layout, source, kernel.threads,
                 kernel.shared_bytes, regs, spills, kernel.emit_ms, params.str());
    }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"isaac-report: the paper's GEMM problems compiled to PTX, with parameters and resources"};
  std::string problems_path = "bench/problems/gemm_problems.csv", winners_path = "bench/results/gemm-sweep-winners.csv";
  std::string conv_problems_path = "bench/problems/conv_problems.csv";
  std::string conv_winners_path = "bench/results/conv-sweep-winners.csv", conv_dtypes_text = "f32,f16,bf16";
  std::string dtypes_text = "f32,f16,bf16,f64", target_text = "sm_90";
  Device device{"NVIDIA H100 80GB HBM3", 90};
  app.add_option("--problems", problems_path, "GEMM problems (suite,m,n,k,at,bt)");
  app.add_option("--winners", winners_path, "the brute-force sweep's winners (used where present)");
  app.add_option("--dtypes", dtypes_text, "comma-separated dtypes");
  app.add_option("--target", target_text, "the architecture to compile for");
  app.add_option("--conv-problems", conv_problems_path, "CONV problems (name,n,p,q,k,c,r,s); empty: none");
  app.add_option("--conv-winners", conv_winners_path, "the CONV sweep's winners");
  app.add_option("--conv-dtypes", conv_dtypes_text, "comma-separated dtypes for CONV");
  app.add_option("--device", device.name, "the GPU whose model chooses the parameters")->capture_default_str();
  app.add_option("--compute-capability", device.compute_capability, "of that GPU")->capture_default_str();
  bool f32_tensor_cores = false;
  app.add_flag("--f32-tensor-cores", f32_tensor_cores,
               "f32: also the TC=1 and TC=2 sets (three TF32 products per term), as TuningOptions::f32_tensor_cores");
  CLI11_PARSE(app, argc, argv);
  const auto start = std::chrono::steady_clock::now();
  try {
    lower::Target target = lower::parse_target(target_text);
    lower::DeviceLimits limits{.sm = target.sm, .f32_tensor_cores = f32_tensor_cores};
    std::vector<Problem> problems;
    for (const auto& row : read_csv(problems_path, {"suite", "m", "n", "k", "at", "bt"}))
      problems.push_back(gemm_problem(row));
    std::map<std::string, std::string> winners;
    if (std::ifstream(winners_path))
      for (const auto& row : read_csv(winners_path, {"dtype", "suite", "m", "n", "k", "at", "bt", "params"}))
        winners[key(row["dtype"], gemm_problem(row))] = row["params"];
    else
      std::cerr << "no sweep winners at " << winners_path << ": using the heuristic choice everywhere\n";
    if (!lower::ptxas_available()) std::cerr << "ptxas not found: registers are the estimate only\n";
    fmt::print("{:<4} {:<12} {:>5} {:>5} {:>6} {:<2} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7}  {}\n", "type", "suite", "M", "N",
               "K", "op", "source", "thr", "smem", "regs", "spills", "llvm_ms", "parameters");
    for (const auto& dtype : split(dtypes_text))
      for (const Problem& p : problems) {
        ir::Gemm g = ir::dense_gemm(ir::parse_dtype(dtype), p.m, p.n, p.k, p.at, p.bt);
        auto found = winners.find(key(dtype, p));
        const auto model = tune::find_model("gemm", g.dtype, device.name, device.compute_capability);
        bool from_sweep = found != winners.end() && lower::check_gemm(g, lower::parse_gemm_params(found->second), limits);
        lower::GemmParams params = from_sweep ? lower::parse_gemm_params(found->second) : tune::heuristic_gemm(g, limits);
        std::string source = from_sweep ? "sweep" : "heuristic";
        if (model) {
          const auto ranked = tune::rank_gemm_space(g, limits, model->model, 1);
          if (ranked.empty())
            throw InvalidArgument(fmt::format("{}: no legal GEMM parameters for {}", problems_path, ir::to_string(g)));
          params = ranked.front().params, source = "model";
        }
        auto kernel = cached_gemm_kernel(g, params, target, lower::SplitMode::atomic, false);
        auto [regs, spills] = resources(kernel.ptx, target, kernel.main_name,
                                        lower::estimate_gemm_registers(g.dtype, g.a_trans, g.b_trans, params));
        fmt::print("{:<4} {:<12} {:>5} {:>5} {:>6} {}{} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7.1f}  {}\n", dtype, p.suite, p.m,
                   p.n, p.k, p.at ? 'T' : 'N', p.bt ? 'T' : 'N', source, kernel.threads,
                   kernel.shared_bytes, regs, spills, kernel.emit_ms, params.str());
      }
    if (!conv_problems_path.empty())
      report_conv(conv_problems_path, conv_winners_path, split(conv_dtypes_text), target, limits, device);
    const KernelCacheStats stats = kernel_cache_stats();
    fmt::print("\n{:.1f} s; kernel cache {}: {} kernels emitted by LLVM, {} taken from the cache{}\n",
               std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), kernel_cache_directory(),
               stats.misses, stats.hits, stats.damaged ? fmt::format(", {} damaged files replaced", stats.damaged) : "");
  } catch (const std::exception& e) {  // isaac::Error, and whatever the standard library throws
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
