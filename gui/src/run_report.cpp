// RunReport filled from the core's typed report (partsim/report/report_document.hpp).
#include "run_report.hpp"

#include "partsim/common/error.hpp"
#include "partsim/report/report_document.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <string_view>

namespace partsim::gui {

std::optional<double> RunReport::figure(const std::string& key) const {
  for (const Figure& f : figures)
    if (f.key == key) return f.value;
  return std::nullopt;
}

int RunReport::slowest_rank() const {
  int best = -1;
  for (std::size_t i = 0; i < ranks.size(); ++i)
    if (best < 0 || ranks[i].finish > ranks[static_cast<std::size_t>(best)].finish) best = static_cast<int>(i);
  return best;
}

bool RunReport::has_overlap() const {
  return std::any_of(ranks.begin(), ranks.end(), [](const RankRow& r) { return r.overlapped.has_value(); });
}

double RunReport::overlapped_total() const {
  double sum = 0;
  for (const RankRow& r : ranks) sum += r.overlapped.value_or(0.0);
  return sum;
}

int bottleneck_index(const ReportServing& serving) {
  for (std::size_t i = 0; i < serving.stages.size(); ++i)
    if (serving.stages[i].name == serving.bottleneck) return static_cast<int>(i);
  return -1;
}

std::vector<TimeShare> RunReport::time_shares() const {
  double compute = 0, communication = 0, wait = 0, loading = 0, idle = 0;
  for (const RankRow& r : ranks) {
    compute += r.compute;
    communication += r.communication;
    wait += r.wait;
    loading += r.data_loading;
    idle += r.tail_idle;
  }
  const double total = makespan() * static_cast<double>(ranks.size());
  if (total <= 0) return {};
  std::vector<TimeShare> shares{
      {QStringLiteral("compute"), compute / total},
      {has_overlap() ? QStringLiteral("exposed communication") : QStringLiteral("communication"),
       communication / total},
      {QStringLiteral("wait"), wait / total}};
  if (loading > 0) shares.push_back({QStringLiteral("data loading"), loading / total});
  shares.push_back({QStringLiteral("idle"), idle / total});
  return shares;
}

namespace {
/** A serving run's headline figures for the summary panel: the end-to-end ones (the share within the latency target
 * when the scenario has one), then each LLM stage's TTFT, TPOT and
 * goodput under "serving/llm/<stage>/". */
void add_serving_figures(const ReportServing& s, std::vector<Figure>& figures) {
  figures.push_back({"serving/throughput_items_per_s", s.throughput});
  figures.push_back({"serving/latency_p50_s", s.latency.p50});
  figures.push_back({"serving/latency_p99_s", s.latency.p99});
  figures.push_back({"serving/drop_rate", s.drop_rate});
  if (s.within_target) figures.push_back({"serving/within_target", *s.within_target});
  for (const ReportServingStage& st : s.stages) {
    if (!st.llm) continue;
    const std::string prefix = "serving/llm/" + st.name + "/";
    figures.push_back({prefix + "ttft_p99_s", st.llm->ttft.p99});
    figures.push_back({prefix + "tpot_p99_s", st.llm->tpot.p99});
    if (st.llm->goodput) figures.push_back({prefix + "goodput", *st.llm->goodput});
  }
}
} // namespace

std::optional<RunReport> parse_report(const QByteArray& text, QString* error) {
  auto fail = [&](const QString& why) -> std::optional<RunReport> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  const nlohmann::json json = nlohmann::json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
  if (json.is_discarded() || !json.is_object()) return fail(QStringLiteral("the report is not JSON"));
  ReportDocument doc;
  try {
    doc = report_document_from_json(json, "report.json");
  } catch (const InputError& e) {
    return fail(QString::fromStdString(e.what()));
  }
  if (!doc.summary && !doc.memory_per_gpu)
    return fail(QStringLiteral("the report has neither a summary nor memory figures"));
  RunReport r;
  r.json_text = text;
  r.scenario_name = QString::fromStdString(doc.scenario.name);
  r.strategy = QString::fromStdString(doc.strategy);
  r.verdict = QString::fromStdString(std::string(enum_name(doc.verdict)));
  // A serving run has no training iteration: its speed-up, efficiency, imbalance and Amdahl figures are zero by
  // construction, so the summary panel keeps only the figures that hold for both kinds.
  const auto shown = [&](const std::string& key) {
    return !doc.serving || key == "makespan_s" || key == "gpus" || key == "bytes_sent" || key == "bytes_received";
  };
  if (doc.summary)
    for (const auto& [key, value] : doc.summary->figures())
      if (shown(key)) r.figures.push_back({key, value});
  if (doc.memory_per_gpu)
    for (const auto& [key, value] : figures(*doc.memory_per_gpu)) r.figures.push_back({"memory_per_gpu/" + key, value});
  // A transformer layer's passes as one rank ran them (communication and waits included).
  if (doc.layer_ops && doc.layer_ops->simulated) {
    r.figures.push_back({"layer_ops/simulated/forward_s", doc.layer_ops->simulated->forward_s});
    r.figures.push_back({"layer_ops/simulated/backward_s", doc.layer_ops->simulated->backward_s});
  }
  // Seed situation 9: the training run replayed over failures and checkpoints, and stragglers' iteration times.
  if (const auto& rel = doc.reliability) {
    r.figures.push_back({"reliability/goodput", rel->goodput});
    r.figures.push_back({"reliability/time_to_finish_days", rel->time_to_finish_days});
    r.figures.push_back({"reliability/failures", static_cast<double>(rel->failures)});
    r.figures.push_back({"reliability/lost_work_s", rel->lost_work});
    r.figures.push_back({"reliability/checkpoint_time_s", rel->checkpoint_time});
    r.figures.push_back({"reliability/recovery_time_s", rel->recovery_time});
    r.figures.push_back({"reliability/interval_s", rel->interval});
    if (rel->young_daly_interval) r.figures.push_back({"reliability/young_daly_interval_s", *rel->young_daly_interval});
    r.figures.push_back({"reliability/checkpoint_write_s", rel->checkpoint_write});
    if (const auto& in = rel->injected; in && in->fired) {
      r.figures.push_back({"reliability/injected/at_s", in->at});
      r.figures.push_back({"reliability/injected/noticed_ranks", static_cast<double>(in->noticed_ranks)});
      r.figures.push_back({"reliability/injected/hung_ranks", static_cast<double>(in->hung_ranks)});
      r.figures.push_back({"reliability/injected/stopped_at_s", in->stopped});
      r.figures.push_back({"reliability/injected/training_again_at_s", in->training_again_at});
      FailureMark mark{in->at, in->stopped, QString::fromStdString(in->what), {}};
      for (const std::int64_t rank : in->failed_ranks) mark.failed_ranks.push_back(static_cast<int>(rank));
      r.failure = std::move(mark);
    }
  }
  // Seed situation 5: a serving workload's latency, throughput and stages.
  if (doc.serving) {
    add_serving_figures(*doc.serving, r.figures);
    r.serving = doc.serving;
  }
  if (const auto& routing = doc.expert_routing)
    for (const ReportExpertLayer& l : routing->layers)
      r.expert_layers.push_back({static_cast<int>(l.layer), l.max_load, l.mean_load, l.dropped_fraction});
  if (const auto& st = doc.stragglers) {
    r.figures.push_back({"stragglers/mean_iteration_s", st->mean_iteration});
    r.figures.push_back({"stragglers/p99_iteration_s", st->p99_iteration});
    r.figures.push_back({"stragglers/nominal_iteration_s", st->nominal_iteration});
    r.figures.push_back({"stragglers/slowed_iteration_fraction", st->slowed_iteration_fraction});
  }
  for (const ReportCollective& c : doc.collectives.value_or(std::vector<ReportCollective>{})) {
    CollectiveRow row;
    row.operation = QString::fromStdString(to_string(c.operation));
    row.algorithm = QString::fromStdString(to_string(c.algorithm));
    row.kind = QString::fromStdString(to_string(c.kind));
    row.ranks = static_cast<int>(c.ranks);
    row.bytes = static_cast<double>(c.bytes);
    row.count = static_cast<double>(c.count);
    row.mean_time = c.mean_time;
    row.min_time = c.min_time;
    row.max_time = c.max_time;
    row.bus_bandwidth = c.busbw;
    r.collectives.push_back(row);
  }
  for (const ReportRank& m : doc.ranks) {
    RankRow rank;
    rank.rank = static_cast<int>(m.rank);
    rank.node = static_cast<int>(m.node);
    rank.local_gpu = static_cast<int>(m.local_gpu);
    rank.samples = static_cast<double>(m.samples);
    rank.compute = m.compute;
    rank.communication = m.communication;
    rank.wait = m.wait;
    rank.tail_idle = m.tail_idle;
    rank.data_loading = m.data_loading.value_or(0.0);
    rank.finish = m.finish;
    rank.overlapped = m.overlapped_communication;
    r.ranks.push_back(rank);
  }
  if (doc.out_of_memory() || (doc.memory_per_gpu && !doc.memory_per_gpu->fits)) {
    const ReportMemory memory = doc.memory_per_gpu.value_or(ReportMemory{});
    r.warnings << QStringLiteral("out of memory: %1 needed per GPU, %2 available (not simulated)")
                      .arg(format_figure("total_bytes", memory.total),
                           format_figure("capacity_bytes", memory.capacity));
  }
  if (doc.class_split && doc.class_split->starved_partitions > 0)
    r.warnings << QStringLiteral("%1 partition(s) starved: fewer than %2 \"%3\" samples")
                      .arg(doc.class_split->starved_partitions)
                      .arg(doc.class_split->starved_threshold)
                      .arg(QString::fromStdString(doc.class_split->minority_class));
  if (doc.coordinator)
    r.coordinator_busy = doc.coordinator->setup + doc.coordinator->serial_compute + doc.coordinator->coordination;
  return r;
}

namespace {
struct KnownFigure {
  const char* key;
  const char* label;
  const char* kind; // "s", "x", "%", "n", "B", "f"
};
constexpr KnownFigure kKnown[] = {
    {"makespan_s", "Makespan", "s"},
    {"throughput_samples_per_s", "Throughput (samples/s)", "n"},
    {"single_gpu_time_s", "Same work on one GPU", "s"},
    {"speedup", "Speedup", "x"},
    {"parallel_efficiency", "Parallel efficiency", "%"},
    {"load_imbalance_max_over_mean", "Load imbalance (max/mean)", "f"},
    {"load_imbalance_cv", "Load imbalance (CV)", "f"},
    {"communication_overhead", "Communication overhead", "%"},
    {"exposed_communication_overhead", "Exposed communication", "%"},
    {"idle_share", "Idle share of GPU time", "%"},
    {"time_lost_waiting_gpu_s", "GPU time lost waiting", "s"},
    {"slowest_rank_excess_s", "Slowest rank vs mean finish", "s"},
    {"parallel_fraction", "Measured parallel fraction", "f"},
    {"amdahl_speedup_bound", "Amdahl bound on these GPUs", "x"},
    {"amdahl_limit", "Amdahl limit (infinite GPUs)", "x"},
    {"karp_flatt_serial_fraction", "Karp-Flatt serial fraction", "f"},
    {"exposed_communication_gpu_s", "Exposed communication (GPU-s)", "s"},
    {"overlapped_communication_gpu_s", "Overlapped communication (GPU-s)", "s"},
    {"mfu", "Model FLOPs utilisation (MFU)", "%"},
    {"hfu", "Hardware FLOPs utilisation (HFU)", "%"},
    {"tokens_per_s", "Tokens per second", "n"},
    {"model_flops_per_iteration", "Model FLOPs per iteration", "n"},
    {"memory_per_gpu/total_bytes", "Memory per GPU", "B"},
    {"memory_per_gpu/capacity_bytes", "GPU memory capacity", "B"},
    {"memory_per_gpu/parameters_bytes", "  parameters", "B"},
    {"memory_per_gpu/gradients_bytes", "  gradients", "B"},
    {"memory_per_gpu/optimizer_states_bytes", "  optimizer states", "B"},
    {"memory_per_gpu/model_states_bytes", "  model states (stay between iterations)", "B"},
    {"memory_per_gpu/activations_bytes", "  activations", "B"},
    {"memory_per_gpu/workspace_bytes", "  workspace", "B"},
    {"layer_ops/simulated/forward_s", "One layer's forward pass (simulated)", "s"},
    {"layer_ops/simulated/backward_s", "One layer's backward pass (simulated)", "s"},
    {"reliability/goodput", "Goodput (useful share of the run)", "%"},
    {"reliability/time_to_finish_days", "Time to finish (days)", "n"},
    {"reliability/failures", "Failures", "n"},
    {"reliability/lost_work_s", "  work lost to failures", "s"},
    {"reliability/checkpoint_time_s", "  time in checkpoints", "s"},
    {"reliability/recovery_time_s", "  time in recovery", "s"},
    {"reliability/interval_s", "Checkpoint interval", "s"},
    {"reliability/young_daly_interval_s", "  Young/Daly interval", "s"},
    {"reliability/checkpoint_write_s", "  checkpoint write (simulated network)", "s"},
    {"reliability/injected/at_s", "Injected failure at", "s"},
    {"reliability/injected/noticed_ranks", "  ranks that noticed it", "n"},
    {"reliability/injected/hung_ranks", "  ranks hung until detection", "n"},
    {"reliability/injected/stopped_at_s", "  job stopped at", "s"},
    {"reliability/injected/training_again_at_s", "  training again at", "s"},
    {"stragglers/mean_iteration_s", "Iteration with stragglers (mean)", "s"},
    {"stragglers/p99_iteration_s", "  p99", "s"},
    {"stragglers/nominal_iteration_s", "  without a straggler", "s"},
    {"stragglers/slowed_iteration_fraction", "Iterations slowed by a straggler", "%"},
    {"serving/throughput_items_per_s", "Serving throughput (items/s)", "n"},
    {"serving/latency_p50_s", "End-to-end latency p50", "s"},
    {"serving/latency_p99_s", "End-to-end latency p99", "s"},
    {"serving/drop_rate", "Dropped requests", "%"},
    {"serving/within_target", "Requests within the latency target", "%"},
    {"bytes_sent", "Bytes sent", "B"},
    {"bytes_received", "Bytes received", "B"},
    {"gpus", "GPUs", "n"},
    {"iterations", "Iterations", "n"},
};

/** An LLM stage's figures, "serving/llm/<stage>/<suffix>": labels name the stage. */
constexpr KnownFigure kLlmKnown[] = {
    {"ttft_p99_s", "TTFT p99 (%1)", "s"},
    {"tpot_p99_s", "TPOT p99 (%1)", "s"},
    {"goodput", "Goodput within targets (%1)", "%"},
};
constexpr std::string_view kLlmPrefix = "serving/llm/";

const KnownFigure* known(const std::string& key) {
  for (const KnownFigure& k : kKnown)
    if (key == k.key) return &k;
  if (key.starts_with(kLlmPrefix) && key.rfind('/') > kLlmPrefix.size()) {
    const std::string suffix = key.substr(key.rfind('/') + 1);
    for (const KnownFigure& k : kLlmKnown)
      if (suffix == k.key) return &k;
  }
  return nullptr;
}
} // namespace

QString figure_label(const std::string& key) {
  if (const KnownFigure* k = known(key)) {
    const QString label = QString::fromLatin1(k->label);
    if (!key.starts_with(kLlmPrefix)) return label;
    const std::size_t slash = key.rfind('/');
    return label.arg(QString::fromStdString(key.substr(kLlmPrefix.size(), slash - kLlmPrefix.size())));
  }
  QString label = QString::fromStdString(key).replace(QLatin1Char('_'), QLatin1Char(' '));
  if (!label.isEmpty()) label[0] = label[0].toUpper();
  return label;
}

QString format_seconds(double s) {
  const double a = std::fabs(s);
  if (a == 0.0) return QStringLiteral("0 s");
  if (a < 1e-3) return QStringLiteral("%1 us").arg(s * 1e6, 0, 'g', 4);
  if (a < 1.0) return QStringLiteral("%1 ms").arg(s * 1e3, 0, 'g', 4);
  return QStringLiteral("%1 s").arg(s, 0, 'g', 4);
}

QString format_duration(double s) {
  constexpr double kHour = 3600.0;
  constexpr double kDay = 86400.0;
  const double a = std::fabs(s);
  if (a < 2 * kHour) return format_seconds(s);
  if (a < 2 * kDay) return QStringLiteral("%1 h").arg(s / kHour, 0, 'g', 4);
  return QStringLiteral("%1 days").arg(s / kDay, 0, 'g', 4);
}

QString format_figure(const std::string& key, double value) {
  const KnownFigure* k = known(key);
  const std::string kind = k != nullptr ? k->kind : (key.ends_with("_s") ? "s" : key.ends_with("_bytes") ? "B" : "f");
  if (kind == "s") return format_seconds(value);
  if (kind == "x") return QStringLiteral("%1x").arg(value, 0, 'f', 3);
  if (kind == "%") return QStringLiteral("%1%").arg(value * 100.0, 0, 'f', 1);
  if (kind == "n") return QString::number(value, 'g', 8);
  if (kind == "B") {
    const char* units[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    double v = value;
    while (std::fabs(v) >= 1000.0 && u < 5) {
      v /= 1000.0;
      ++u;
    }
    return QStringLiteral("%1 %2").arg(v, 0, 'g', 4).arg(QLatin1String(units[u]));
  }
  return QString::number(value, 'f', 4);
}

QByteArray ranks_csv(const RunReport& report) {
  QByteArray out = "rank,node,local_gpu,samples,compute_s,communication_s,wait_s,tail_idle_s,busy_s,idle_s,finish_s,"
                   "data_loading_s\n";
  for (const RankRow& r : report.ranks)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12\n")
               .arg(r.rank)
               .arg(r.node)
               .arg(r.local_gpu)
               .arg(r.samples, 0, 'g', 17)
               .arg(r.compute, 0, 'g', 17)
               .arg(r.communication, 0, 'g', 17)
               .arg(r.wait, 0, 'g', 17)
               .arg(r.tail_idle, 0, 'g', 17)
               .arg(r.busy(), 0, 'g', 17)
               .arg(r.idle(), 0, 'g', 17)
               .arg(r.finish, 0, 'g', 17)
               .arg(r.data_loading, 0, 'g', 17)
               .toUtf8();
  return out;
}

} // namespace partsim::gui
