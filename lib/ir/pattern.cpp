#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>

#include "monomial.hpp"
#include "pattern_parts.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace isaac::ir {

namespace {

Product product_of(const Contraction& c) {
  if (c.reduction.empty())
    throw NotThisPattern{"there is no sum: the statement is element-wise, with nothing to contract"};
  const auto m = monomial(c.body);
  if (!m)
    throw NotThisPattern{fmt::format("the sum's body {} is not a product of tensors (GEMM and CONV multiply two)",
                                     to_string(c.body))};
  if (m->factors.size() != 2)
    throw NotThisPattern{fmt::format("the sum's body {} is a product of {} tensor(s); GEMM and CONV multiply two",
                                     to_string(c.body), m->factors.size())};
  return Product{&m->factors[0]->access, &m->factors[1]->access, m->scale, index_extents(c)};
}

// out = alpha * sum + beta * out, or nullopt.
std::optional<LinearEpilogue> linear_epilogue(const Contraction& c, const Expr& body_scale) {
  std::vector<std::pair<bool, Expr>> alpha, beta;
  for (const SignedTerm& term : additive_terms(c.epilogue)) {
    const auto m = monomial(*term.term);
    if (!m || m->factors.size() != 1) return std::nullopt;
    const Expr& factor = *m->factors[0];
    if (factor.op == Op::reduction) alpha.emplace_back(term.negative, m->scale);
    else if (factor.op == Op::access && factor.access == c.output) beta.emplace_back(term.negative, m->scale);
    else return std::nullopt;
  }
  return LinearEpilogue{times(signed_sum(alpha), body_scale), signed_sum(beta)};
}

bool has_affine_coordinate(const Access& a) {
  return std::any_of(a.coordinates.begin(), a.coordinates.end(),
                     [](const Affine& coordinate) { return !is_plain_index(coordinate); });
}

}  // namespace

std::string_view name(PatternKind kind) {
  switch (kind) {
    case PatternKind::gemm: return "gemm";
    case PatternKind::conv: return "conv";
    case PatternKind::neither: return "neither";
  }
  return "?";
}

Pattern analyze(const Contraction& c) {
  verify_bound(c);
  Pattern pattern;
  try {
    const Product product = product_of(c);
    if (has_affine_coordinate(*product.x) || has_affine_coordinate(*product.y))
      recognise_conv(c, product, pattern);
    else
      recognise_gemm(c, product, pattern);
    pattern.linear_epilogue = linear_epilogue(c, product.scale);
  } catch (const NotThisPattern& no) {
    pattern = Pattern{};
    pattern.reason = no.reason;
  }
  return pattern;
}

}  // namespace isaac::ir
