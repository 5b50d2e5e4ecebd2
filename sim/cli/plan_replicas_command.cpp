// partsim plan-replicas: the smallest node count per serving stage that meets a throughput and a p99 target, found by
// simulating candidates (one child process each), and the latency-against-load curve of the plan found.
#include "child_process.hpp"
#include "commands.hpp"

#include "partsim/batch/replica_plan.hpp"
#include "partsim/common/error.hpp"
#include "partsim/common/output_file.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim/input/json_file.hpp"
#include "partsim/input/units.hpp"
#include "partsim/report/report_writers.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>

namespace partsim::cli {

namespace {

struct PlanReplicasOptions {
  std::string scenario;
  std::vector<std::string> sets;
  double throughput = 0.0;
  std::string p99;
  double tolerance = 0.02;
  double max_drop_rate = 0.0;
  double max_utilisation = 1.0;
  int max_nodes = 64;
  std::string granularity = "node";
  std::size_t jobs = 0;
  std::string out_dir;
};

/** A plan to simulate: nodes per pool, replicas per node (empty: the scenario's), the offered rate. */
struct Candidate {
  std::vector<int> nodes;
  std::vector<int> per_node;
  double rate = 0.0;
};

std::vector<Override> candidate_overrides(const ReplicaLayout& layout, const Candidate& c) {
  return c.per_node.empty() ? replica_overrides(layout, c.nodes, c.rate)
                            : replica_overrides(layout, c.nodes, c.per_node, c.rate);
}

/** Simulates each candidate in a child process, in parallel; a child that fails fails the command with its own
 * error. */
std::vector<ReplicaTrial> simulate(const PlanReplicasOptions& options, const ReplicaLayout& layout,
                                   const std::vector<Candidate>& candidates) {
  std::vector<std::vector<std::string>> commands;
  for (const Candidate& c : candidates) {
    std::vector<std::string> sets = options.sets;
    for (const Override& o : candidate_overrides(layout, c)) sets.push_back(o.pointer + "=" + o.value.dump());
    commands.push_back(child_run_command(options.scenario, sets));
  }
  const auto results = run_children(commands, job_count(options.jobs), [](std::size_t) {});
  std::vector<ReplicaTrial> trials;
  CommandFailed failed;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const ChildResult& r = results[i];
    if (r.exit_code != kExitOk) {
      const ChildError child = child_error(r);
      failed.errors.push_back({child.source, child.pointer,
                               fmt::format("candidate {} failed with exit code {}: {}",
                                           fmt::join(candidates[i].nodes, "/"), r.exit_code, child.message)});
      continue;
    }
    trials.push_back(read_trial(nlohmann::json::parse(r.out), layout, candidates[i].nodes, candidates[i].rate,
                                candidates[i].per_node));
  }
  if (!failed.errors.empty()) throw failed;
  return trials;
}

std::string trial_line(const ReplicaLayout& layout, const ReplicaTrial& t, const std::string& verdict) {
  std::string nodes;
  for (std::size_t i = 0; i < t.nodes.size(); ++i)
    nodes += fmt::format("{}{}={}x{}", i > 0 ? " " : "", layout.names[i], t.nodes[i], t.per_node[i]);
  return fmt::format("  {:>11.6g} {:>11} {:>11} {:>7.3g}%  {:<14} {:<13} {}\n", t.throughput, human_seconds(t.p50),
                     human_seconds(t.p99), 100.0 * t.drop_rate, t.bottleneck, verdict, nodes);
}

void write_trials_csv(std::ostream& out, const ReplicaLayout& layout, const std::vector<ReplicaTrial>& trials,
                      const std::vector<std::string>& phases) {
  out << "phase";
  for (const std::string& name : layout.names) out << ",nodes_" << name;
  out << ",offered_items_per_s,throughput_items_per_s,p50_s,p99_s,drop_rate";
  for (const std::string& name : layout.names) out << ",utilisation_" << name;
  for (const std::string& name : layout.names) out << ",replicas_per_node_" << name;
  out << ",meets\n";
  for (std::size_t k = 0; k < trials.size(); ++k) {
    const ReplicaTrial& t = trials[k];
    out << phases[k];
    for (const int n : t.nodes) out << ',' << n;
    out << fmt::format(",{},{},{},{},{}", t.offered, t.throughput, t.p50, t.p99, t.drop_rate);
    for (const double u : t.utilisation) out << fmt::format(",{}", u);
    for (const int p : t.per_node) out << ',' << p;
    out << ',' << (t.meets ? "true" : "false") << '\n';
  }
}

/** Rewrites every relative `csv` path of `doc` (a trace, labels, an empirical distribution: relative to the
 * scenario's folder `from`) relative to `to`, where plan.json goes, so that plan.json runs as it is. */
void rebase_files(nlohmann::json& doc, const std::filesystem::path& from, const std::filesystem::path& to) {
  if (doc.is_array()) {
    for (nlohmann::json& item : doc) rebase_files(item, from, to);
    return;
  }
  if (!doc.is_object()) return;
  for (auto& [key, value] : doc.items()) {
    if (key == "csv" && value.is_string()) {
      const std::filesystem::path file(value.get<std::string>());
      if (file.is_relative())
        value = (from / file).lexically_normal().lexically_relative(to.lexically_normal()).string();
      continue;
    }
    rebase_files(value, from, to);
  }
}

/** `--granularity replica`: from the node plan, each pool in turn (least busy first) keeps the fewest replicas that
 * still meet the targets, found by bisection over its replica counts that split evenly over the fewest nodes
 * (pool_shape), from its busy replicas + 1 (fewest_replicas) up to what it has; the other pools as they are by then.
 * Every simulation is recorded as phase "refine". */
template <typename Record>
ReplicaTrial refine(const PlanReplicasOptions& options, const ReplicaLayout& layout, const ReplicaTargets& targets,
                    ReplicaTrial current, Record& record) {
  std::vector<std::size_t> order(current.nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return current.utilisation[a] < current.utilisation[b]; });
  for (const std::size_t i : order) {
    const int max = layout.replicas_per_node[i];
    const int has = current.nodes[i] * current.per_node[i];
    const std::vector<int> counts = replica_counts(fewest_replicas(has, current.utilisation[i]), has - 1, max);
    std::size_t lo = 0, hi = counts.size(); // counts[hi] meets (hi == size: `has` does)
    std::optional<ReplicaTrial> best;
    while (lo < hi) {
      const std::size_t mid = (lo + hi) / 2;
      const auto [nodes, per_node] = *pool_shape(counts[mid], max);
      Candidate c{current.nodes, current.per_node, targets.throughput};
      c.nodes[i] = nodes;
      c.per_node[i] = per_node;
      const ReplicaTrial t = record(simulate(options, layout, {c}).front(), "refine");
      if (t.meets) {
        best = t;
        hi = mid;
      } else {
        lo = mid + 1;
      }
    }
    if (best) current = *best;
  }
  return current;
}

int plan_replicas(const PlanReplicasOptions& options) {
  std::vector<Override> base;
  for (const std::string& text : options.sets) base.push_back(parse_override(text));
  ReplicaTargets targets;
  targets.throughput = options.throughput;
  try {
    targets.p99 = parse_quantity(options.p99, Dimension::Time);
  } catch (const std::invalid_argument& e) {
    throw InputError("--p99", "", e.what());
  }
  if (!(targets.throughput > 0.0)) throw InputError("--throughput", "", "expected a rate above 0 items/s");
  if (!(targets.p99 > 0.0)) throw InputError("--p99", "", "expected a latency above 0");
  targets.tolerance = options.tolerance;
  targets.max_drop_rate = options.max_drop_rate;
  targets.max_utilisation = options.max_utilisation;
  targets.max_nodes_per_stage = options.max_nodes;
  // The scenario and every --set are checked here, once, before any child runs.
  ReplicaLayout layout = replica_layout(load_scenario(options.scenario, base, data_dir()));
  layout.closed.target = targets.throughput;
  check_closed_loop_target(layout, targets.throughput, targets.tolerance);

  write_stdout(fmt::format("partsim plan-replicas: {} stage{}, target {:g} items/s with p99 <= {}\n\n  {:>11} "
                           "{:>11} {:>11} {:>8}  {:<14} {:<13} {}\n",
                           layout.names.size(), layout.names.size() == 1 ? "" : "s", targets.throughput,
                           human_seconds(targets.p99), "items/s", "p50", "p99", "drops", "bottleneck", "verdict",
                           "stage=nodes x replicas per node"));
  std::vector<ReplicaTrial> trials;
  std::vector<std::string> phases;
  auto record = [&](ReplicaTrial t, const std::string& phase) {
    t.meets = meets_targets(t, targets);
    write_stdout(trial_line(layout, t, fmt::format("{} {}", phase, t.meets ? "meets" : "misses")));
    trials.push_back(t);
    phases.push_back(phase);
    return t;
  };

  // Growth: one node more for the busiest stage until the targets are met.
  std::map<std::vector<int>, ReplicaTrial> known; // at the target rate, by nodes per stage
  std::vector<int> nodes(layout.names.size(), 1);
  ReplicaTrial current;
  const std::size_t max_trials = layout.names.size() * static_cast<std::size_t>(options.max_nodes) + 1;
  for (std::size_t k = 0;; ++k) {
    current = record(simulate(options, layout, {{nodes, {}, targets.throughput}}).front(), "grow");
    known[current.nodes] = current;
    if (current.meets) break;
    const auto next = grow(current, targets);
    if (!next || k + 1 >= max_trials)
      throw CommandFailed{kExitFailure,
                          {{options.scenario, "",
                            fmt::format("no plan of at most {} nodes per stage meets {:g} items/s with p99 <= {} "
                                        "(the last: {:.6g} items/s, p99 {}); raise --max-nodes or relax the targets{}",
                                        options.max_nodes, targets.throughput, human_seconds(targets.p99),
                                        current.throughput, human_seconds(current.p99),
                                        layout.closed.clients > 0
                                            ? fmt::format(" (a closed loop of {} clients answers at most {} / (R + "
                                                          "Z): more nodes cannot take R below the stages' service)",
                                                          layout.closed.clients, layout.closed.clients)
                                            : std::string())}}};
    nodes = *next;
  }
  // Trim: one node fewer for a stage, least busy first, while the targets still hold (the candidates not simulated
  // yet all at once; one the growth already simulated is not run again).
  for (;;) {
    const std::vector<std::vector<int>> candidates = trim_candidates(current);
    if (candidates.empty()) break;
    std::vector<Candidate> fresh;
    for (const auto& c : candidates)
      if (!known.contains(c)) fresh.push_back({c, {}, targets.throughput});
    for (const ReplicaTrial& t : simulate(options, layout, fresh)) known[t.nodes] = record(t, "trim");
    bool trimmed = false;
    for (const auto& c : candidates)
      if (known.at(c).meets) {
        current = known.at(c);
        trimmed = true;
        break;
      }
    if (!trimmed) break;
  }

  if (options.granularity == "replica") current = refine(options, layout, targets, current, record);

  // The latency-against-load curve of the plan found.
  std::vector<Candidate> loads;
  for (const double f : curve_loads()) loads.push_back({current.nodes, current.per_node, f * targets.throughput});
  const std::vector<ReplicaTrial> curve = simulate(options, layout, loads);

  std::string summary = "\n  plan:";
  int total = layout.fixed_nodes;
  for (std::size_t i = 0; i < current.nodes.size(); ++i) {
    summary += fmt::format(" {} {} node{} ({} replicas);", layout.names[i], current.nodes[i],
                           current.nodes[i] == 1 ? "" : "s", current.nodes[i] * current.per_node[i]);
    total += current.nodes[i];
  }
  summary += fmt::format(" {} nodes in all; {:.6g} items/s, p99 {} at the target rate ({} simulations)\n", total,
                         current.throughput, human_seconds(current.p99), trials.size() + curve.size());
  summary += fmt::format("\n  {:>8} {:>11} {:>11} {:>11} {:>11} {:>8}  {}\n", "load", "offered/s", "items/s", "p50",
                         "p99", "drops", "bottleneck (utilisation)");
  for (std::size_t k = 0; k < curve.size(); ++k) {
    const ReplicaTrial& t = curve[k];
    const auto busiest = std::max_element(t.utilisation.begin(), t.utilisation.end()) - t.utilisation.begin();
    summary +=
        fmt::format("  {:>7.0f}% {:>11.6g} {:>11.6g} {:>11} {:>11} {:>7.3g}%  {} ({:.3g})\n", 100.0 * curve_loads()[k],
                    t.offered, t.throughput, human_seconds(t.p50), human_seconds(t.p99), 100.0 * t.drop_rate,
                    layout.names[static_cast<std::size_t>(busiest)], t.utilisation[static_cast<std::size_t>(busiest)]);
  }

  const std::filesystem::path dir = options.out_dir.empty() ? std::filesystem::path("partsim-out") / "plan-replicas"
                                                            : std::filesystem::path(options.out_dir);
  create_output_dir(dir);
  write_file_atomically(dir / "trials.csv", [&](std::ostream& out) { write_trials_csv(out, layout, trials, phases); });
  write_file_atomically(dir / "curve.csv", [&](std::ostream& out) {
    write_trials_csv(out, layout, curve, std::vector<std::string>(curve.size(), "curve"));
  });
  nlohmann::json plan = read_json_file(options.scenario);
  std::vector<Override> all = base;
  for (const Override& o : replica_overrides(layout, current.nodes, current.per_node, targets.throughput))
    all.push_back(o);
  apply_overrides(plan, all);
  rebase_files(plan, std::filesystem::absolute(options.scenario).parent_path(), std::filesystem::absolute(dir));
  plan.erase("expect"); // the scenario's expected figures, at its own nodes and rate: not the plan's
  write_file_atomically(dir / "plan.json", plan.dump(2) + "\n");
  write_stdout(summary);
  write_stdout(fmt::format("\n  wrote plan.json (the scenario with the plan's nodes), trials.csv and curve.csv in {}\n",
                           dir.string()));
  return kExitOk;
}

} // namespace

Action add_plan_replicas_command(CLI::App& app) {
  auto options = std::make_shared<PlanReplicasOptions>();
  CLI::App* command = app.add_subcommand(
      "plan-replicas",
      "Size a serving pipeline: the fewest nodes per stage that meet a throughput and a p99 target, by simulation");
  command->add_option("SCENARIO", options->scenario, "Serving scenario JSON file (Poisson or gamma arrivals)")
      ->required();
  command
      ->add_option("--throughput", options->throughput,
                   "Target: items/s answered, offered as the arrival rate (a closed loop: answered by its clients)")
      ->required();
  command->add_option("--p99", options->p99, "Target: end-to-end p99 latency (\"200ms\")")->required();
  command
      ->add_option("--tolerance", options->tolerance,
                   "Share of the target throughput a finite run may fall short by (default 0.02)")
      ->check(CLI::Range(0.0, 0.5));
  command->add_option("--max-drop-rate", options->max_drop_rate, "Share of requests a plan may drop (default 0)")
      ->check(CLI::Range(0.0, 1.0));
  command
      ->add_option("--max-utilisation", options->max_utilisation,
                   "Busiest a pool of a plan may be, a margin from saturation (default 1: none)")
      ->check(CLI::Range(0.01, 1.0));
  command->add_option("--max-nodes", options->max_nodes, "Most nodes a stage's pool may take (default 64)")
      ->check(CLI::Range(1, 4096));
  command
      ->add_option("--granularity", options->granularity,
                   "node: pools grow and shrink by whole nodes (default); replica: then each pool keeps the fewest "
                   "replicas that meet the targets, on the fewest nodes that hold them evenly")
      ->check(CLI::IsMember({"node", "replica"}));
  command->add_option("--set", options->sets, "Override a field for every candidate: /json/pointer=value")
      ->type_name("PATH=VALUE");
  command->add_option("--jobs,-j", options->jobs, "Candidates simulated at once (default: one per core)");
  command->add_option("--out", options->out_dir, "Output folder (default: partsim-out/plan-replicas)");
  return [options] { return plan_replicas(*options); };
}

} // namespace partsim::cli
