#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/lower/ptxas.hpp>
#include <isaac/runtime/tensor_map.hpp>
#include <isaac/runtime/workspaces.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <optional>
#include <tuple>

namespace isaac {

struct CompiledGemm::State {
  lower::GemmParams params;
  lower::SplitMode mode;
  lower::GemmKernel kernel;
  int ordinal;
  lower::DeviceLimits limits;
  runtime::Module module;
  runtime::Kernel main;
  std::optional<runtime::Kernel> prepare, reduce;
  std::int64_t resident_blocks;  // of main on the whole device at once
  // KG > 1 deterministic: the partial sums, one buffer per stream so that concurrent runs never mix.
  mutable runtime::StreamWorkspaces workspaces;
};

lower::DeviceLimits device_limits(const runtime::DeviceInfo& info) {
  return {.sm = info.compute_capability(),
          .max_threads_per_block = info.max_threads_per_block,
          .max_shared_per_block = info.max_shared_per_block_optin,
          .registers_per_block = info.registers_per_block,
          .max_registers_per_thread = 255,
          .sm_count = info.sm_count,
          .max_shared_per_sm = info.max_shared_per_sm};
}

lower::GemmKernel build_gemm_kernel(const ir::Gemm& problem, const lower::GemmParams& params, lower::SplitMode mode,
                                    int ordinal) {
  auto target = lower::target_for_compute_capability(runtime::device_info(ordinal).compute_capability());
  return cached_gemm_kernel(problem, params, target, mode, true);
}

CompiledGemm::CompiledGemm(const ir::Gemm& problem, const lower::GemmParams& params, lower::SplitMode mode, int ordinal)
    : CompiledGemm(build_gemm_kernel(problem, params, mode, ordinal), params, mode, ordinal) {}

CompiledGemm::CompiledGemm(lower::GemmKernel kernel, const lower::GemmParams& params, lower::SplitMode mode,
                           int ordinal) {
  runtime::use_device(ordinal);
  auto module = kernel.cubin.empty() ? runtime::Module::from_ptx(kernel.ptx) : runtime::Module::from_cubin(kernel.cubin);
  auto main = module.kernel(kernel.main_name);
  if (kernel.shared_bytes > 48 * 1024) main.set_max_dynamic_shared(kernel.shared_bytes);
  std::optional<runtime::Kernel> prepare, reduce;
  if (!kernel.prepare_name.empty()) prepare = module.kernel(kernel.prepare_name);
  if (!kernel.reduce_name.empty()) reduce = module.kernel(kernel.reduce_name);
  const auto info = runtime::device_info(ordinal);
  const std::int64_t resident =
      kernel.tile_loop ? std::int64_t{info.sm_count} * main.max_active_blocks_per_sm(kernel.threads, kernel.shared_bytes) : 0;
  state_ = std::unique_ptr<State>(new State{params, mode, std::move(kernel), ordinal, device_limits(info),
                                            std::move(module), main, prepare, reduce, resident, {}});
}

CompiledGemm::CompiledGemm(CompiledGemm&&) noexcept = default;
CompiledGemm& CompiledGemm::operator=(CompiledGemm&&) noexcept = default;
CompiledGemm::~CompiledGemm() = default;

const lower::GemmParams& CompiledGemm::params() const { return state_->params; }
const lower::GemmKernel& CompiledGemm::kernel() const { return state_->kernel; }
runtime::KernelAttributes CompiledGemm::attributes() const { return state_->main.attributes(); }

lower::GemmGrid CompiledGemm::launch_grids(const ir::Gemm& g) const {
  const State& s = *state_;
  auto grid = lower::gemm_grid(g, s.params, s.mode);
  if (s.kernel.tile_loop)
    grid.main = {lower::gemm_tile_loop_blocks(g, s.params, s.resident_blocks), 1, 1};
  return grid;
}

void CompiledGemm::run(const ir::Gemm& g, runtime::DevicePtr c, runtime::DevicePtr a, runtime::DevicePtr b,
                       double alpha, double beta, const runtime::Stream& stream) const {
  const State& s = *state_;
  if (s.kernel.main_name.find(fmt::format("_{}_{}{}", ir::name(g.dtype), g.a_trans ? 'T' : 'N', g.b_trans ? 'T' : 'N')) ==
      std::string::npos)
    throw InvalidArgument(fmt::format("GEMM {} differs in dtype or layout from the compiled kernel {}", ir::to_string(g),
                                      s.kernel.main_name));
  if (auto legal = lower::check_gemm(g, s.params, s.limits); !legal)
    throw InvalidArgument(fmt::format("GEMM {} cannot run with {}: {}", ir::to_string(g), s.params.str(), legal.reason));
  if (lower::gemm_stores_c_by_tma(g, s.params) != s.kernel.c_by_tma)
    throw InvalidArgument(fmt::format(
        "GEMM {} cannot run on this kernel, compiled for a C that TMA {} move: TMA moves C where it is 16-byte aligned "
        "and M, ldc and the batch stride are multiples of 16 bytes; compile the kernel for this problem",
        ir::to_string(g), s.kernel.c_by_tma ? "does" : "does not"));
  // Vector accesses and tensor maps rely on the alignment the problem declares.
  const int elem = static_cast<int>(ir::size_of(g.dtype));
  for (auto [what, ptr, align] : {std::tuple{"A", a, g.align_a}, {"B", b, g.align_b}, {"C", c, g.align_c}}) {
    // A null pointer would fault on the device and lose the context; with K = 0 A and B are not read.
    if (ptr == 0 && (what[0] == 'C' || g.k > 0))
      throw InvalidArgument(fmt::format("the {} pointer is null (GEMM {})", what, ir::to_string(g)));
    if (ptr % static_cast<runtime::DevicePtr>(std::max(align, elem)))
      throw InvalidArgument(fmt::format("the {} pointer {:#x} is not {}-byte aligned, as the GEMM {} declares", what, ptr,
                                        std::max(align, elem), ir::to_string(g)));
  }
  runtime::use_device(s.ordinal);
  auto grid = launch_grids(g);

  // Scalars travel in the type the kernels declare: f64 for f64 problems, f32 otherwise.
  bool f64 = g.dtype == ir::DType::f64;
  double alpha64 = alpha, beta64 = beta;
  float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  void* alpha_arg = f64 ? static_cast<void*>(&alpha64) : &alpha32;
  void* beta_arg = f64 ? static_cast<void*>(&beta64) : &beta32;
  std::int32_t m = static_cast<std::int32_t>(g.m), n = static_cast<std::int32_t>(g.n), k = static_cast<std::int32_t>(g.k);
  std::int64_t lda = g.lda, ldb = g.ldb, ldc = g.ldc, sa = g.stride_a, sb = g.stride_b, sc = g.stride_c;
  runtime::DevicePtr w = s.workspaces.get(stream, grid.workspace_bytes);
  auto dim = [](const std::array<unsigned, 3>& d) { return runtime::Dim3{d[0], d[1], d[2]}; };
  unsigned helper_threads = static_cast<unsigned>(s.kernel.helper_threads);

  if (s.prepare) {
    void* args[] = {&c, beta_arg, &m, &n, &ldc, &sc};
    runtime::launch(*s.prepare, dim(grid.prepare), {helper_threads}, 0, stream, args);
  }
  // TMA=1: the maps depend on the pointers, so they are built for each launch (microseconds on the host).
  std::array<runtime::TensorMap, 3> maps;
  auto encode = [&](runtime::DevicePtr base, const lower::GemmTensorBox& box) {
    return runtime::encode_tensor_map(base, elem, box.dims, box.strides, std::array<std::uint32_t, 3>{box.box[0], box.box[1], 1},
                                      static_cast<runtime::TensorSwizzle>(box.swizzle_bytes));
  };
  if (s.params.tma) {
    auto boxes = lower::gemm_tensor_boxes(g, s.params);
    maps[0] = encode(a, boxes[0]);
    maps[1] = encode(b, boxes[1]);
  }
  if (s.kernel.c_by_tma) maps[2] = encode(c, lower::gemm_c_tensor_box(g, s.params));
  std::int32_t batches = static_cast<std::int32_t>(g.batch);  // a tile loop's last argument; others have fewer
  void* args[] = {&c, &a, &b, &w, alpha_arg, beta_arg, &m, &n, &k, &lda, &ldb, &ldc, &sa, &sb, &sc, &maps[0], &maps[1], &maps[2], &batches};
  // With a helper kernel, the kernel after it may start early (prepare -> main, main -> reduce): it waits
  // for the one before only where it needs its results, which hides a launch latency on short GEMMs.
  auto after_helper = s.kernel.overlaps_previous ? runtime::LaunchOrder::overlap_previous
                                                 : runtime::LaunchOrder::after_previous;
  runtime::launch(s.main, dim(grid.main), {static_cast<unsigned>(s.kernel.threads)},
                  static_cast<unsigned>(s.kernel.shared_bytes), stream, args,
                  s.prepare ? after_helper : runtime::LaunchOrder::after_previous);
  if (s.reduce) {
    void* reduce_args[] = {&c, &w, alpha_arg, beta_arg, &m, &n, &ldc, &sc};
    runtime::launch(*s.reduce, dim(grid.reduce), {helper_threads}, 0, stream, reduce_args, after_helper);
  }
}

}  // namespace isaac
