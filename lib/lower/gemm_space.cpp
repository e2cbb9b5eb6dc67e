#include <isaac/lower/gemm.hpp>

#include <algorithm>

namespace isaac::lower {

std::vector<GemmParams> gemm_space(const ir::Gemm& problem, const DeviceLimits& device) {
  // The load layouts are not searched: each operand takes the widest legal arrangement along its
  // contiguous axis, which is what coalescing wants.
  auto widest = [](int contiguous, int vector, int threads) {
    int along = std::min(threads, std::max(1, contiguous / vector));
    while (along > 1 && (threads % along || contiguous % (along * vector))) along /= 2;
    return along;
  };
  std::vector<GemmParams> out;
  GemmParams p;
  p.acc32 = 1;
  for (int ml : {16, 32, 64, 128, 256})
    for (int nl : {16, 32, 64, 128, 256})
      for (int ms : {1, 2, 4, 8, 16})
        for (int ns : {1, 2, 4, 8, 16})
          for (int kl : {1, 2, 4, 8}) {
            p.ml = ml, p.nl = nl, p.ms = ms, p.ns = ns, p.kl = kl;
            int threads = p.threads();
            if (threads % 32 || threads > device.max_threads_per_block) continue;
            for (int u : {4, 8, 16, 32})
              for (int ks : {1, 2})
                for (int va : {1, 2, 4, 8})
                  for (int vb : {1, 2, 4, 8})
                    for (int db : {0, 1}) {
                      p.u = u, p.ks = ks, p.va = va, p.vb = vb, p.db = db;
                      p.la = widest(problem.a_trans ? p.u : p.ml, p.va, threads);
                      p.lb = widest(problem.b_trans ? p.nl : p.u, p.vb, threads);
                      p.kg = 1, p.sw = 1;
                      if (!check_gemm(problem, p, device)) continue;
                      for (int kg : {1, 2, 4, 8, 16, 32, 64, 128, 256})
                        for (int sw : {1, 8}) {
                          p.kg = kg, p.sw = sw;
                          if (check_gemm(problem, p, device)) out.push_back(p);
                        }
                    }
          }
  return out;
}

}  // namespace isaac::lower
