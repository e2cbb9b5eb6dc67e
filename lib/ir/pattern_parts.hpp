#pragma once
// The pieces of pattern analysis (private to lib/ir): each recogniser either fills a Pattern or
// throws NotThisPattern saying why not.
#include <isaac/ir/pattern.hpp>

#include <map>
#include <string>

namespace isaac::ir {

struct NotThisPattern {
  std::string reason;
};

// What both recognisers start from: the two tensor factors of the sum's body.
struct Product {
  const Access* x;  // first factor as written
  const Access* y;
  Expr scale;       // the body's scalar factors
  std::map<std::string, std::int64_t, std::less<>> extents;
};

// Fill kind, gemm or conv, and a, b, c.
void recognise_gemm(const Contraction& c, const Product& product, Pattern& pattern);
void recognise_conv(const Contraction& c, const Product& product, Pattern& pattern);

}  // namespace isaac::ir
