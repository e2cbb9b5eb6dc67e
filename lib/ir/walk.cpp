#include "walk.hpp"

#include <algorithm>

namespace isaac::ir {

namespace {

void append_new(std::vector<std::string>& names, const std::string& name) {
  if (!contains(names, name)) names.push_back(name);
}

}  // namespace

bool contains(const std::vector<std::string>& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<const Access*> accesses_of(const Expr& e) {
  std::vector<const Access*> accesses;
  for_each_node(e, [&](const Expr& n) {
    if (n.op == Op::access) accesses.push_back(&n.access);
  });
  return accesses;
}

std::vector<const Access*> accesses_of(const Contraction& c) {
  std::vector<const Access*> all{&c.output};
  if (!c.reduction.empty())
    for (const Access* a : accesses_of(c.body)) all.push_back(a);
  for (const Access* a : accesses_of(c.epilogue)) all.push_back(a);
  return all;
}

std::vector<std::string> indices_of(const Access& a) {
  std::vector<std::string> names;
  for (const Affine& coordinate : a.coordinates)
    for (const AffineTerm& t : coordinate.terms) append_new(names, t.index);
  return names;
}

std::vector<std::string> indices_of(const Expr& e) {
  std::vector<std::string> names;
  for (const Access* a : accesses_of(e))
    for (const std::string& index : indices_of(*a)) append_new(names, index);
  return names;
}

std::vector<std::string> output_indices(const Contraction& c) { return indices_of(c.output); }

}  // namespace isaac::ir
