// Errors used across layers. Inside the project failures are exceptions carrying a message a person
// can act on; the C ABI surfaces (shims) catch them and never let one cross into the application.
#pragma once
#include <stdexcept>
#include <string>

namespace outboard {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The peer sent bytes that do not form a valid message: the connection that sent them is closed.
class ProtocolError : public Error {
 public:
  using Error::Error;
};

// errno as text, for error messages about system calls.
std::string errno_text(int err);

}  // namespace outboard
