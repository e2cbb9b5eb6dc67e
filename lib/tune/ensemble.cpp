#include <isaac/error.hpp>
#include <isaac/tune/ensemble.hpp>

#include <fmt/format.h>

namespace isaac::tune {

namespace {

// The block of member m in layer l of a merged network: its rows, and its columns (all inputs for
// the first layer).
struct Block {
  int row0, rows, col0, cols;
};

Block block_of(const Layer& merged, size_t l, int members, int m) {
  const int rows = merged.outputs == 1 ? 1 : merged.outputs / members;
  const int cols = l == 0 ? merged.inputs : merged.inputs / members;
  return {merged.outputs == 1 ? 0 : m * rows, rows, l == 0 ? 0 : m * cols, cols};
}

}  // namespace

Mlp merge_ensemble(const std::vector<Mlp>& members) {
  if (members.empty()) throw InvalidArgument("an ensemble needs at least one member");
  const Mlp& first = members.front();
  first.validate();
  if (members.size() == 1) return first;
  if (first.layers().size() < 2) throw InvalidArgument("an ensemble needs networks with hidden layers");
  for (size_t m = 1; m < members.size(); ++m) {
    if (members[m].sizes() != first.sizes())
      throw InvalidArgument(fmt::format("ensemble member {} has layer sizes {}, member 0 {}", m,
                                        hidden_to_string(members[m].sizes()), hidden_to_string(first.sizes())));
    if (members[m].feature_mean != first.feature_mean || members[m].feature_scale != first.feature_scale ||
        members[m].target_mean != first.target_mean || members[m].target_scale != first.target_scale)
      throw InvalidArgument(fmt::format("ensemble member {} has another normalisation than member 0: train them on "
                                        "the same data",
                                        m));
  }
  const int n = int(members.size());
  std::vector<int> hidden;
  for (size_t l = 0; l + 1 < first.layers().size(); ++l) hidden.push_back(first.layers()[l].outputs * n);
  Mlp merged(first.inputs(), hidden);
  merged.feature_mean = first.feature_mean, merged.feature_scale = first.feature_scale;
  merged.target_mean = first.target_mean, merged.target_scale = first.target_scale;
  for (size_t l = 0; l < merged.layers().size(); ++l) {
    Layer& out = merged.layers()[l];
    std::fill(out.weights.begin(), out.weights.end(), 0.0);
    std::fill(out.bias.begin(), out.bias.end(), 0.0);
    const bool last = l + 1 == merged.layers().size();
    for (int m = 0; m < n; ++m) {
      const Layer& in = members[size_t(m)].layers()[l];
      const Block b = block_of(out, l, n, m);
      for (int r = 0; r < b.rows; ++r) {
        for (int c = 0; c < b.cols; ++c)
          out.weights[size_t(b.row0 + r) * out.inputs + size_t(b.col0 + c)] =
              in.weights[size_t(r) * in.inputs + size_t(c)] / (last ? n : 1);
        out.bias[size_t(b.row0 + r)] += in.bias[size_t(r)] / (last ? n : 1);
      }
    }
  }
  return merged;
}

void check_ensemble(const Mlp& merged, int members) {
  if (members < 1) throw InvalidArgument(fmt::format("an ensemble of {} networks: it needs at least one", members));
  if (members == 1) return;
  const auto& layers = merged.layers();
  if (layers.size() < 2) throw InvalidArgument(fmt::format("an ensemble of {} networks needs hidden layers", members));
  for (size_t l = 0; l + 1 < layers.size(); ++l)
    if (layers[l].outputs % members != 0)
      throw InvalidArgument(fmt::format("hidden layer {} has {} units, not a multiple of the ensemble's {} members", l,
                                        layers[l].outputs, members));
  for (size_t l = 1; l + 1 < layers.size(); ++l)
    for (int m = 0; m < members; ++m) {
      const Block b = block_of(layers[l], l, members, m);
      for (int r = b.row0; r < b.row0 + b.rows; ++r)
        for (int c = 0; c < layers[l].inputs; ++c)
          if ((c < b.col0 || c >= b.col0 + b.cols) && layers[l].weights[size_t(r) * layers[l].inputs + size_t(c)] != 0)
            throw InvalidArgument(fmt::format("layer {} joins units of two ensemble members (row {}, column {}): not an "
                                              "ensemble of {}",
                                              l, r, c, members));
    }
}

Mlp first_member(const Mlp& merged, int members) {
  check_ensemble(merged, members);
  if (members == 1) return merged;
  std::vector<int> hidden;
  for (size_t l = 0; l + 1 < merged.layers().size(); ++l) hidden.push_back(merged.layers()[l].outputs / members);
  Mlp member(merged.inputs(), hidden);
  member.feature_mean = merged.feature_mean, member.feature_scale = merged.feature_scale;
  member.target_mean = merged.target_mean, member.target_scale = merged.target_scale;
  for (size_t l = 0; l < member.layers().size(); ++l) {
    const Layer& in = merged.layers()[l];
    Layer& out = member.layers()[l];
    const bool last = l + 1 == member.layers().size();
    const Block b = block_of(in, l, members, 0);
    for (int r = 0; r < b.rows; ++r) {
      for (int c = 0; c < b.cols; ++c)
        out.weights[size_t(r) * out.inputs + size_t(c)] =
            in.weights[size_t(b.row0 + r) * in.inputs + size_t(b.col0 + c)] * (last ? members : 1);
      out.bias[size_t(r)] = in.bias[size_t(b.row0 + r)];
    }
  }
  return member;
}

}  // namespace isaac::tune
