#include <isaac/error.hpp>
#include <isaac/tune/occupancy.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace isaac::tune {

namespace {

// sm_86 and sm_89 hold 48 warps and 16 blocks per SM; sm_70, sm_80 and sm_90 hold 64 and 32.
void fit_warps_and_blocks(int compute_capability, Multiprocessors& sms) {
  if (compute_capability == 86 || compute_capability == 89) sms.max_warps = 48, sms.max_blocks = 16;
}

}  // namespace

Multiprocessors multiprocessors(const runtime::DeviceInfo& info) {
  Multiprocessors sms;
  sms.count = info.sm_count;
  fit_warps_and_blocks(info.compute_capability(), sms);
  if (info.registers_per_sm > 0) sms.registers = info.registers_per_sm;
  if (info.max_shared_per_sm > 0) sms.shared_bytes = info.max_shared_per_sm;
  return sms;
}

Multiprocessors multiprocessors(const lower::DeviceLimits& device) {
  // Waves of blocks over no SMs have no size: every occupancy feature would be NaN.
  if (device.sm_count < 1)
    throw InvalidArgument(fmt::format("the device's SM count is {}; it must be at least 1", device.sm_count));
  Multiprocessors sms;
  sms.count = device.sm_count;
  fit_warps_and_blocks(device.sm, sms);
  switch (device.sm) {
    case 70: sms.shared_bytes = 96 * 1024; break;
    case 80: case 87: sms.shared_bytes = 164 * 1024; break;
    case 86: case 89: sms.shared_bytes = 100 * 1024; break;
    default: break;
  }
  return sms;
}

int resident_blocks(int threads, int registers, int shared_bytes, const Multiprocessors& sms) {
  const int warps = std::max(1, (threads + 31) / 32);
  const int registers_per_warp = (registers + 7) / 8 * 8 * 32;
  int blocks = std::min(sms.max_blocks, sms.max_warps / warps);
  blocks = std::min(blocks, sms.registers / std::max(1, registers_per_warp * warps));
  blocks = std::min(blocks, sms.shared_bytes / (std::max(shared_bytes, 0) + 1024));
  return std::max(blocks, 0);
}

double wave_fill(double blocks, int resident, const Multiprocessors& sms) {
  const double slots = double(sms.count) * std::max(resident, 1);
  return blocks / (std::ceil(blocks / slots) * slots);
}

double sm_balance(double blocks, const Multiprocessors& sms) { return wave_fill(blocks, 1, sms); }

int gemm_resident_blocks(const ir::Gemm& problem, const lower::GemmParams& params, const Multiprocessors& sms) {
  lower::GemmParams p = params;
  p.kg = 1;
  p.st = lower::gemm_shallow_stages(problem, p);
  const int threads = p.threads() + (p.tma ? 32 : 0);
  const int registers = p.tc == 2 && p.tma
                            ? p.ml * p.nl / std::max(p.threads(), 1) / (p.acc32 ? 1 : 2) + wgmma_tma_registers
                            : lower::estimate_gemm_registers(problem.dtype, problem.a_trans, problem.b_trans, p);
  return resident_blocks(threads, registers,
                         lower::gemm_shared_bytes(problem.dtype, problem.a_trans, problem.b_trans, p), sms);
}

double gemm_wave_fill(const ir::Gemm& problem, const lower::GemmParams& params, std::int64_t blocks, int resident,
                      const Multiprocessors& sms, const lower::DeviceLimits& device) {
  if (lower::gemm_runs_deep_pipeline(problem, params, device)) return double(blocks) / sms.count;
  return wave_fill(double(blocks), resident, sms);
}

}  // namespace isaac::tune
