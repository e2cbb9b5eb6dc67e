#pragma once
// Every failure isaac reports is an isaac::Error (or a subclass) whose message says what was wrong
// and what is allowed.
#include <stdexcept>
#include <string>

namespace isaac {

struct Error : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// A CUDA driver call failed, or no driver could be loaded at all.
struct DriverError : Error {
  using Error::Error;
};

// The input was rejected: a shape mismatch, an unsupported dtype, illegal parameters, a bad file.
struct InvalidArgument : Error {
  using Error::Error;
};

}  // namespace isaac
