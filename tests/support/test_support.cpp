// Test helpers: scenario builders, simulation in one call, CLI runner.
#include "test_support.hpp"

#include "partsim/plan/strategy.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <sys/wait.h>

namespace partsim::test {

std::filesystem::path source_dir() {
  return PARTSIM_SOURCE_DIR;
}

std::vector<std::string> op_names(const std::vector<ComputeOp>& ops) {
  std::vector<std::string> out;
  for (const ComputeOp& op : ops) out.push_back(op.name);
  return out;
}

ComputeOp find_op(const std::vector<ComputeOp>& ops, const std::string& name) {
  for (const ComputeOp& op : ops)
    if (op.name == name) return op;
  throw std::runtime_error("no op " + name);
}

nlohmann::json base_scenario(int nodes, int gpus_per_node) {
  return {{"schema_version", 1},
          {"name", "test"},
          {"description", "test scenario"},
          {"cluster",
           {{"nodes", nodes},
            {"gpus_per_node", gpus_per_node},
            {"gpu",
             {{"name", "test-gpu"},
              {"peak_flops", "100TFLOPs"},
              {"memory_bandwidth", "1TBps"},
              {"memory_capacity", "80GB"}}},
            {"intra_node_link", {{"bandwidth", "300GBps"}, {"latency", "1us"}}},
            {"network", {{"topology", "star"}, {"bandwidth", "25GBps"}, {"latency", "2us"}}}}},
          {"workload", {{"kind", "data_job"}, {"samples", 1000}, {"flop_per_sample", "1GFLOP"}}},
          {"strategy", {{"kind", "data_parallel"}, {"partitions", nodes * gpus_per_node}, {"shares", "balanced"}}},
          {"run", {{"seed", 1}}}};
}

nlohmann::json tiny_transformer(const std::string& name, int sequence_length, const nlohmann::json& extra) {
  nlohmann::json model = {{"schema_version", 1},
                          {"kind", "transformer"},
                          {"name", name},
                          {"description", "a test model"},
                          {"source", "this test"},
                          {"architecture", "decoder"},
                          {"layers", 2},
                          {"hidden_size", 256},
                          {"heads", 4},
                          {"ffn_size", 512},
                          {"vocab_size", 1000},
                          {"sequence_length", sequence_length},
                          {"mlp", "gated"},
                          {"position_embedding", "rotary"},
                          {"norm", "rmsnorm"},
                          {"bias", false},
                          {"tied_embeddings", false}};
  for (const auto& [key, value] : extra.items()) model[key] = value;
  return model;
}

Scenario parse(const nlohmann::json& document, const std::string& source) {
  return parse_scenario(document, source, source_dir());
}

Outcome simulate_document(const nlohmann::json& document) {
  Outcome o;
  o.scenario = parse(document);
  o.plan = build_plan(o.scenario);
  o.result = simulate(o.scenario, o.plan);
  o.report = make_report(o.scenario, o.plan, o.result);
  return o;
}

std::filesystem::path temp_dir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "partsim-test-XXXXXX").string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  return pattern;
}

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

namespace {
std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}
} // namespace

CliResult run_cli(const std::vector<std::string>& args, const std::filesystem::path& cwd) {
  return run_cli_in_shell(args, cwd, "", "");
}

CliResult run_cli_in_shell(const std::vector<std::string>& args, const std::filesystem::path& cwd,
                           const std::string& shell_prefix, const std::string& stdout_to) {
  const std::filesystem::path dir = cwd.empty() ? temp_dir() : cwd;
  const std::filesystem::path err_file = temp_dir() / "stderr.txt";
  std::string command = "cd " + shell_quote(dir.string()) + " && " + shell_prefix +
                        " PARTSIM_DATA_DIR=" + shell_quote(source_dir().string()) + " " + shell_quote(PARTSIM_CLI);
  // append() rather than " " + ...: GCC 12 at -O3 warns falsely (-Wrestrict) on operator+ with a literal.
  for (const std::string& arg : args) command.append(" ").append(shell_quote(arg));
  command.append(" 2>").append(shell_quote(err_file.string())).append(" </dev/null");
  if (!stdout_to.empty()) command.append(" >").append(shell_quote(stdout_to));
  CliResult result;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("popen failed");
  std::array<char, 4096> buffer{};
  std::size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) result.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.err = read_file(err_file);
  return result;
}

nlohmann::json run_scenario_json(const std::string& scenario, const std::vector<std::string>& sets) {
  // --no-expect: the overrides move the figures a shipped scenario's /expect bounds.
  std::vector<std::string> args{
      "run", (source_dir() / "scenarios" / scenario).string(), "--json", "--no-files", "--no-progress", "--no-expect"};
  for (const std::string& s : sets) {
    args.emplace_back("--set");
    args.push_back(s);
  }
  const CliResult r = run_cli(args);
  EXPECT_EQ(r.exit_code, 0) << scenario << ": " << r.err;
  return r.exit_code == 0 ? nlohmann::json::parse(r.out) : nlohmann::json::object();
}

namespace {

void compare_reports(const nlohmann::json& a, const nlohmann::json& b, const std::vector<std::string>& skipped,
                     const std::function<double(const std::string&)>& tolerance, double absolute,
                     const std::string& where) {
  if (std::find(skipped.begin(), skipped.end(), where) != skipped.end()) return;
  if (a.is_object() && b.is_object()) {
    for (auto it = a.begin(); it != a.end(); ++it) {
      const std::string at = where + "/" + it.key();
      if (std::find(skipped.begin(), skipped.end(), at) != skipped.end()) continue;
      ASSERT_TRUE(b.contains(it.key())) << at;
      compare_reports(it.value(), b[it.key()], skipped, tolerance, absolute, at);
    }
    for (auto it = b.begin(); it != b.end(); ++it) {
      const std::string at = where + "/" + it.key();
      EXPECT_TRUE(a.contains(it.key()) || std::find(skipped.begin(), skipped.end(), at) != skipped.end()) << at;
    }
  } else if (a.is_array() && b.is_array()) {
    ASSERT_EQ(a.size(), b.size()) << where;
    for (std::size_t i = 0; i < a.size(); ++i)
      compare_reports(a[i], b[i], skipped, tolerance, absolute, where + "/" + std::to_string(i));
  } else if (a.is_number_float() && b.is_number_float()) {
    EXPECT_NEAR(a.get<double>(), b.get<double>(), std::max(tolerance(where) * std::abs(b.get<double>()), absolute))
        << where;
  } else {
    EXPECT_EQ(a, b) << where;
  }
}

} // namespace

void expect_same_report(const nlohmann::json& a, const nlohmann::json& b, const std::vector<std::string>& skipped,
                        const std::function<double(const std::string&)>& tolerance, double absolute) {
  compare_reports(a, b, skipped, tolerance, absolute, "");
}

void expect_accounting(const Outcome& o, bool between_ranks) {
  std::uint64_t sent = 0;
  std::uint64_t received = 0;
  for (const RankMetrics& m : o.report.ranks) {
    EXPECT_NEAR(m.busy() + m.idle(), o.report.makespan, o.report.makespan * 1e-9) << "rank " << m.rank;
    sent += m.bytes_sent;
    received += m.bytes_received;
  }
  if (between_ranks) {
    EXPECT_EQ(sent, received);
  }
  EXPECT_EQ(o.report.bytes_sent, o.report.bytes_received);
}

} // namespace partsim::test
