#pragma once
// Walks over the accesses and indices of a contraction, shared by the verifier, the printer, pattern
// analysis and the evaluator (private to lib/ir).
#include <isaac/ir/contraction.hpp>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace isaac::ir {

// The output access, then the body's accesses (when there is a sum), then the epilogue's, each in
// the order they are written; the pointers point into `c`.
std::vector<const Access*> accesses_of(const Contraction& c);
std::vector<const Access*> accesses_of(const Expr& e);
// Indices in order of first appearance, without repetition.
std::vector<std::string> indices_of(const Access& a);
std::vector<std::string> indices_of(const Expr& e);
std::vector<std::string> output_indices(const Contraction& c);
bool contains(const std::vector<std::string>& names, std::string_view name);

struct ExtentSource {
  std::int64_t extent;
  std::string tensor;  // the first bound tensor indexing it plainly
  int dimension;
};
// The extents that the bound tensors fix, per index; throws InvalidArgument on a conflict.
std::map<std::string, ExtentSource, std::less<>> known_extents(const Contraction& c);

}  // namespace isaac::ir
