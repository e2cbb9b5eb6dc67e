// isaac-ptx: the GEMM template's PTX for a problem and a parameter set, for researchers.
//   isaac-ptx conv --n 16 --c 32 --h 42 --w 175 --k 32 --r 5 --s 10 --layout NCHW/KCRS --params PL=64,...
//   isaac-ptx gemm 2560 16 2560 --layout NN --dtype f32 --params ML=64,NL=16,... [--ptxas] [--check]
#include <isaac/error.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/lower/gemm.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/lower/conv.hpp>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <functional>
#include <memory>
#include <tuple>
#include <utility>
#include <iostream>

using namespace isaac;

// The report both subcommands print to stderr around the PTX: the legality verdict first, then
// (when legal) the kernel's shape with `details`, ptxas's counts with --ptxas, and the PTX unless
// --quiet. `emit` returns the kernel and the lines that describe it. Returns the exit status.
template <class Problem, class Params, class Emit>
int report(const Problem& problem, const Params& params, const lower::Legality& legal, const lower::Target& target,
           bool check_only, bool ptxas, bool quiet, Emit emit) {
  std::cerr << fmt::format("problem: {}\nparams:  {}\nlegal:   {}\n", ir::to_string(problem), params.str(),
                           legal ? "yes" : "no: " + legal.reason);
  if (check_only) return legal ? 0 : 1;
  if (!legal) return 1;
  auto [kernel, details] = emit();
  std::cerr << details;
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
  return 0;
}

// ---- isaac-ptx conv: the CONV template (issue 5) ---------------------------------------------
//   isaac-ptx conv --n 16 --c 32 --h 42 --w 175 --k 32 --r 5 --s 10 --layout NCHW/KCRS --dtype f32
//                  --params PL=64,KL=32,... [--stride 1] [--pad 0] [--dilation 1] [--ptxas] [--check]
static std::function<int()> add_conv_command(CLI::App& app) {
  struct Options {
    std::int64_t n = 1, c = 1, h = 1, w = 1, k = 1, r = 1, s = 1, stride = 1, pad = 0, dilation = 1;
    std::string layout = "NCHW/KCRS", dtype = "f32", params, target = "sm_90", bias_relu = "none";
    bool check = false, ptxas = false, quiet = false;
  };
  auto o = std::make_shared<Options>();
  auto* cmd = app.add_subcommand("conv", "O(n,k,p,q) = sum_{c,r,s} I(n,c,p*stride+r*dilation-pad,...) F(k,c,r,s)");
  // The sizes have no defaults: a convolution of 1 x 1 images that nobody asked for is not a result.
  for (auto [name, field, help] : {std::tuple{"--n", &Options::n, "images"}, {"--c", &Options::c, "input channels"},
                                   {"--h", &Options::h, "input height"}, {"--w", &Options::w, "input width"},
                                   {"--k", &Options::k, "filters"}, {"--r", &Options::r, "filter height"},
                                   {"--s", &Options::s, "filter width"}})
    cmd->add_option(name, (*o).*field, help)->required();
  for (auto [name, field, help] : {std::tuple{"--stride", &Options::stride, "both axes"},
                                   {"--pad", &Options::pad, "both axes"}, {"--dilation", &Options::dilation, "both axes"}})
    cmd->add_option(name, (*o).*field, help)->capture_default_str();
  cmd->add_option("--layout", o->layout, "INPUT/FILTER: NCHW/KCRS, CHWN/CRSK or NHWC/KRSC (any pairing)");
  cmd->add_option("--dtype", o->dtype, "f16, f32 or f64");
  cmd->add_option("--params", o->params, "e.g. PL=64,KL=64,PS=4,KS=4,U=8,CS=1,CL=1,CG=1,VI=1,VF=4,LI=16,LF=2,DB=1,TC=0 (LI, LF left out: as the search space sets them)")
      ->required();
  cmd->add_option("--target", o->target, "sm_70 .. sm_90a");
  cmd->add_option("--epilogue", o->bias_relu, "none, bias, relu or bias+relu")
      ->check(CLI::IsMember({"none", "bias", "relu", "bias+relu"}));
  cmd->add_flag("--check", o->check, "only say whether the parameters are legal for the problem, and why not");
  cmd->add_flag("--ptxas", o->ptxas, "also assemble with ptxas and print registers, spills and shared memory");
  cmd->add_flag("--quiet,-q", o->quiet, "do not print the PTX");
  return [o, cmd]() -> int {
    if (!cmd->parsed()) return -1;
    try {
      auto slash = o->layout.find('/');
      if (slash == std::string::npos) throw InvalidArgument("--layout is INPUT/FILTER, e.g. NCHW/KCRS");
      ir::Conv problem = ir::dense_conv(ir::parse_dtype(o->dtype), o->n, o->c, o->h, o->w, o->k, o->r, o->s, o->stride,
                                        o->pad, o->dilation, ir::parse_image_layout(o->layout.substr(0, slash)),
                                        ir::parse_filter_layout(o->layout.substr(slash + 1)));
      lower::ConvParams params = lower::parse_conv_params(o->params);
      if (params.wg != 1 && (params.li == 0 || params.lf == 0)) {  // not given: as the search space sets them
        lower::ConvParams fitted = params;
        lower::fit_conv_load_layouts(problem, fitted);
        if (params.li == 0) params.li = fitted.li;
        if (params.lf == 0) params.lf = fitted.lf;
      }
      lower::ConvEpilogue epilogue{o->bias_relu.find("bias") != std::string::npos,
                                   o->bias_relu.find("relu") != std::string::npos};
      lower::Target target = lower::parse_target(o->target);
      auto legal = lower::check_conv(problem, params, epilogue, lower::DeviceLimits{.sm = target.sm});
      return report(problem, params, legal, target, o->check, o->ptxas, o->quiet, [&] {
        auto kernel = lower::emit_conv(problem, params, target, epilogue);
        auto grid = lower::conv_grid(problem, params);
        std::string helper =
            params.wg == 2 ? fmt::format(", Winograd planes in a {}-byte workspace, product {} ({})",
                                         grid.workspace_bytes, ir::to_string(lower::winograd_product(problem, params).gemm),
                                         lower::winograd_product(problem, params).params.str())
            : params.wg    ? fmt::format(", filter transform into a {}-byte workspace", grid.workspace_bytes)
            : lower::conv_tma(problem, params)
                ? fmt::format(", TMA copies (im2col){}{}",
                              lower::conv_tma_producer_warp(problem, params) ? " from a producer warp" : "",
                              lower::conv_stores_by_tma(problem, params) ? ", TMA stores" : "")
                : fmt::format(", LUT {} entries", lower::conv_lookup_table(problem, params).size());
        // A tile loop's blocks are the device's at once (CompiledConv), which it does not know here.
        const std::string blocks = kernel.tile_loop ? fmt::format("a tile loop over {} tiles", grid.main[0])
                                                    : fmt::format("grid {}x{}", grid.main[0], grid.main[1]);
        return std::pair{kernel, fmt::format("kernel:  {} threads, {} bytes dynamic shared memory, {}, LLVM "
                                             "{:.1f} ms{}\nestimated registers: {}\n",
                                             kernel.threads, kernel.shared_bytes, blocks, kernel.emit_ms, helper,
                                             lower::estimate_conv_registers(problem, params))};
      });
    } catch (const isaac::Error& e) {
      std::cerr << "error: " << e.what() << "\n";
      return 1;
    }
  };
}

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
  gemm->add_option("--params", params_text, "e.g. ML=64,NL=64,MS=4,NS=4,U=16,VA=4,VB=4 (keys not given keep their defaults; LA and LB are fitted)")
      ->required();
  gemm->add_option("--target", target_text, "sm_70 .. sm_90a");
  gemm->add_option("--split", mode, "KG > 1: atomic or deterministic")->check(CLI::IsMember({"atomic", "deterministic"}));
  gemm->add_flag("--check", check_only, "only say whether the parameters are legal for the problem, and why not");
  gemm->add_flag("--ptxas", ptxas, "also assemble with ptxas and print registers, spills and shared memory");
  gemm->add_flag("--quiet,-q", quiet, "do not print the PTX");
  auto run_conv = add_conv_command(app);
  CLI11_PARSE(app, argc, argv);
  if (int status = run_conv(); status >= 0) return status;

  try {
    ir::Gemm problem = ir::dense_gemm(ir::parse_dtype(dtype), m, n, k, layout[0] == 'T', layout[1] == 'T', batch);
    lower::GemmParams params = lower::parse_gemm_params(params_text);
    if (params.la == 0 || params.lb == 0) {  // not given: as the search space sets them
      lower::GemmParams fitted = params;
      lower::fit_gemm_load_layouts(problem.a_trans, problem.b_trans, fitted);
      if (params.la == 0) params.la = fitted.la;
      if (params.lb == 0) params.lb = fitted.lb;
    }
    lower::Target target = lower::parse_target(target_text);
    auto legal = lower::check_gemm(problem, params, lower::DeviceLimits{.sm = target.sm});
    auto split = lower::parse_split_mode(mode);
    return report(problem, params, legal, target, check_only, ptxas, quiet, [&] {
      auto kernel = lower::emit_gemm(problem, params, target, split);
      auto grid = lower::gemm_grid(problem, params, split);
      // A tile loop's blocks are the device's at once (CompiledGemm::launch_grids), which it does not know here.
      const std::string blocks =
          kernel.tile_loop ? fmt::format("a {}tile loop over {} tiles", lower::gemm_ping_pong(problem, params) ? "ping-pong " : "",
                                         std::int64_t{grid.main[0]} * grid.main[2])
                           : fmt::format("grid {}x{}x{}", grid.main[0], grid.main[1], grid.main[2]);
      return std::pair{
          kernel,
          fmt::format("kernel:  {} threads, {} bytes dynamic shared memory, {}, LLVM {:.1f} ms\n"
                      "estimated registers: {}\n",
                      kernel.threads, kernel.shared_bytes, blocks, kernel.emit_ms,
                      lower::estimate_gemm_registers(problem.dtype, problem.a_trans, problem.b_trans, params))};
    });
  } catch (const isaac::Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
}
