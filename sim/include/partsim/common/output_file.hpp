// Outputs written whole or not at all: a temporary file in the same folder, every write and the close checked, then
// renamed into place. OutputError for what the environment refuses.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <string_view>

namespace partsim {

/** The environment refused an output: a full or read-only file system, a folder that is a file, a name too long.
 * One line naming the path and the reason; exit code kExitOutputError at the CLI. */
class OutputError : public std::runtime_error {
 public:
  OutputError(const std::filesystem::path& path, const std::string& reason);
};

/** Creates `dir` and its parents. @throws OutputError */
void create_output_dir(const std::filesystem::path& dir);

/** Writes `path` atomically: `writer` fills `path`.tmp-PID in the same folder; when every write, the flush and the
 * close succeeded it is renamed to `path`, else removed. A file under its final name is always whole.
 * @throws OutputError */
void write_file_atomically(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);

/** The same with the whole content at hand. */
void write_file_atomically(const std::filesystem::path& path, std::string_view content);

/** Writes `text` to standard output and flushes it. @throws OutputError when the write fails (a closed pipe,
 * /dev/full): what partsim says it printed was printed. */
void write_stdout(std::string_view text);

} // namespace partsim
