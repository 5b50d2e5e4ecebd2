// partsim-calibrate end to end: the one-line refusal without a GPU (or without CUDA), refit of raw samples into a
// profile partsim loads, and import-kineto on the fixture trace; bad input exits 2 with one line.
#include "partsim/calibrate/calibration.hpp"
#include "partsim/calibrate/samples_csv.hpp"
#include "partsim/input/hardware.hpp"

#include "synthetic_backend.hpp"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace partsim::calibrate {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string output; ///< stdout and stderr
};

CliRun run_cli(const std::string& args) {
  const std::string command = std::string(PARTSIM_CALIBRATE_CLI) + " " + args + " 2>&1";
  CliRun r;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  while (fgets(buffer.data(), buffer.size(), pipe) != nullptr) r.output += buffer.data();
  const int status = pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

fs::path scratch() {
  const fs::path dir = fs::temp_directory_path() / (std::string("partsim-calibrate-cli-") +
                                                    ::testing::UnitTest::GetInstance()->current_test_info()->name());
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

TEST(CalibrateCli, WithoutAGpuSaysSoInOneLineAndExitsNonZero) {
  const CliRun r = run_cli("--check");
  if (r.code == 0) GTEST_SKIP() << "a GPU is present: " << r.output;
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  const bool no_gpu = r.output.rfind("partsim-calibrate: no NVIDIA GPU/driver: cudaGetDeviceCount", 0) == 0;
  const bool no_cuda = r.output.rfind("partsim-calibrate: built without CUDA", 0) == 0;
  EXPECT_TRUE(no_gpu || no_cuda) << r.output;
}

TEST(CalibrateCli, MeasuringWithoutAGpuWritesNothing) {
  if (run_cli("--check").code == 0) GTEST_SKIP() << "a GPU is present";
  const fs::path dir = scratch();
  const CliRun r = run_cli("--quick --out " + (dir / "h200-measured.json").string());
  EXPECT_EQ(r.code, 1) << r.output;
  EXPECT_EQ(lines(r.output), 1u) << r.output;
  EXPECT_TRUE(fs::is_empty(dir));
  fs::remove_all(dir);
}

TEST(CalibrateCli, RefitWritesAProfilePartsimLoads) {
  const fs::path dir = scratch();
  testing::SyntheticBackend backend;
  CalibrationResult measured = run_calibration(backend, quick_plan());
  measured.device.date = "2026-12-01T10:00:00Z";
  measured.device.tool = "partsim-calibrate 0.1.0 (synthetic)";
  const fs::path csv = dir / "h200.samples.csv";
  write_samples_csv(csv, measured.device, measured.samples);
  const fs::path profile = dir / "models" / "hardware" / "h200-measured.json";
  const CliRun r = run_cli("refit " + csv.string() + " --out " + profile.string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("best GEMM bf16"), std::string::npos) << r.output;
  const GpuProfile gpu = load_gpu_profile(dir, "h200-measured", "test", "");
  EXPECT_NEAR(gpu.memory_bandwidth.value, 4.2e12, 0.03 * 4.2e12);
  EXPECT_EQ(gpu.memory_bandwidth.provenance.fields.at("date"), "2026-12-01T10:00:00Z");
  EXPECT_NE(gpu.memory_bandwidth.provenance.fields.at("tool").find("refit of h200.samples.csv"), std::string::npos);
  EXPECT_EQ(gpu.gemm_efficiency.grids.size(), 5u);
  EXPECT_TRUE(fs::exists(dir / "models" / "hardware" / "h200-measured.calibration.json"));
  EXPECT_TRUE(fs::exists(dir / "models" / "hardware" / "h200-measured-p2p.json")); // two synthetic GPUs
  fs::remove_all(dir);
}

TEST(CalibrateCli, ImportKinetoPrintsTheOpTableAndWritesReportAndProfile) {
  const fs::path dir = scratch();
  const std::string fixture = std::string(PARTSIM_CALIBRATE_FIXTURES) + "/kineto-gpt2-small-b2.json";
  const CliRun r = run_cli("import-kineto " + fixture + " --workload gpt2-small --report " +
                           (dir / "report.json").string() + " --out " + (dir / "h100-traced.json").string());
  ASSERT_EQ(r.code, 0) << r.output;
  EXPECT_NE(r.output.find("at micro-batch 2"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("qkv_projection"), std::string::npos) << r.output;
  const nlohmann::json report = nlohmann::json::parse(std::ifstream(dir / "report.json"));
  EXPECT_EQ(report["ops"].size(), 9u);
  const nlohmann::json profile = nlohmann::json::parse(std::ifstream(dir / "h100-traced.json"));
  EXPECT_EQ(profile["name"], "h100-traced");
  fs::remove_all(dir);
}

TEST(CalibrateCli, BadInputExitsTwoWithOneLine) {
  const std::string fixture = std::string(PARTSIM_CALIBRATE_FIXTURES) + "/kineto-gpt2-small-b2.json";
  for (const std::string& args : std::vector<std::string>{"import-kineto /nonexistent/trace.json --workload gpt2-small",
                                                          "import-kineto " + fixture + " --workload no-such-model",
                                                          "import-kineto " + fixture + " --workload resnet50",
                                                          "refit /nonexistent/samples.csv"}) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.code, 2) << args << ": " << r.output;
    EXPECT_EQ(lines(r.output), 1u) << args << ": " << r.output;
    EXPECT_EQ(r.output.rfind("partsim-calibrate: ", 0), 0u) << r.output;
  }
}

TEST(CalibrateCli, SamplesThatCannotBeFittedAreAnInputError) {
  // "nothing was measured" and "a fit needs two sizes" come from the user's samples: exit 2 and one line, not exit 1.
  const fs::path dir = scratch();
  testing::SyntheticBackend backend;
  CalibrationResult measured = run_calibration(backend, quick_plan());
  const fs::path empty = dir / "empty.samples.csv";
  write_samples_csv(empty, measured.device, {});
  std::vector<Sample> one_size; // device copies of one size: no bandwidth can be fitted
  std::int64_t size = -1;
  for (const Sample& s : measured.samples)
    if (s.kind == SampleKind::DeviceCopy && (size < 0 || s.bytes == size)) {
      size = s.bytes;
      one_size.push_back(s);
    }
  ASSERT_FALSE(one_size.empty());
  const fs::path single = dir / "one-size.samples.csv";
  write_samples_csv(single, measured.device, one_size);
  for (const fs::path& csv : {empty, single}) {
    const CliRun r = run_cli("refit " + csv.string() + " --out " + (dir / "out.json").string());
    EXPECT_EQ(r.code, 2) << csv << ": " << r.output;
    EXPECT_EQ(lines(r.output), 1u) << r.output;
    EXPECT_EQ(r.output.rfind("partsim-calibrate: error: ", 0), 0u) << r.output;
    EXPECT_FALSE(fs::exists(dir / "out.json"));
  }
  fs::remove_all(dir);
}

} // namespace
} // namespace partsim::calibrate
