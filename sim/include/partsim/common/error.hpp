// Errors: InputError for the user's mistakes (caught at the CLI/GUI edge, exit code 2) and
// PARTSIM_CHECK for broken internal invariants (abort with file:line).
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace partsim {

/** A mistake in the user's input: a scenario, a profile, a command-line value.
 *
 * The message is one line: `SOURCE: POINTER: what was expected, and what was found`. SOURCE is a file
 * path (or `--set`, `<built-in default>`), POINTER a JSON pointer into that source (may be empty). */
class InputError : public std::runtime_error {
 public:
  InputError(std::string source, std::string pointer, const std::string& message);

  const std::string& source() const { return source_; }
  const std::string& pointer() const { return pointer_; }
  /** The message without source and pointer. */
  const std::string& detail() const { return detail_; }

 private:
  struct Escaped {
    std::string source, pointer, detail;
  };
  explicit InputError(Escaped parts);

  std::string source_;
  std::string pointer_;
  std::string detail_;
};

namespace detail {
/** Collects the message of a failed PARTSIM_CHECK and aborts when destroyed. */
class CheckFailure {
 public:
  CheckFailure(const char* file, int line, const char* condition);
  [[noreturn]] ~CheckFailure();
  CheckFailure(const CheckFailure&) = delete;
  CheckFailure& operator=(const CheckFailure&) = delete;
  template <typename T>
  CheckFailure& operator<<(const T& value) {
    stream_ << value;
    return *this;
  }

 private:
  std::ostringstream stream_;
};
} // namespace detail

} // namespace partsim

/** Internal invariant: `PARTSIM_CHECK(n > 0) << "rank count " << n;` aborts with file:line when false. */
#define PARTSIM_CHECK(condition)                                                                                       \
  if (condition) {                                                                                                     \
  } else                                                                                                               \
    ::partsim::detail::CheckFailure(__FILE__, __LINE__, #condition)
