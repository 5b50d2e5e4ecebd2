// InputError formatting and the abort path of PARTSIM_CHECK.
#include "partsim/common/error.hpp"

#include "partsim/common/text.hpp"

#include <cstdlib>
#include <iostream>

namespace partsim {

namespace {
std::string compose(const std::string& source, const std::string& pointer, const std::string& message) {
  // The parts are escaped when stored: the message is always one printable line, whatever the user wrote.
  std::string text = source;
  if (!pointer.empty()) text += (text.empty() ? "" : ": ") + pointer;
  if (!text.empty()) text += ": ";
  return text + message;
}
} // namespace

InputError::InputError(std::string source, std::string pointer, const std::string& message)
    : InputError(Escaped{printable(source), printable(pointer), printable(message)}) {}

InputError::InputError(Escaped parts)
    : std::runtime_error(compose(parts.source, parts.pointer, parts.detail)), source_(std::move(parts.source)),
      pointer_(std::move(parts.pointer)), detail_(std::move(parts.detail)) {}

namespace detail {
CheckFailure::CheckFailure(const char* file, int line, const char* condition) {
  stream_ << file << ':' << line << ": internal check failed: " << condition << ": ";
}

CheckFailure::~CheckFailure() {
  std::cerr << "partsim: " << stream_.str() << " (this is a bug in partsim, please report it)" << std::endl;
  std::abort();
}
} // namespace detail

} // namespace partsim
