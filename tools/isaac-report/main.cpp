// isaac-report: the main job without a GPU. Compiles the paper's GEMM problems to PTX with the
// parameters isaac would choose (the brute-force sweep's winners where the repository has them, the
// heuristic otherwise) and shows each kernel's resources as ptxas reports them.
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/tune/heuristic.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

using namespace isaac;

namespace {

struct Problem {
  std::string suite;
  std::int64_t m, n, k;
  bool at, bt;
};

std::vector<std::string> split(const std::string& line, char sep = ',') {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string field; std::getline(in, field, sep);) out.push_back(field);
  return out;
}

// Rows of a CSV with a header, '#' lines skipped, as maps from column name to text.
std::vector<std::map<std::string, std::string>> read_csv(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InvalidArgument("cannot read " + path);
  std::vector<std::map<std::string, std::string>> rows;
  std::vector<std::string> header;
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    auto fields = split(line);
    if (header.empty()) {
      header = fields;
      continue;
    }
    if (fields.size() < header.size()) fields.resize(header.size());
    std::map<std::string, std::string> row;
    for (size_t i = 0; i < header.size(); ++i) row[header[i]] = fields[i];
    rows.push_back(std::move(row));
  }
  return rows;
}

std::string key(const std::string& dtype, const Problem& p) {
  return fmt::format("{} {} {} {} {} {}{}", dtype, p.suite, p.m, p.n, p.k, int(p.at), int(p.bt));
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"isaac-report: the paper's GEMM problems compiled to PTX, with parameters and resources"};
  std::string problems_path = "bench/problems/gemm_problems.csv", winners_path = "bench/results/gemm-sweep-winners.csv";
  std::string dtypes_text = "f32,f16,f64", target_text = "sm_90";
  app.add_option("--problems", problems_path, "GEMM problems (suite,m,n,k,at,bt)");
  app.add_option("--winners", winners_path, "the brute-force sweep's winners (used where present)");
  app.add_option("--dtypes", dtypes_text, "comma-separated dtypes");
  app.add_option("--target", target_text, "the architecture to compile for");
  CLI11_PARSE(app, argc, argv);
  try {
    lower::Target target = lower::parse_target(target_text);
    lower::DeviceLimits limits{.sm = target.sm};
    std::vector<Problem> problems;
    for (auto& row : read_csv(problems_path))
      problems.push_back({row["suite"], std::stoll(row["m"]), std::stoll(row["n"]), std::stoll(row["k"]),
                          row["at"] == "1", row["bt"] == "1"});
    std::map<std::string, std::string> winners;
    if (std::ifstream(winners_path))
      for (auto& row : read_csv(winners_path)) {
        Problem p{row["suite"], std::stoll(row["m"]), std::stoll(row["n"]), std::stoll(row["k"]), row["at"] == "1",
                  row["bt"] == "1"};
        winners[key(row["dtype"], p)] = row["params"];
      }
    else
      std::cerr << "no sweep winners at " << winners_path << ": using the heuristic choice everywhere\n";
    bool ptxas = lower::ptxas_available();
    if (!ptxas) std::cerr << "ptxas not found: registers and spills are the estimate only\n";
    fmt::print("{:<4} {:<12} {:>5} {:>5} {:>6} {:<2} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7}  {}\n", "type", "suite", "M", "N",
               "K", "op", "source", "thr", "smem", "regs", "spills", "llvm_ms", "parameters");
    for (const auto& dtype : split(dtypes_text))
      for (const Problem& p : problems) {
        ir::Gemm g = ir::dense_gemm(ir::parse_dtype(dtype), p.m, p.n, p.k, p.at, p.bt);
        auto found = winners.find(key(dtype, p));
        bool from_sweep = found != winners.end() && lower::check_gemm(g, lower::parse_gemm_params(found->second), limits);
        lower::GemmParams params = from_sweep ? lower::parse_gemm_params(found->second) : tune::heuristic_gemm(g, limits);
        auto kernel = lower::emit_gemm(g, params, target);
        std::string regs = "~" + std::to_string(lower::estimate_gemm_registers(g.dtype, g.a_trans, g.b_trans, params));
        std::string spills = "?";
        if (ptxas) {
          auto report = lower::run_ptxas(kernel.ptx, target, kernel.main_name);
          regs = report.ok ? std::to_string(report.registers) : "fail";
          spills = std::to_string(report.spill_stores + report.spill_loads);
        }
        fmt::print("{:<4} {:<12} {:>5} {:>5} {:>6} {}{} {:<9} {:>4} {:>6} {:>4} {:>6} {:>7.1f}  {}\n", dtype, p.suite, p.m,
                   p.n, p.k, p.at ? 'T' : 'N', p.bt ? 'T' : 'N', from_sweep ? "sweep" : "heuristic", kernel.threads,
                   kernel.shared_bytes, regs, spills, kernel.emit_ms, params.str());
      }
  } catch (const isaac::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
