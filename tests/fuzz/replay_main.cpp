// Runs the fuzz target on files and folders given on the command line (the regression inputs, the shipped
// scenarios), without libFuzzer: any build can replay what the fuzzer once found. `--skip NAME` leaves out files of
// that name (a scenario whose plan is too large to build under the sanitizers).
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> files;
  std::vector<std::string> skip;
  for (int i = 1; i < argc; ++i)
    if (std::string(argv[i]) == "--skip" && i + 1 < argc) skip.emplace_back(argv[++i]);
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--skip") {
      ++i;
      continue;
    }
    const std::filesystem::path arg = argv[i];
    if (std::filesystem::is_directory(arg)) {
      for (const auto& entry : std::filesystem::directory_iterator(arg))
        if (entry.is_regular_file()) files.push_back(entry.path());
    } else {
      files.push_back(arg);
    }
  }
  std::erase_if(files, [&](const std::filesystem::path& file) {
    return std::find(skip.begin(), skip.end(), file.filename().string()) != skip.end();
  });
  for (const auto& file : files) {
    std::ifstream in(file, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs: no crash\n", files.size());
  return files.empty() ? 1 : 0;
}
