#pragma once
// The checks the DSL's types cannot make. Each throws InvalidArgument whose message names the
// tensor, the index and the values at fault.
#include <isaac/ir/contraction.hpp>

namespace isaac::ir {

// Structure (always): output coordinates are distinct plain indices, each bound on the right; no
// reduction index in the output; every index on the right is an output index or summed; every summed
// index is used by the body; tensors are declared once with the rank of every access; the output is
// read only by the epilogue and only at the point written; scalars and functions are well named.
// Shapes (for the tensors already bound): positive extents, memory spans (and known addresses)
// within 64 bits, one extent per index, an output whose strides do not make two elements share
// memory, and (where addresses are known) an output whose memory does not overlap an input's.
void verify(const Contraction& c);

// verify(), and every tensor bound: what pattern analysis and the evaluator need.
void verify_bound(const Contraction& c);

}  // namespace isaac::ir
