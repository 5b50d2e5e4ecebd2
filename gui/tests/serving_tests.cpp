// partsim-gui serving tests: a serving report's `serving` section (docs/report-reference.md) read into the snapshot,
// its headline figures in the summary panel, and the Serving tab's charts drawn from those numbers. No child process.
#include "charts/serving_view.hpp"
#include "models/summary_model.hpp"
#include "run_report.hpp"
#include "sample_reports.hpp"

#include <QAbstractItemModelTester>
#include <QBarSeries>
#include <QBarSet>
#include <QChartView>
#include <QLineSeries>
#include <QtTest>

#include <nlohmann/json.hpp>

using namespace partsim::gui;
using partsim::enum_name;
using partsim::ReportServing;
using partsim::ReportServingStage;

namespace {
/** A latency object of report.json (count, mean and percentiles with their half-widths), in seconds. */
nlohmann::json latency(double p50, double p90, double p95, double p99) {
  return {{"count", 1000},    {"mean_s", p50 * 1.1}, {"mean_ci_s", 1e-5}, {"p50_s", p50},
          {"p50_ci_s", 1e-5}, {"p90_s", p90},        {"p90_ci_s", 2e-5},  {"p95_s", p95},
          {"p95_ci_s", 3e-5}, {"p99_s", p99},        {"p99_ci_s", 4e-5},  {"max_s", p99 * 2}};
}

/** 101 quantiles (a CDF), evenly from `lo` to `hi` seconds. */
nlohmann::json quantiles(double lo, double hi) {
  nlohmann::json q = nlohmann::json::array();
  for (int i = 0; i <= 100; ++i) q.push_back(lo + (hi - lo) * i / 100.0);
  return q;
}

/** The `serving` section of a two-stage pipeline: a CPU stage, then an LLM stage (the bottleneck) with a TTFT target.
 * Keys as docs/report-reference.md lists them. */
nlohmann::json serving_section() {
  nlohmann::json cpu = nlohmann::json::parse(R"({
    "name": "tokenise", "device": "cpu", "nodes": 1, "replicas": 8, "served": 1200, "batches": 1200,
    "mean_batch_size": 1.0, "dropped": 0, "utilisation": 0.25, "mean_queue_length": 0.5, "max_queue_length": 3,
    "capacity_items_per_s": 400.0, "mean_wait_s": 0.0001,
    "over_time": {"begin_s": 2.0, "bin_s": 0.5, "queue_length": [0.0, 1.0, 0.5], "utilisation": [0.2, 0.3, 0.25]}
  })");
  cpu["latency"] = latency(0.002, 0.003, 0.004, 0.005);
  cpu["latency_quantiles_s"] = quantiles(0.001, 0.01);
  nlohmann::json llm_stage = nlohmann::json::parse(R"({
    "name": "llama", "device": "gpu", "nodes": 1, "replicas": 4, "served": 1100, "batches": 900,
    "mean_batch_size": 12.5, "dropped": 100, "utilisation": 0.9, "mean_queue_length": 7.0, "max_queue_length": 20,
    "capacity_items_per_s": 110.0, "mean_wait_s": 0.2,
    "over_time": {"begin_s": 2.0, "bin_s": 0.5, "queue_length": [2.0, 9.0, 12.0], "utilisation": [0.8, 0.95, 1.0]},
    "llm": {
      "model": "llama3-8b", "tensor_parallel": 2, "kv_bytes_per_token": 65536.0, "kv_capacity_tokens": 1000000.0,
      "kv_peak_tokens": 300000, "kv_peak_occupancy": 0.3, "kv_blocked_steps": 0, "rejected": 0, "steps": 5000,
      "prefill_steps": 1000, "mean_running": 40.0, "max_running": 64, "input_tokens": 500000,
      "output_tokens": 120000, "output_tokens_per_s": 12000.0, "ttft_target_s": 0.5, "goodput": 0.875,
      "goodput_requests_per_s": 87.5, "kv_admission": "preempt", "chunked_prefill": false, "preemptions": 3,
      "recomputed_tokens": 900
    }
  })");
  llm_stage["latency"] = latency(1.5, 3.0, 4.0, 6.0);
  llm_stage["latency_quantiles_s"] = quantiles(0.5, 8.0);
  llm_stage["llm"]["ttft"] = latency(0.04, 0.08, 0.1, 0.12);
  llm_stage["llm"]["tpot"] = latency(0.012, 0.015, 0.016, 0.02);
  nlohmann::json s = nlohmann::json::parse(R"({
    "arrivals": "poisson at 100 requests/s", "orchestration": "none", "dispatch_latency_s": 0.0,
    "per_item_overhead_s": 0.0, "sent": 1200, "answered": 1100, "dropped": 100, "drop_rate": 0.0833,
    "warmup_s": 2.0, "window_s": 1.5, "throughput_items_per_s": 95.5, "bottleneck": "llama"
  })");
  s["latency"] = latency(1.6, 3.1, 4.2, 6.5);
  s["latency_quantiles_s"] = quantiles(0.6, 9.0);
  s["latency_target_s"] = 2.0;
  s["within_target"] = 0.6;
  s["within_target_items_per_s"] = 57.3;
  s["stages"] = {cpu, llm_stage};
  return s;
}

/** report.json of a serving run: the core's writer for the rest, the section above as `serving`. */
QByteArray serving_report() {
  partsim::ReportDocument doc = samples::cluster_of(1);
  doc.strategy = "serving pipeline";
  partsim::ReportSummary& summary = doc.summary.emplace();
  summary.gpus = 8;
  summary.makespan = 3.5;
  summary.throughput = 95.5;
  nlohmann::json j = to_json(doc);
  j["serving"] = serving_section();
  return QByteArray::fromStdString(j.dump(2));
}
} // namespace

class ServingTests : public QObject {
  Q_OBJECT

 private slots:
  void report_reads_the_serving_section() {
    QString error;
    const auto r = parse_report(serving_report(), &error);
    QVERIFY2(r.has_value(), qPrintable(error));
    QVERIFY(r->serving.has_value());
    const ReportServing& s = *r->serving;
    QCOMPARE(QString::fromStdString(s.arrivals), QStringLiteral("poisson at 100 requests/s"));
    QCOMPARE(s.sent, std::uint64_t(1200));
    QCOMPARE(s.dropped, std::uint64_t(100));
    QCOMPARE(s.throughput, 95.5);
    QCOMPARE(QString::fromStdString(s.bottleneck), QStringLiteral("llama"));
    QCOMPARE(bottleneck_index(s), 1);
    QCOMPARE(s.latency.p50, 1.6);
    QCOMPARE(s.latency.p99, 6.5);
    QCOMPARE(s.stages.size(), std::size_t(2));

    const ReportServingStage& cpu = s.stages[0];
    QCOMPARE(QString::fromStdString(cpu.name), QStringLiteral("tokenise"));
    QCOMPARE(QString::fromStdString(std::string(enum_name(cpu.device))), QStringLiteral("cpu"));
    QCOMPARE(cpu.replicas, std::int64_t(8));
    QCOMPARE(cpu.utilisation, 0.25);
    QCOMPARE(cpu.mean_queue, 0.5);
    QCOMPARE(cpu.latency.p90, 0.003);
    QCOMPARE(cpu.latency.p95, 0.004);
    QCOMPARE(cpu.over_time.begin, 2.0);
    QCOMPARE(cpu.over_time.bin, 0.5);
    QCOMPARE(cpu.over_time.queue_length, (std::vector<double>{0.0, 1.0, 0.5}));
    QCOMPARE(cpu.over_time.utilisation, (std::vector<double>{0.2, 0.3, 0.25}));
    QVERIFY(!cpu.llm.has_value());

    const ReportServingStage& llm = s.stages[1];
    QVERIFY(llm.llm.has_value());
    QCOMPARE(QString::fromStdString(llm.llm->model), QStringLiteral("llama3-8b"));
    QCOMPARE(llm.llm->ttft.p50, 0.04);
    QCOMPARE(llm.llm->ttft.p99, 0.12);
    QCOMPARE(llm.llm->tpot.p95, 0.016);
    QCOMPARE(llm.llm->ttft_target.value_or(0.0), 0.5);
    QVERIFY(!llm.llm->tpot_target.has_value());
    QCOMPARE(llm.llm->goodput.value_or(0.0), 0.875);
    QCOMPARE(llm.llm->kv_peak_occupancy, 0.3);
    QCOMPARE(llm.llm->preemptions, std::uint64_t(3));

    // A training report has no serving section.
    const auto training = parse_report(samples::kReport);
    QVERIFY(training.has_value());
    QVERIFY(!training->serving.has_value());
    QVERIFY(!training->figure("serving/throughput_items_per_s").has_value());
  }

  void summary_shows_throughput_and_latency_first() {
    const auto r = parse_report(serving_report());
    QVERIFY(r.has_value());
    QCOMPARE(r->figure("serving/throughput_items_per_s").value_or(0.0), 95.5);
    QCOMPARE(r->figure("serving/latency_p99_s").value_or(0.0), 6.5);
    QCOMPARE(r->figure("serving/llm/llama/ttft_p99_s").value_or(0.0), 0.12);
    QCOMPARE(r->figure("serving/llm/llama/goodput").value_or(0.0), 0.875);
    QCOMPARE(figure_label("serving/latency_p99_s"), QStringLiteral("End-to-end latency p99"));
    QCOMPARE(figure_label("serving/llm/llama/ttft_p99_s"), QStringLiteral("TTFT p99 (llama)"));
    QCOMPARE(format_figure("serving/llm/llama/tpot_p99_s", 0.02), QStringLiteral("20 ms"));
    QCOMPARE(format_figure("serving/llm/llama/goodput", 0.875), QStringLiteral("87.5%"));
    QCOMPARE(format_figure("serving/drop_rate", 0.0833), QStringLiteral("8.3%"));
    SummaryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_current(r);
    QCOMPARE(model.row_of("serving/throughput_items_per_s"), 0);
    QCOMPARE(model.row_of("serving/latency_p99_s"), 2);
    QVERIFY(model.row_of("serving/llm/llama/tpot_p99_s") < model.row_of("makespan_s"));
    // Training-only figures (zero by construction for a serving run) are not shown.
    QVERIFY(r->figure("makespan_s").has_value());
    QVERIFY(!r->figure("speedup").has_value());
    QVERIFY(!r->figure("parallel_efficiency").has_value());
    QVERIFY(!r->figure("karp_flatt_serial_fraction").has_value());
    QCOMPARE(model.index(2, SummaryModel::Current).data().toString(), QStringLiteral("6.5 s"));
  }

  void serving_view_draws_the_report_numbers() {
    const auto r = parse_report(serving_report());
    QVERIFY(r.has_value());
    ServingView view;
    view.set_report(r);
    // Latency: p50..p99 per stage and end to end; the LLM stage's 6.5 s tail keeps the unit at ms (under 10 s).
    QVERIFY(view.latency_bars() != nullptr);
    QCOMPARE(view.latency_scale(), 1e3);
    const QList<QBarSet*> sets = view.latency_bars()->barSets();
    QCOMPARE(sets.size(), 4);
    QCOMPARE(sets[0]->label(), QStringLiteral("p50"));
    QCOMPARE(sets[3]->label(), QStringLiteral("p99"));
    QCOMPARE(sets[0]->count(), 3); // tokenise, llama, end to end
    QCOMPARE(sets[0]->at(0), 2.0);
    QCOMPARE(sets[1]->at(0), 3.0);
    QCOMPARE(sets[3]->at(1), 6000.0);
    QCOMPARE(sets[3]->at(2), 6500.0);
    // TTFT and TPOT of the LLM stage.
    QVERIFY(view.llm_bars() != nullptr);
    QVERIFY(!view.llm_view()->isHidden());
    const QList<QBarSet*> llm = view.llm_bars()->barSets();
    QCOMPARE(llm[0]->count(), 2);
    QCOMPARE(llm[0]->at(0), 40.0); // TTFT p50, ms
    QCOMPARE(llm[3]->at(1), 20.0); // TPOT p99, ms
    // Over time: a queue and a utilisation line per stage, at the bins' middles from the warm-up's end.
    QCOMPARE(view.queue_series().size(), std::size_t(2));
    QCOMPARE(view.utilisation_series().size(), std::size_t(2));
    const QLineSeries* queue = view.queue_series()[1];
    QCOMPARE(queue->count(), 3);
    QCOMPARE(queue->at(0), QPointF(0.25, 2.0));
    QCOMPARE(queue->at(2), QPointF(1.25, 12.0));
    QCOMPARE(view.utilisation_series()[0]->at(1), QPointF(0.75, 30.0));
    QVERIFY2(view.over_time_title().contains(QStringLiteral("bottleneck is llama (90.0% busy)")),
             qPrintable(view.over_time_title()));
    QVERIFY2(view.caption().contains(QStringLiteral("TTFT p99 120 ms (target 500 ms)")), qPrintable(view.caption()));
    QVERIFY2(view.caption().contains(QStringLiteral("goodput 87.5%")), qPrintable(view.caption()));
    // The CDFs: one per stage and end to end, 101 points each (x in ms, y in %), and the target's vertical line.
    QCOMPARE(view.cdf_series().size(), std::size_t(3));
    for (const QLineSeries* line : view.cdf_series()) QCOMPARE(line->count(), 101);
    QCOMPARE(view.cdf_series()[0]->name(), QStringLiteral("tokenise"));
    QCOMPARE(view.cdf_series()[2]->name(), QStringLiteral("end to end"));
    QCOMPARE(view.cdf_series()[0]->at(0), QPointF(1.0, 0.0));
    QCOMPARE(view.cdf_series()[2]->at(50), QPointF(4800.0, 50.0));
    QCOMPARE(view.cdf_series()[2]->at(100), QPointF(9000.0, 100.0));
    QVERIFY(view.target_line() != nullptr);
    QCOMPARE(view.target_line()->count(), 2);
    QCOMPARE(view.target_line()->at(0), QPointF(2000.0, 0.0));
    QCOMPARE(view.target_line()->at(1), QPointF(2000.0, 100.0));
    QVERIFY2(view.target_line()->name().contains(QStringLiteral("60.0% within")),
             qPrintable(view.target_line()->name()));
    QVERIFY2(view.caption().contains(QStringLiteral("60.0% within the")), qPrintable(view.caption()));
    QCOMPARE(r->figure("serving/within_target").value_or(0.0), 0.6);

    // A training run: nothing drawn, the LLM chart hidden.
    view.set_report(parse_report(samples::kReport));
    QVERIFY(view.latency_bars() == nullptr);
    QVERIFY(view.llm_bars() == nullptr);
    QVERIFY(view.cdf_series().empty());
    QVERIFY(view.target_line() == nullptr);
    QVERIFY(view.queue_series().empty());
    QVERIFY(view.llm_view()->isHidden());
  }
};

QTEST_MAIN(ServingTests)
#include "serving_tests.moc"
