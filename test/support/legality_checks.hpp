#pragma once
// Checks on a lower::Legality (macros, so that failures name the caller's line).
#include <doctest/doctest.h>
#include <isaac/lower/gemm.hpp>

#include <string>

// A rejection whose reason contains `expected`.
#define CHECK_REJECTED(legality, expected) \
  do { \
    const ::isaac::lower::Legality r_ = (legality); \
    const std::string e_ = (expected); \
    INFO("reason: ", r_.reason); \
    CHECK_FALSE(r_.legal); \
    CHECK_FALSE(static_cast<bool>(r_)); \
    CHECK_MESSAGE(r_.reason.find(e_) != std::string::npos, "expected the reason to contain: ", e_); \
  } while (0)

#define CHECK_LEGAL(legality) \
  do { \
    const ::isaac::lower::Legality r_ = (legality); \
    INFO("reason: ", r_.reason); \
    CHECK(r_.legal); \
    CHECK(r_.reason.empty()); \
  } while (0)

