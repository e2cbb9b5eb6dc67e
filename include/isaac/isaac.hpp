#pragma once
// The public API of isaac in one include.
#include <isaac/dsl/dsl.hpp>
#include <isaac/error.hpp>
#include <isaac/ir/contraction.hpp>
#include <isaac/ir/conv.hpp>
#include <isaac/ir/dtype.hpp>
#include <isaac/ir/evaluate.hpp>
#include <isaac/ir/expr.hpp>
#include <isaac/ir/features.hpp>
#include <isaac/ir/functions.hpp>
#include <isaac/ir/gemm.hpp>
#include <isaac/ir/pattern.hpp>
#include <isaac/ir/text.hpp>
#include <isaac/ir/verify.hpp>
#include <isaac/program.hpp>
#include <isaac/version.hpp>
