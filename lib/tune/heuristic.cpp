#include <isaac/error.hpp>
#include <isaac/tune/heuristic.hpp>

#include <algorithm>

namespace isaac::tune {

void fit_load_layouts(const ir::Gemm& g, lower::GemmParams& p) { lower::fit_gemm_load_layouts(g.a_trans, g.b_trans, p); }

lower::GemmParams heuristic_gemm(const ir::Gemm& g, const lower::DeviceLimits& device) {
  if (auto legal = lower::check_gemm_problem(g, device); !legal) throw InvalidArgument(legal.reason);
  struct Shape {
    int ml, nl, ms, ns, u;
  };
  // Large tiles first: they reuse the most data per load; small ones keep thin problems busy.
  const Shape shapes[] = {{128, 128, 8, 8, 8}, {128, 64, 8, 4, 8}, {64, 64, 4, 4, 8},  {64, 32, 4, 2, 16},
                          {32, 32, 2, 2, 16},  {64, 16, 4, 1, 16}, {16, 64, 1, 4, 16}, {32, 32, 1, 1, 8},
                          {16, 16, 2, 2, 8}};  // the last passes the size filter below for any M and N
  int elem = static_cast<int>(ir::size_of(g.dtype));
  for (const Shape& s : shapes) {
    if (s.ml > 2 * g.m && s.ml > 16) continue;
    if (s.nl > 2 * g.n && s.nl > 16) continue;
    for (int v = 16 / elem; v >= 1; v /= 2) {
      lower::GemmParams p;
      p.ml = s.ml, p.nl = s.nl, p.ms = s.ms, p.ns = s.ns, p.u = s.u, p.va = v, p.vb = v;
      // Split K across blocks until the grid covers the SMs twice, while each split keeps 8 tiles.
      std::int64_t tiles = ((g.m + p.ml - 1) / p.ml) * ((g.n + p.nl - 1) / p.nl) * g.batch;
      std::int64_t k_tiles = (g.k + p.u - 1) / p.u;
      while (tiles * p.kg < 2 * device.sm_count && k_tiles / (2 * p.kg) >= 8) p.kg *= 2;
      for (; p.va >= 1; p.va /= 2) {
        for (p.vb = v; p.vb >= 1; p.vb /= 2) {
          fit_load_layouts(g, p);
          if (lower::check_gemm(g, p, device)) return p;
        }
      }
    }
  }
  throw InvalidArgument("no legal GEMM parameters for " + ir::to_string(g) +
                        " among the heuristic's tiles: search the whole space (isaac-tune search)");
}

}  // namespace isaac::tune
