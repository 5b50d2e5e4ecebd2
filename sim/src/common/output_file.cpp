// Atomic output files and checked standard output.
#include "partsim/common/output_file.hpp"

#include "partsim/common/text.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <system_error>

namespace partsim {

namespace {
std::string reason_of(int error) {
  return error != 0 ? std::generic_category().message(error) : std::string("write failed");
}
} // namespace

OutputError::OutputError(const std::filesystem::path& path, const std::string& reason)
    : std::runtime_error(printable(fmt::format("cannot write {}: {}", path.string(), reason))) {}

void create_output_dir(const std::filesystem::path& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) throw OutputError(dir, ec.message());
  if (!std::filesystem::is_directory(dir, ec)) throw OutputError(dir, "not a directory");
}

void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer) {
  std::filesystem::path temporary = path;
  temporary += fmt::format(".tmp-{}", static_cast<long>(::getpid()));
  auto fail = [&](int error) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);
    throw OutputError(path, reason_of(error));
  };
  errno = 0;
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    if (!out) fail(errno);
    writer(out);
    out.flush();
    if (!out) fail(errno != 0 ? errno : ENOSPC);
    out.close();
    if (out.fail()) fail(errno != 0 ? errno : ENOSPC);
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) {
    std::filesystem::remove(temporary, ec);
    throw OutputError(path, ec.message());
  }
}

void write_file_atomically(const std::filesystem::path& path, std::string_view content) {
  write_file_atomically(
      path, [&](std::ostream& out) { out.write(content.data(), static_cast<std::streamsize>(content.size())); });
}

void write_stdout(std::string_view text) {
  errno = 0;
  std::cout.write(text.data(), static_cast<std::streamsize>(text.size()));
  std::cout.flush();
  if (!std::cout) {
    const int error = errno;
    std::cout.clear();
    throw OutputError("standard output", reason_of(error != 0 ? error : EIO));
  }
}

} // namespace partsim
