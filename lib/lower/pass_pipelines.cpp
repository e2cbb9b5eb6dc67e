#include "lower/pass_pipelines.hpp"

namespace isaac::lower {

namespace {

// default<O1> for nvptx64 with the passes left out that, removed one at a time in pipeline order,
// left the PTX of every kernel of a sample byte for byte the same (docs/emission.md, "Passes that
// change nothing"). The module holds one to four kernels and no calls, so the inliner's call-graph
// walk reduces to its function passes, written here as plain function passes. The options are those
// default<O1> gives each pass; LLVM 19's own defaults differ (a bare instcombine verifies its
// fixpoint and stops the process when it has none).
const std::string instcombine = "instcombine<max-iterations=1;no-use-loop-info;no-verify-fixpoint>";
const std::string simplifycfg_early =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;no-switch-range-to-icmp;no-switch-to-lookup;"
    "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>";
const std::string simplifycfg =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;"
    "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "no-speculate-unpredictables>";
const std::string simplifycfg_late =
    "simplifycfg<bonus-inst-threshold=1;forward-switch-cond;switch-range-to-icmp;switch-to-lookup;no-keep-loops;"
    "hoist-common-insts;sink-common-insts;speculate-blocks;simplify-cond-branch;no-speculate-unpredictables>";
const std::string simplifycfg_last =
    "simplifycfg<bonus-inst-threshold=1;no-forward-switch-cond;switch-range-to-icmp;no-switch-to-lookup;"
    "keep-loops;no-hoist-common-insts;no-sink-common-insts;speculate-blocks;simplify-cond-branch;"
    "speculate-unpredictables>";

// 25 of default<O1>'s 92 passes.
const std::string light_pipeline =
    "function(nvvm-intr-range," + simplifycfg_early + ",sroa<modify-cfg>,early-cse),ipsccp,function(" +
    instcombine + ",early-cse<memssa>," + instcombine + "," + simplifycfg +
    ",reassociate,loop-mssa(licm<no-allowspeculation>,loop-rotate<header-duplication;no-prepare-for-lto>,"
    "licm<allowspeculation>)," +
    simplifycfg + "," + instcombine + ",loop(indvars)),cgscc(function-attrs),function(" + simplifycfg_late +
    ",vector-combine,loop-unroll<O1>,infer-alignment," + instcombine + ",div-rem-pairs," + simplifycfg_last + ")";

// Pruned the same way, O3 lost passes that a larger sample of CONV kernels needed (docs/emission.md).
const std::string full_pipeline = "default<O3>";

}  // namespace

const std::string& pass_pipeline(Optimisation level) {
  return level == Optimisation::full ? full_pipeline : light_pipeline;
}

}  // namespace isaac::lower
