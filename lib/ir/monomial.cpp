#include "monomial.hpp"

namespace isaac::ir {

namespace {

bool is_literal(const Expr& e, double value) { return e.op == Op::constant && e.value == value; }

void collect_terms(const Expr& e, bool negative, std::vector<SignedTerm>& terms) {
  switch (e.op) {
    case Op::add:
      collect_terms(e.operands[0], negative, terms);
      collect_terms(e.operands[1], negative, terms);
      return;
    case Op::sub:
      collect_terms(e.operands[0], negative, terms);
      collect_terms(e.operands[1], !negative, terms);
      return;
    case Op::neg:
      collect_terms(e.operands[0], !negative, terms);
      return;
    default:
      terms.push_back({negative, &e});
  }
}

}  // namespace

Expr times(Expr a, Expr b) {
  if (is_literal(a, 1)) return b;
  if (is_literal(b, 1)) return a;
  if (is_literal(a, -1)) return b.op == Op::constant ? constant(-b.value) : neg(std::move(b));
  return mul(std::move(a), std::move(b));
}

std::optional<Monomial> monomial(const Expr& e) {
  if (is_scalar_expression(e)) return Monomial{e, {}};
  switch (e.op) {
    case Op::access:
    case Op::reduction:
      return Monomial{constant(1), {&e}};
    case Op::neg: {
      auto m = monomial(e.operands[0]);
      if (m) m->scale = times(constant(-1), std::move(m->scale));
      return m;
    }
    case Op::mul: {
      auto left = monomial(e.operands[0]);
      auto right = monomial(e.operands[1]);
      if (!left || !right) return std::nullopt;
      left->scale = times(std::move(left->scale), std::move(right->scale));
      left->factors.insert(left->factors.end(), right->factors.begin(), right->factors.end());
      return left;
    }
    case Op::div: {
      auto m = monomial(e.operands[0]);
      if (!m || !is_scalar_expression(e.operands[1])) return std::nullopt;
      m->scale = div(std::move(m->scale), e.operands[1]);
      return m;
    }
    default:
      return std::nullopt;
  }
}

std::vector<SignedTerm> additive_terms(const Expr& e) {
  std::vector<SignedTerm> terms;
  collect_terms(e, false, terms);
  return terms;
}

Expr signed_sum(const std::vector<std::pair<bool, Expr>>& terms) {
  if (terms.empty()) return constant(0);
  Expr total = terms[0].first ? times(constant(-1), terms[0].second) : terms[0].second;
  for (std::size_t i = 1; i < terms.size(); ++i)
    total = terms[i].first ? sub(std::move(total), terms[i].second) : add(std::move(total), terms[i].second);
  return total;
}

}  // namespace isaac::ir
