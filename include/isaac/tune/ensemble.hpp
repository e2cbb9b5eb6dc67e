#pragma once
// Ensembles: several networks of one architecture trained on the same data with other seeds, held
// as one network whose prediction is their mean. The mean predicts new data better than any one
// member (docs/tuning-history.md, round 17), at the members' cost added up. The first layers sit side by
// side, each later layer is block-diagonal (a member only sees its own units), and the output layer
// averages the members. So a merged ensemble is an ordinary Mlp: predict() and the model file need
// nothing new, and the searches rank with one member first, then the whole ensemble on the best
// (search.hpp).
#include <isaac/tune/mlp.hpp>

#include <vector>

namespace isaac::tune {

// One network of the members side by side. They must have one architecture with hidden layers and
// one normalisation (the same training data), else InvalidArgument says which differs.
Mlp merge_ensemble(const std::vector<Mlp>& members);

// Throws InvalidArgument unless `merged` is `members` networks side by side as merge_ensemble makes
// them: hidden sizes divisible by `members`, and no weight between two members' units.
void check_ensemble(const Mlp& merged, int members);

// The first member of a merged ensemble: it ranks as that member does, while its predictions are
// shifted by a constant (the output bias of a merged ensemble is the members' mean).
Mlp first_member(const Mlp& merged, int members);

}  // namespace isaac::tune
