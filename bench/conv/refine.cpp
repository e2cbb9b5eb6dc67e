#include "refine.hpp"

#include <set>
#include <string>

namespace isaac::bench {

std::vector<lower::ConvParams> conv_neighbours(const ir::Conv& v, const lower::ConvParams& p,
                                               const lower::DeviceLimits& limits) {
  using P = lower::ConvParams;
  std::vector<P> out;
  std::set<std::string> seen{p.str()};
  auto keep = [&](P q) {
    lower::fit_conv_load_layouts(v, q);
    if (q.wg ? !lower::conv_legal(v, q, {}, limits) : lower::outside_conv_space(v, q, {}, limits).has_value()) return;
    if (seen.insert(q.str()).second) out.push_back(q);
  };
  auto scaled = [](int x, int step) { return step > 0 ? x * 2 : x / 2; };
  for (int P::*f : {&P::pl, &P::kl, &P::ps, &P::ks, &P::u, &P::cs, &P::cl, &P::cg, &P::vi, &P::vf})
    for (int step : {-1, +1}) {
      P q = p;
      q.*f = scaled(p.*f, step);
      if (q.*f >= 1) keep(q);
    }
  P flipped = p;
  flipped.db = 1 - p.db;
  keep(flipped);
  for (int tc : {0, 1, 2}) {  // the other kinds of kernel, where the space has them
    P q = p;
    q.tc = tc;
    if (tc != p.tc) keep(q);
  }
  // Two at once: block and thread tile together (threads unchanged), and the tiles' shapes.
  auto two = [&](int P::*f1, int s1, int P::*f2, int s2) {
    P q = p;
    q.*f1 = scaled(p.*f1, s1);
    q.*f2 = scaled(p.*f2, s2);
    if (q.*f1 >= 1 && q.*f2 >= 1) keep(q);
  };
  for (int s : {+1, -1}) {
    two(&P::pl, s, &P::ps, s);
    two(&P::kl, s, &P::ks, s);
    two(&P::pl, s, &P::kl, -s);
    two(&P::ps, s, &P::ks, -s);
  }
  return out;
}

}  // namespace isaac::bench
