#include <isaac/conv.hpp>
#include <isaac/error.hpp>
#include <isaac/gemm.hpp>
#include <isaac/kernel_cache.hpp>
#include <isaac/runtime/tensor_map.hpp>
#include <isaac/runtime/workspaces.hpp>

#include <fmt/format.h>

#include <optional>

namespace isaac {

struct CompiledConv::State {
  ir::Conv problem;
  lower::ConvParams params;
  lower::ConvEpilogue epilogue;
  lower::ConvKernel kernel;
  int ordinal;
  runtime::Module module;
  runtime::Kernel main;
  std::optional<runtime::Kernel> prepare;
  std::optional<runtime::Kernel> transform;  // WG=1 and 2: the filter's planes, into a workspace per stream
  std::optional<runtime::Kernel> input_transform, output_transform;  // WG=2
  runtime::Buffer lut;
  // Launch geometry and, for WG=2, the product's GEMM: fixed by the problem, the parameters and, for a
  // tile loop, the blocks the device holds at once.
  lower::ConvGrid grid;
  std::optional<lower::WinogradProduct> product;
  // WG=1: the transformed filter, one buffer per stream so that concurrent runs never mix.
  mutable runtime::StreamWorkspaces workspaces;
};

CompiledConv::CompiledConv(const ir::Conv& problem, const lower::ConvParams& params,
                           const lower::ConvEpilogue& epilogue, int ordinal)
    : CompiledConv(problem,
                   cached_conv_kernel(problem, params, epilogue,
                                      lower::target_for_compute_capability(runtime::device_info(ordinal).compute_capability()),
                                      true),
                   params, epilogue, ordinal) {}

CompiledConv::CompiledConv(const ir::Conv& problem, lower::ConvKernel kernel, const lower::ConvParams& params,
                           const lower::ConvEpilogue& epilogue, int ordinal) {
  auto limits = device_limits(runtime::device_info(ordinal));
  if (auto legal = lower::check_conv(problem, params, epilogue, limits); !legal)
    throw InvalidArgument(fmt::format("CONV {} cannot run with {} on this device: {}", ir::to_string(problem),
                                      params.str(), legal.reason));
  if ((params.wg && kernel.transform_name.empty()) ||
      (params.wg == 2 && (kernel.input_transform_name.empty() || kernel.output_transform_name.empty())))
    throw InvalidArgument(fmt::format("the kernel given for {} lacks the transform kernels that WG={} needs: emit it "
                                      "with lower::emit_conv for these parameters",
                                      params.str(), params.wg));
  runtime::use_device(ordinal);
  auto module = kernel.cubin.empty() ? runtime::Module::from_ptx(kernel.ptx) : runtime::Module::from_cubin(kernel.cubin);
  auto main = module.kernel(kernel.main_name);
  if (kernel.shared_bytes > 48 * 1024) main.set_max_dynamic_shared(kernel.shared_bytes);
  std::optional<runtime::Kernel> prepare;
  if (!kernel.prepare_name.empty()) prepare = module.kernel(kernel.prepare_name);
  std::optional<runtime::Kernel> transform;
  if (!kernel.transform_name.empty()) transform = module.kernel(kernel.transform_name);
  std::optional<runtime::Kernel> input_transform, output_transform;
  if (params.wg == 2) {
    input_transform = module.kernel(kernel.input_transform_name);
    output_transform = module.kernel(kernel.output_transform_name);
  }
  // The look-up table: built and uploaded once, here.
  auto table = lower::conv_lookup_table(problem, params);
  runtime::Buffer lut(table.size() * sizeof(lower::ConvLutEntry));
  if (!table.empty()) lut.upload(table.data(), lut.bytes());
  lower::ConvGrid grid = lower::conv_grid(problem, params);
  if (kernel.tile_loop) {
    const std::int64_t resident = std::int64_t{runtime::device_info(ordinal).sm_count} *
                                  main.max_active_blocks_per_sm(kernel.threads, kernel.shared_bytes);
    grid.main = {lower::conv_tile_loop_blocks(problem, params, resident), 1, 1};
  }
  state_ = std::unique_ptr<State>(new State{problem, params, epilogue, std::move(kernel), ordinal, std::move(module),
                                            main, prepare, transform, input_transform, output_transform, std::move(lut),
                                            grid, {}, {}});
  if (params.wg == 2) state_->product = lower::winograd_product(problem, params);
}

CompiledConv::CompiledConv(CompiledConv&&) noexcept = default;
CompiledConv& CompiledConv::operator=(CompiledConv&&) noexcept = default;
CompiledConv::~CompiledConv() = default;

const ir::Conv& CompiledConv::problem() const { return state_->problem; }
const lower::ConvParams& CompiledConv::params() const { return state_->params; }
const lower::ConvEpilogue& CompiledConv::epilogue() const { return state_->epilogue; }
const lower::ConvKernel& CompiledConv::kernel() const { return state_->kernel; }
runtime::KernelAttributes CompiledConv::attributes() const { return state_->main.attributes(); }

void CompiledConv::run(runtime::DevicePtr output, runtime::DevicePtr input, runtime::DevicePtr filter, double alpha,
                       double beta, const runtime::Stream& stream, runtime::DevicePtr bias) const {
  const State& s = *state_;
  if (s.epilogue.bias && bias == 0)
    throw InvalidArgument("this CONV kernel adds a bias: pass the device pointer of its K values");
  if (!s.epilogue.bias && bias != 0)
    throw InvalidArgument("this CONV kernel was compiled without a bias: compile it with ConvEpilogue::bias");
  int elem = static_cast<int>(ir::size_of(s.problem.dtype));
  auto check_alignment = [&](const char* what, runtime::DevicePtr ptr, int align) {
    if (ptr == 0) throw InvalidArgument(fmt::format("the {} pointer is null", what));  // it would fault on the device
    if (ptr % static_cast<runtime::DevicePtr>(std::max(align, elem)))
      throw InvalidArgument(fmt::format("the {} pointer is not {}-byte aligned, as the compiled problem declares", what,
                                        std::max(align, elem)));
  };
  check_alignment("input", input, s.problem.align_input);
  check_alignment("filter", filter, s.problem.align_filter);
  // TMA writes the output where the kernel stores by TMA; elsewhere the kernel tests O's alignment.
  const bool output_by_tma = lower::conv_stores_by_tma(s.problem, s.params);
  check_alignment("output", output, output_by_tma ? s.problem.align_output : elem);
  runtime::use_device(s.ordinal);
  const lower::ConvGrid& grid = s.grid;
  bool f64 = s.problem.dtype == ir::DType::f64;
  double alpha64 = alpha, beta64 = beta;
  float alpha32 = static_cast<float>(alpha), beta32 = static_cast<float>(beta);
  void* alpha_arg = f64 ? static_cast<void*>(&alpha64) : &alpha32;
  void* beta_arg = f64 ? static_cast<void*>(&beta64) : &beta32;
  runtime::DevicePtr lut = s.lut.ptr();
  auto dim = [](const std::array<unsigned, 3>& d) { return runtime::Dim3{d[0], d[1], d[2]}; };
  if (s.params.wg == 2) {
    run_winograd_product(output, input, filter, bias, alpha_arg, beta_arg, stream);
    return;
  }
  if (s.transform) {
    runtime::DevicePtr planes = s.workspaces.get(stream, grid.workspace_bytes);
    void* args[] = {&planes, &filter};
    runtime::launch(*s.transform, dim(grid.helper), {static_cast<unsigned>(s.kernel.helper_threads)}, 0, stream, args);
    filter = planes;
  }
  if (s.prepare) {
    void* args[] = {&output, &bias, beta_arg};
    runtime::launch(*s.prepare, dim(grid.helper), {static_cast<unsigned>(s.kernel.helper_threads)}, 0, stream, args);
  }
  // TMA: the maps depend on the pointers, so they are built for each launch (microseconds on the host).
  std::array<runtime::TensorMap, 3> maps;
  if (lower::conv_tma(s.problem, s.params)) {
    const lower::ConvTensorMaps m = lower::conv_tensor_maps(s.problem, s.params);
    auto swizzle = static_cast<runtime::TensorSwizzle>(m.swizzle_bytes);
    maps[0] = runtime::encode_im2col_tensor_map(input, elem, m.input_dims, m.input_strides, m.lower_corner,
                                                m.upper_corner, m.channels, m.pixels, m.element_strides, swizzle);
    maps[1] = runtime::encode_tensor_map(filter, elem, m.filter_dims, m.filter_strides, m.filter_box, swizzle);
    if (output_by_tma)
      maps[2] = runtime::encode_tensor_map(output, elem, m.output_dims, m.output_strides, m.output_box,
                                           runtime::TensorSwizzle::bytes128);
  }
  void* args[] = {&output, &input, &filter, &lut, &bias, alpha_arg, beta_arg, &maps[0], &maps[1], &maps[2]};
  // After prepare, main may start early: it waits for prepare only before its epilogue (sm_90).
  auto order = s.prepare && s.kernel.overlaps_previous ? runtime::LaunchOrder::overlap_previous
                                                       : runtime::LaunchOrder::after_previous;
  runtime::launch(s.main, dim(grid.main), {static_cast<unsigned>(s.kernel.threads)},
                  static_cast<unsigned>(s.kernel.shared_bytes), stream, args, order);
}

void CompiledConv::run_winograd_product(runtime::DevicePtr output, runtime::DevicePtr input, runtime::DevicePtr filter,
                                        runtime::DevicePtr bias, void* alpha_arg, void* beta_arg,
                                        const runtime::Stream& stream) const {
  const State& s = *state_;
  const lower::ConvGrid& grid = s.grid;
  const lower::WinogradProduct& product = *s.product;
  const runtime::DevicePtr workspace = s.workspaces.get(stream, grid.workspace_bytes);
  runtime::DevicePtr u = workspace + product.filter_offset, v = workspace + product.input_offset,
                     m = workspace + product.product_offset, none = 0;
  auto dim = [](const std::array<unsigned, 3>& d) { return runtime::Dim3{d[0], d[1], d[2]}; };
  const runtime::Dim3 helper_block{static_cast<unsigned>(s.kernel.helper_threads)};
  {
    void* args[] = {&u, &filter};
    runtime::launch(*s.transform, dim(grid.helper), helper_block, 0, stream, args);
  }
  {
    void* args[] = {&v, &input};
    runtime::launch(*s.input_transform, dim(grid.input_transform), helper_block, 0, stream, args);
  }
  {
    const ir::Gemm& g = product.gemm;
    const bool f64 = g.dtype == ir::DType::f64;
    double one64 = 1, zero64 = 0;
    float one32 = 1, zero32 = 0;
    void* one = f64 ? static_cast<void*>(&one64) : &one32;
    void* zero = f64 ? static_cast<void*>(&zero64) : &zero32;
    auto m32 = static_cast<std::int32_t>(g.m), n32 = static_cast<std::int32_t>(g.n), k32 = static_cast<std::int32_t>(g.k);
    std::int64_t lda = g.lda, ldb = g.ldb, ldc = g.ldc, sa = g.stride_a, sb = g.stride_b, sc = g.stride_c;
    void* args[] = {&m, &v, &u, &none, one, zero, &m32, &n32, &k32, &lda, &ldb, &ldc, &sa, &sb, &sc};
    runtime::launch(s.main, dim(grid.main), {static_cast<unsigned>(s.kernel.threads)},
                    static_cast<unsigned>(s.kernel.shared_bytes), stream, args);
  }
  void* args[] = {&output, &m, &bias, alpha_arg, beta_arg};
  runtime::launch(*s.output_transform, dim(grid.output_transform), helper_block, 0, stream, args);
}

}  // namespace isaac
