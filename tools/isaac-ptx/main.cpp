// isaac-ptx: the GEMM template's PTX for a problem and a parameter set, for researchers.
//   isaac-ptx gemm 2560 16 2560 --layout NN --dtype f32 --params ML=64,NL=16,... [--ptxas] [--check]
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <iostream>

using namespace isaac;

int main(int argc, char** argv) {
  CLI::App app{"isaac-ptx: print the PTX of a GEMM kernel for a problem and a parameter set"};
  app.require_subcommand(1);
  auto* gemm = app.add_subcommand("gemm", "C(MxN) = alpha op(A)(MxK) op(B)(KxN) + beta C, column-major");
  std::int64_t m = 0, n = 0, k = 0, batch = 1;
  std::string layout = "NN", dtype = "f32", params_text, target_text = "sm_90", mode = "atomic";
  bool check_only = false, ptxas = false, quiet = false;
  gemm->add_option("M", m, "rows of C")->required();
  gemm->add_option("N", n, "columns of C")->required();
  gemm->add_option("K", k, "reduction length")->required();
  gemm->add_option("--batch", batch, "batch count");
  gemm->add_option("--layout", layout, "NN, NT, TN or TT: op(A) and op(B) as BLAS transposition flags")
      ->check(CLI::IsMember({"NN", "NT", "TN", "TT"}));
  gemm->add_option("--dtype", dtype, "f16, f32 or f64");
  gemm->add_option("--params", params_text, "e.g. ML=64,NL=64,MS=4,NS=4,U=8,KL=1,KG=1,VA=4,VB=4,LA=16,LB=2")
      ->required();
  gemm->add_option("--target", target_text, "sm_70 .. sm_90a");
  gemm->add_option("--split", mode, "KG > 1: atomic or deterministic")->check(CLI::IsMember({"atomic", "deterministic"}));
  gemm->add_flag("--check", check_only, "only say whether the parameters are legal for the problem, and why not");
  gemm->add_flag("--ptxas", ptxas, "also assemble with ptxas and print registers, spills and shared memory");
  gemm->add_flag("--quiet,-q", quiet, "do not print the PTX");
  CLI11_PARSE(app, argc, argv);

  try {
    ir::Gemm problem = ir::dense_gemm(ir::parse_dtype(dtype), m, n, k, layout[0] == 'T', layout[1] == 'T', batch);
    lower::GemmParams params = lower::parse_gemm_params(params_text);
    lower::Target target = lower::parse_target(target_text);
    auto legal = lower::check_gemm(problem, params, lower::DeviceLimits{.sm = target.sm});
    std::cerr << fmt::format("problem: {}\nparams:  {}\nlegal:   {}\n", ir::to_string(problem), params.str(),
                             legal ? "yes" : "no: " + legal.reason);
    if (check_only) return legal ? 0 : 1;
    if (!legal) return 1;
    auto kernel = lower::emit_gemm(problem, params, target,
                                   mode == "atomic" ? lower::SplitMode::atomic : lower::SplitMode::deterministic);
    auto grid = lower::gemm_grid(problem, params,
                                 mode == "atomic" ? lower::SplitMode::atomic : lower::SplitMode::deterministic);
    std::cerr << fmt::format("kernel:  {} threads, {} bytes dynamic shared memory, grid {}x{}x{}, LLVM {:.1f} ms\n",
                             kernel.threads, kernel.shared_bytes, grid.main[0], grid.main[1], grid.main[2], kernel.emit_ms);
    std::cerr << fmt::format("estimated registers: {}\n",
                             lower::estimate_gemm_registers(problem.dtype, problem.a_trans, problem.b_trans, params));
    if (ptxas) {
      auto report = lower::run_ptxas(kernel.ptx, target, kernel.main_name);
      if (!report.ok) {
        std::cerr << "ptxas failed:\n" << report.log;
        return 2;
      }
      std::cerr << fmt::format("ptxas {}: {} registers, {} bytes spill stores, {} bytes spill loads, {} bytes stack\n",
                               target.name(), report.registers, report.spill_stores, report.spill_loads,
                               report.stack_bytes);
    }
    if (!quiet) std::cout << kernel.ptx;
  } catch (const isaac::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
