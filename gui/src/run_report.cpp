// Tolerant report.json reading.
#include "run_report.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>

namespace partsim::gui {

namespace {
using nlohmann::json;

std::optional<double> number(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  const auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

QString string_of(const json& object, const char* key) {
  if (!object.is_object()) return {};
  const auto it = object.find(key);
  if (it == object.end() || !it->is_string()) return {};
  return QString::fromStdString(it->get<std::string>());
}

void add_warnings(const json& warnings, QStringList& out) {
  if (!warnings.is_array()) return;
  for (const json& w : warnings) {
    if (w.is_string())
      out << QString::fromStdString(w.get<std::string>());
    else if (w.is_object() && w.contains("message") && w["message"].is_string())
      out << QString::fromStdString(w["message"].get<std::string>());
    else
      out << QString::fromStdString(w.dump());
  }
}
} // namespace

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

std::vector<TimeShare> RunReport::time_shares() const {
  double compute = 0, communication = 0, wait = 0, idle = 0;
  for (const RankRow& r : ranks) {
    compute += r.compute;
    communication += r.communication;
    wait += r.wait;
    idle += r.tail_idle;
  }
  const double total = makespan() * static_cast<double>(ranks.size());
  if (total <= 0) return {};
  return {{QStringLiteral("compute"), compute / total},
          {has_overlap() ? QStringLiteral("exposed communication") : QStringLiteral("communication"),
           communication / total},
          {QStringLiteral("wait"), wait / total},
          {QStringLiteral("idle"), idle / total}};
}

std::optional<RunReport> parse_report(const QByteArray& text, QString* error) {
  const json doc = json::parse(text.constData(), text.constData() + text.size(), nullptr, false);
  auto fail = [&](const QString& why) -> std::optional<RunReport> {
    if (error != nullptr) *error = why;
    return std::nullopt;
  };
  if (doc.is_discarded() || !doc.is_object()) return fail(QStringLiteral("the report is not JSON"));
  const bool has_summary = doc.contains("summary") && doc["summary"].is_object();
  const bool has_memory = doc.contains("memory_per_gpu") && doc["memory_per_gpu"].is_object();
  if (!has_summary && !has_memory) return fail(QStringLiteral("the report has neither a summary nor memory figures"));
  RunReport r;
  r.json_text = text;
  r.scenario_name = string_of(doc.value("scenario", json::object()), "name");
  r.strategy = string_of(doc, "strategy");
  r.verdict = string_of(doc, "verdict");
  if (has_summary)
    for (const auto& [key, value] : doc["summary"].items())
      if (value.is_number()) r.figures.push_back({key, value.get<double>()});
  if (has_memory)
    for (const auto& [key, value] : doc["memory_per_gpu"].items())
      if (value.is_number()) r.figures.push_back({"memory_per_gpu/" + key, value.get<double>()});
  if (doc.contains("collectives") && doc["collectives"].is_array())
    for (const json& c : doc["collectives"]) {
      if (!c.is_object()) continue;
      CollectiveRow row;
      row.operation = string_of(c, "operation");
      row.algorithm = string_of(c, "algorithm");
      row.kind = string_of(c, "kind");
      row.ranks = static_cast<int>(number(c, "ranks").value_or(0));
      row.bytes = number(c, "bytes").value_or(0);
      row.count = number(c, "count").value_or(0);
      row.mean_time = number(c, "mean_time_s").value_or(0);
      row.min_time = number(c, "min_time_s").value_or(0);
      row.max_time = number(c, "max_time_s").value_or(0);
      row.bus_bandwidth = number(c, "busbw_bytes_per_s");
      r.collectives.push_back(row);
    }
  const json ranks = doc.value("ranks", json::array());
  for (const json& row : ranks.is_array() ? ranks : json::array()) {
    if (!row.is_object()) continue;
    RankRow rank;
    rank.rank = static_cast<int>(number(row, "rank").value_or(static_cast<double>(r.ranks.size())));
    rank.node = static_cast<int>(number(row, "node").value_or(0));
    rank.local_gpu = static_cast<int>(number(row, "local_gpu").value_or(0));
    rank.samples = number(row, "samples").value_or(0);
    rank.compute = number(row, "compute_s").value_or(0);
    rank.communication = number(row, "communication_s").value_or(0);
    rank.wait = number(row, "wait_s").value_or(0);
    rank.tail_idle = number(row, "tail_idle_s").value_or(0);
    rank.finish = number(row, "finish_s").value_or(rank.compute + rank.communication + rank.wait);
    rank.overlapped = number(row, "overlapped_communication_s");
    rank.memory_peak = number(row, "memory_peak_bytes");
    if (!rank.memory_peak) rank.memory_peak = number(row, "peak_memory_bytes");
    rank.out_of_memory = row.value("out_of_memory", false) == true;
    r.ranks.push_back(rank);
  }
  add_warnings(doc.value("warnings", json()), r.warnings);
  int oom = 0;
  for (const RankRow& rank : r.ranks) oom += rank.out_of_memory ? 1 : 0;
  if (oom > 0) r.warnings << QStringLiteral("out of memory on %1 GPU(s)").arg(oom);
  if (r.verdict == QLatin1String("out_of_memory") ||
      (has_memory && doc["memory_per_gpu"].value("fits", true) == false)) {
    const json& m = doc.value("memory_per_gpu", json::object());
    r.warnings << QStringLiteral("out of memory: %1 needed per GPU, %2 available (not simulated)")
                      .arg(format_figure("total_bytes", number(m, "total_bytes").value_or(0)),
                           format_figure("capacity_bytes", number(m, "capacity_bytes").value_or(0)));
  }
  if (doc.contains("class_split") && doc["class_split"].is_object()) {
    const json& split = doc["class_split"];
    const double starved = number(split, "starved_partitions").value_or(0);
    if (starved > 0)
      r.warnings << QStringLiteral("%1 partition(s) starved: fewer than %2 \"%3\" samples")
                        .arg(starved)
                        .arg(number(split, "starved_threshold").value_or(0))
                        .arg(string_of(split, "minority_class"));
  }
  if (doc.contains("coordinator") && doc["coordinator"].is_object()) {
    const json& c = doc["coordinator"];
    r.coordinator_busy = number(c, "setup_s").value_or(0) + number(c, "serial_compute_s").value_or(0) +
                         number(c, "coordination_s").value_or(0);
  }
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
    {"memory_per_gpu/activations_bytes", "  activations", "B"},
    {"memory_per_gpu/workspace_bytes", "  workspace", "B"},
    {"memory_peak_bytes", "Peak memory per GPU", "B"},
    {"bytes_sent", "Bytes sent", "B"},
    {"bytes_received", "Bytes received", "B"},
    {"gpus", "GPUs", "n"},
    {"iterations", "Iterations", "n"},
};

const KnownFigure* known(const std::string& key) {
  for (const KnownFigure& k : kKnown)
    if (key == k.key) return &k;
  return nullptr;
}
} // namespace

QString figure_label(const std::string& key) {
  if (const KnownFigure* k = known(key)) return QString::fromLatin1(k->label);
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
  QByteArray out = "rank,node,local_gpu,samples,compute_s,communication_s,wait_s,tail_idle_s,busy_s,idle_s,finish_s\n";
  for (const RankRow& r : report.ranks)
    out += QStringLiteral("%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11\n")
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
               .toUtf8();
  return out;
}

} // namespace partsim::gui
