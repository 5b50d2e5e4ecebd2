// partsim-gui model tests: report/trace/sweep parsing, the item models (QAbstractItemModelTester), the scenario
// document and form, and the charts fed from snapshots. No child process.
#include "charts/expert_load_chart.hpp"
#include "charts/imbalance_chart.hpp"
#include "charts/overhead_chart.hpp"
#include "charts/search_view.hpp"
#include "charts/speedup_chart.hpp"
#include "charts/timeline_view.hpp"
#include "form/field_editors.hpp"
#include "form/scenario_form.hpp"
#include "models/collectives_model.hpp"
#include "models/rank_model.hpp"
#include "models/search_model.hpp"
#include "models/summary_model.hpp"
#include "models/sweep_model.hpp"
#include "partsim/input/data_dir.hpp"
#include "run/error_line.hpp"
#include "run/validator.hpp"
#include "run_report.hpp"
#include "sample_reports.hpp"
#include "scenario_document.hpp"

#include "partsim/input/json_reader.hpp"
#include "partsim/report/report_writers.hpp"
#include "search_result.hpp"
#include "sweep_result.hpp"
#include "trace.hpp"

#include <QAbstractItemModelTester>
#include <QBarSeries>
#include <QBarSet>
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QDoubleSpinBox>
#include <QFile>
#include <QGroupBox>
#include <QHorizontalPercentBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QTableView>
#include <QtTest>

#include <cmath>
#include <optional>

using namespace partsim::gui;

namespace {
/** tests/data/search.json, a canned `partsim search --json` (schema partsim.search version 2), made with
 *   partsim search scenarios/llama3-70b-3d-64xh100.json --vary /cluster/nodes=8,16 --vary /strategy/tensor=2,4,8
 *       --vary /strategy/pipeline=4,8 --refine 2 --rank-by time_to_train --tokens 1e12 --pareto cost_to_train
 * 12 points: 5 pruned (out of memory), 7 simulated, points 8 and 9 refined; ranking 8, 9, 10, 11, 3, 4, 5; the Pareto
 * front of time against cost (and against energy, with --pareto energy_to_train) is points 3 and 8. Given the version
 * of this partsim (the reader takes only its own). */
QByteArray canned_search() {
  QFile file(QStringLiteral(PARTSIM_GUI_TEST_DATA "/search.json"));
  if (!file.open(QIODevice::ReadOnly)) qFatal("cannot read %s", qPrintable(file.fileName()));
  nlohmann::json j = nlohmann::json::parse(file.readAll().toStdString());
  j["partsim_version"] = partsim::partsim_version();
  return QByteArray::fromStdString(j.dump(2));
}

/** The point index of each row of a sorted proxy, top to bottom. */
std::vector<qulonglong> points_in_order(const SearchSortProxy& proxy) {
  std::vector<qulonglong> out;
  for (int r = 0; r < proxy.rowCount(); ++r)
    out.push_back(proxy.index(r, SearchModel::Point).data(Qt::UserRole).toULongLong());
  return out;
}
} // namespace

class ModelTests : public QObject {
  Q_OBJECT

 private slots:
  void report_reads_todays_schema() {
    QString error;
    const auto r = parse_report(samples::kReport, &error);
    QVERIFY2(r.has_value(), qPrintable(error));
    QCOMPARE(r->ranks.size(), std::size_t(3));
    QCOMPARE(r->makespan(), 4.0);
    QCOMPARE(r->figure("speedup").value(), 2.0);
    QVERIFY(!r->figure("amdahl_limit").has_value()); // null: not shown
    QCOMPARE(r->slowest_rank(), 0);
    QCOMPARE(r->ranks[1].idle(), 2.4);
    double total = 0;
    for (const TimeShare& s : r->time_shares()) total += s.share;
    QVERIFY(std::fabs(total - 1.0) < 1e-9);
    QVERIFY(r->warnings.isEmpty());
  }

  void report_reads_training_figures() {
    const auto r = parse_report(samples::kFutureReport);
    QVERIFY(r.has_value());
    QCOMPARE(r->ranks[1].wait, 0.0);
    QCOMPARE(r->ranks[0].overlapped.value(), 0.5);
    QVERIFY(r->has_overlap());
    QCOMPARE(r->overlapped_total(), 0.7);
    QCOMPARE(r->figure("mfu").value(), 0.42);
    QCOMPARE(r->figure("amdahl_limit").value(), 4.0);
    QCOMPARE(r->figure("memory_per_gpu/total_bytes").value(), 8.1e10);
    QCOMPARE(r->figure("memory_per_gpu/model_states_bytes").value(), 7e10);
    QVERIFY(!r->figure("memory_per_gpu/fits").has_value()); // not a number
    QCOMPARE(r->figure("layer_ops/simulated/forward_s").value(), 0.007);
    QCOMPARE(r->figure("layer_ops/simulated/backward_s").value(), 0.012);
    QCOMPARE(format_figure("layer_ops/simulated/backward_s", 0.012), QStringLiteral("12 ms"));
    QCOMPARE(figure_label("layer_ops/simulated/forward_s"), QStringLiteral("One layer's forward pass (simulated)"));
    QCOMPARE(r->collectives.size(), std::size_t(1));
    QCOMPARE(r->collectives[0].algorithm, QStringLiteral("ring"));
    QCOMPARE(r->collectives[0].bus_bandwidth.value(), 2e10);
    // one from memory_per_gpu/fits, one from the starved partitions
    QCOMPARE(r->warnings.size(), 2);
    QVERIFY(r->warnings.contains(QStringLiteral("2 partition(s) starved: fewer than 10 \"fraud\" samples")));
    QStringList kinds;
    double total = 0;
    for (const TimeShare& s : r->time_shares()) {
      kinds << s.kind;
      total += s.share;
    }
    QVERIFY(kinds.contains(QStringLiteral("exposed communication")));
    QVERIFY(std::fabs(total - 1.0) < 1e-9); // overlapped communication is hidden, not a share
  }

  void report_is_read_strictly() {
    QString error;
    QVERIFY(!parse_report("not json", &error).has_value());
    QCOMPARE(error, QStringLiteral("the report is not JSON"));
    QVERIFY(!parse_report("{\"summary\": 3}", &error).has_value());
    QVERIFY2(error.contains(QStringLiteral("/schema")), qPrintable(error));
    nlohmann::json wrong = nlohmann::json::parse(samples::kReport.toStdString());
    wrong["summary"]["makespan_s"] = "4 s";
    QVERIFY(!parse_report(QByteArray::fromStdString(wrong.dump()), &error).has_value());
    QVERIFY2(error.contains(QStringLiteral("/summary/makespan_s")), qPrintable(error));
  }

  void out_of_memory_reports_have_no_summary() {
    const auto r = parse_report(samples::kOutOfMemoryReport);
    QVERIFY(r.has_value());
    QCOMPARE(r->verdict, QStringLiteral("out_of_memory"));
    QVERIFY(r->empty());
    QVERIFY(!r->figure("makespan_s").has_value());
    QCOMPARE(r->figure("memory_per_gpu/capacity_bytes").value(), 8e10);
    QCOMPARE(r->warnings.size(), 1);
    QVERIFY(r->warnings[0].startsWith(QStringLiteral("out of memory: 120 GB needed per GPU, 80 GB available")));
    SummaryModel summary;
    QAbstractItemModelTester tester(&summary, QAbstractItemModelTester::FailureReportingMode::QtTest);
    summary.set_current(r);
    QCOMPARE(summary.key(0), std::string("memory_per_gpu/total_bytes"));
    ImbalanceChart chart;
    chart.set_report(r);
    QVERIFY(chart.bars() == nullptr); // nothing simulated, nothing drawn
  }

  void collectives_model_passes_the_tester() {
    CollectivesModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_collectives(parse_report(samples::kFutureReport)->collectives);
    QCOMPARE(model.rowCount(), 1);
    QCOMPARE(model.index(0, CollectivesModel::Operation).data().toString(), QStringLiteral("all_reduce"));
    QCOMPARE(model.index(0, CollectivesModel::MeanTime).data(Qt::UserRole).toDouble(), 0.07);
    model.set_collectives({});
    QCOMPARE(model.rowCount(), 0);
  }

  void rank_model_passes_the_tester() {
    RankModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_report(*parse_report(samples::kReport));
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.columnCount(), int(RankModel::NUM_COLUMNS));
    QCOMPARE(model.index(0, RankModel::Compute).data(Qt::UserRole).toDouble(), 3.0);
    // Every report has overlapped_communication_s (0 without a communication stream).
    QCOMPARE(model.index(0, RankModel::OverlappedCommunication).data(Qt::UserRole).toDouble(), 0.0);
    model.set_report(*parse_report(samples::kFutureReport));
    QCOMPARE(model.rowCount(), 2);
    QCOMPARE(model.index(0, RankModel::OverlappedCommunication).data(Qt::UserRole).toDouble(), 0.5);
    model.set_report(RunReport{});
    QCOMPARE(model.rowCount(), 0);
  }

  void summary_model_passes_the_tester_and_shows_deltas() {
    SummaryModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_current(parse_report(samples::kReport));
    QCOMPARE(model.key(0), std::string("makespan_s")); // headline first
    model.set_pinned(parse_report(samples::kFutureReport));
    // The pinned training run's model states (what stays between iterations) follow their three parts.
    QCOMPARE(model.row_of("memory_per_gpu/model_states_bytes"),
             model.row_of("memory_per_gpu/optimizer_states_bytes") + 1);
    const int row = model.row_of("makespan_s");
    QCOMPARE(model.index(row, SummaryModel::Current).data(Qt::UserRole).toDouble(), 4.0);
    QCOMPARE(model.index(row, SummaryModel::Pinned).data(Qt::UserRole).toDouble(), 2.0);
    QCOMPARE(model.index(row, SummaryModel::Delta).data(Qt::UserRole).toDouble(), 2.0);
    // A figure only the pinned run has: a row, no current value, no delta.
    const int mfu = model.row_of("mfu");
    QVERIFY(mfu >= 0);
    QVERIFY(!model.index(mfu, SummaryModel::Current).data(Qt::UserRole).isValid());
    QVERIFY(!model.index(mfu, SummaryModel::Delta).data(Qt::UserRole).isValid());
    QVERIFY(model.row_of("model_flops_per_iteration") > model.row_of("makespan_s"));
    model.set_current(std::nullopt);
    model.set_pinned(std::nullopt);
    QCOMPARE(model.rowCount(), 0);
  }

  void summary_shows_goodput_and_straggler_figures() {
    // A run replayed over failures and checkpoints, with stragglers: goodput and the iteration times are figures of
    // the summary, labelled, formatted and near the top.
    partsim::ReportDocument doc = samples::three_ranks();
    partsim::ReportReliability& rel = doc.reliability.emplace();
    rel.goodput = 0.912;
    rel.time_to_finish_days = 54.2;
    rel.failures = 419;
    rel.lost_work = 3600.0;
    rel.interval = 1800.0;
    rel.young_daly_interval = 1500.0;
    partsim::ReportStragglers& st = doc.stragglers.emplace();
    st.mean_iteration = 2.326;
    st.p99_iteration = 2.4;
    st.nominal_iteration = 1.689;
    st.slowed_iteration_fraction = 0.92;
    const auto report = parse_report(samples::report_text(doc));
    QVERIFY(report.has_value());
    QCOMPARE(report->figure("reliability/goodput").value_or(0.0), 0.912);
    QCOMPARE(report->figure("reliability/failures").value_or(0.0), 419.0);
    QCOMPARE(report->figure("stragglers/mean_iteration_s").value_or(0.0), 2.326);
    QCOMPARE(format_figure("reliability/goodput", 0.912), QStringLiteral("91.2%"));
    QCOMPARE(figure_label("reliability/goodput"), QStringLiteral("Goodput (useful share of the run)"));
    SummaryModel model;
    model.set_current(report);
    QVERIFY(model.row_of("reliability/goodput") >= 0);
    QVERIFY(model.row_of("reliability/goodput") < model.row_of("mfu") || model.row_of("mfu") < 0);
    QVERIFY(model.row_of("reliability/goodput") < model.row_of("reliability/lost_work_s"));
    QVERIFY(model.row_of("stragglers/mean_iteration_s") >= 0);
    // Without the sections, no such rows.
    model.set_current(parse_report(samples::kReport));
    QCOMPARE(model.row_of("reliability/goodput"), -1);
  }

  void expert_load_chart_holds_the_report_numbers() {
    // Two layers of an expert group: the chart draws the busiest and the mean load per layer and names the worst.
    partsim::ReportDocument doc = samples::three_ranks();
    partsim::ReportExpertRouting& routing = doc.expert_routing.emplace();
    routing.layers.push_back({0, 1.25, 1.0, 0.0, {1.25, 0.75}});
    routing.layers.push_back({1, 2.5, 0.9, 0.1, {2.5, 0.2}});
    const auto report = parse_report(samples::report_text(doc));
    QVERIFY(report.has_value());
    QCOMPARE(report->expert_layers.size(), std::size_t(2));
    ExpertLoadChart chart;
    chart.set_report(report);
    QVERIFY(chart.bars() != nullptr);
    const QList<QBarSet*> sets = chart.bars()->barSets();
    QCOMPARE(sets.size(), 2);
    QCOMPARE(sets[0]->at(0), 1.25);
    QCOMPARE(sets[0]->at(1), 2.5);
    QCOMPARE(sets[1]->at(1), 0.9);
    QVERIFY2(chart.caption().contains(QStringLiteral("2.500x in layer 1")), qPrintable(chart.caption()));
    QVERIFY2(chart.caption().contains(QStringLiteral("5% of the copies dropped")), qPrintable(chart.caption()));
    // A run without experts: no bars.
    chart.set_report(parse_report(samples::kReport));
    QVERIFY(chart.bars() == nullptr);
  }

  void sweep_csv_and_model() {
    QString error;
    const auto sweep = parse_sweep_csv(samples::kSweepCsv, &error);
    QVERIFY2(sweep.has_value(), qPrintable(error));
    QCOMPARE(sweep->axis, QStringLiteral("/cluster/nodes"));
    QCOMPARE(sweep->rows.size(), std::size_t(3));
    QCOMPARE(sweep->rows[0].gpus, 1); // sorted by GPU count
    QCOMPARE(sweep->rows[2].label, QStringLiteral("16"));
    QCOMPARE(sweep->rows[1].karp_flatt, 0.0833);
    SweepModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_result(*sweep);
    QCOMPARE(model.rowCount(), 3);
    QCOMPARE(model.index(2, SweepModel::Speedup).data(Qt::UserRole).toDouble(), 8.0);
    QVERIFY(!parse_sweep_csv("point,gpus\n").has_value());
  }

  void search_json_reads_into_candidates() {
    QString error;
    const auto outcome = parse_search_json(canned_search(), &error);
    QVERIFY2(outcome.has_value(), qPrintable(error));
    QCOMPARE(outcome->candidates.size(), std::size_t(12));
    QCOMPARE(outcome->ranking, (std::vector<std::size_t>{8, 9, 10, 11, 3, 4, 5}));
    QCOMPARE(outcome->rank_title, QStringLiteral("time_to_train (s)"));
    const SearchCandidate& best = outcome->candidates[8];
    QCOMPARE(best.rank, 1);
    QCOMPARE(best.settings, QStringLiteral("/cluster/nodes=16, /strategy/tensor=4, /strategy/pipeline=4"));
    QCOMPARE(best.status, QStringLiteral("simulated"));
    QCOMPARE(best.fidelity, QStringLiteral("faithful"));
    QCOMPARE(best.gpus, std::int64_t(128));
    QCOMPARE(*best.rank_value, 7272096.398675363);
    QCOMPARE(*best.cost, 0.6464085687711433 * 1e12 / 1e6);     // cost per million tokens x the budget
    QCOMPARE(*best.energy, 1.3129491841854688 * 1e12 / 3.6e9); // J per token x the budget, in MWh
    QCOMPARE(outcome->candidates[3].fidelity, QStringLiteral("fast"));
    const SearchCandidate& pruned = outcome->candidates[0];
    QCOMPARE(pruned.status, QStringLiteral("out_of_memory"));
    QCOMPARE(pruned.rank, 0);
    QVERIFY(!pruned.rank_value.has_value());
    QVERIFY(pruned.memory_gib.value() > 80.0);
    // The Pareto front of time against cost is the CLI's (--pareto cost_to_train); against energy too (points 3, 8).
    const nlohmann::json j = nlohmann::json::parse(canned_search().toStdString());
    QCOMPARE(search_front(*outcome, SearchSecondFigure::Cost), j["pareto_front"].get<std::vector<std::size_t>>());
    QCOMPARE(search_front(*outcome, SearchSecondFigure::Energy), (std::vector<std::size_t>{3, 8}));
    // Not partsim's search: one line naming the pointer.
    nlohmann::json bad = j;
    bad["counts"]["points"] = 13;
    QVERIFY(!parse_search_json(QByteArray::fromStdString(bad.dump()), &error).has_value());
    QVERIFY2(error.contains(QStringLiteral("/counts/points")), qPrintable(error));
    QVERIFY(!parse_search_json("{", &error).has_value());
  }

  void search_model_rows_and_sort_order() {
    const auto outcome = parse_search_json(canned_search());
    QVERIFY(outcome.has_value());
    SearchModel model;
    QAbstractItemModelTester tester(&model, QAbstractItemModelTester::FailureReportingMode::QtTest);
    model.set_outcome(*outcome);
    QCOMPARE(model.rowCount(), 12);
    QCOMPARE(model.columnCount(), int(SearchModel::NUM_COLUMNS));
    QCOMPARE(model.index(8, SearchModel::Rank).data().toString(), QStringLiteral("1"));
    QCOMPARE(model.index(0, SearchModel::Rank).data().toString(), QStringLiteral("-"));
    QCOMPARE(model.index(9, SearchModel::Gpus).data(Qt::UserRole).toLongLong(), 128);
    QCOMPARE(model.index(3, SearchModel::Status).data().toString(), QStringLiteral("simulated"));
    QCOMPARE(model.headerData(SearchModel::RankValue, Qt::Horizontal).toString(), QStringLiteral("time_to_train (s)"));
    SearchSortProxy proxy;
    proxy.setSourceModel(&model);
    proxy.sort(SearchModel::Rank, Qt::AscendingOrder);
    std::vector<qulonglong> order = points_in_order(proxy);
    order.resize(7); // the ranked points first, in the search's ranking; the unranked ones after
    QCOMPARE(order, (std::vector<qulonglong>{8, 9, 10, 11, 3, 4, 5}));
    QCOMPARE(proxy.index(7, SearchModel::Rank).data().toString(), QStringLiteral("-"));
    proxy.sort(SearchModel::Cost, Qt::AscendingOrder);
    order = points_in_order(proxy);
    order.resize(7);
    QCOMPARE(order, (std::vector<qulonglong>{3, 8, 9, 4, 10, 5, 11}));
    proxy.sort(SearchModel::RankValue, Qt::DescendingOrder); // the slowest first, the unranked still last
    QCOMPARE(proxy.index(0, SearchModel::Point).data(Qt::UserRole).toULongLong(), qulonglong(5));
    QCOMPARE(proxy.index(6, SearchModel::Point).data(Qt::UserRole).toULongLong(), qulonglong(8));
    QVERIFY(!proxy.index(7, SearchModel::RankValue).data(Qt::UserRole).isValid());
    proxy.sort(SearchModel::Rank, Qt::DescendingOrder);
    order = points_in_order(proxy);
    order.resize(7);
    QCOMPARE(order, (std::vector<qulonglong>{5, 4, 3, 11, 10, 9, 8}));
    proxy.sort(SearchModel::Point, Qt::DescendingOrder);
    QCOMPARE(proxy.index(0, SearchModel::Point).data(Qt::UserRole).toULongLong(), qulonglong(11));
  }

  void search_view_draws_the_front_and_loads_a_candidate() {
    SearchView view;
    view.resize(1000, 800);
    view.set_outcome(parse_search_json(canned_search()));
    QCOMPARE(view.candidates_series()->count(), 7);
    QCOMPARE(view.plotted(), (std::vector<std::size_t>{8, 9, 10, 11, 3, 4, 5}));
    const auto& c = view.outcome()->candidates;
    // The front as a line, by the ranking metric: point 8 (the fastest), then point 3 (the cheapest).
    QCOMPARE(view.front_series()->count(), 2);
    QCOMPARE(view.front_series()->at(0), QPointF(*c[8].rank_value, *c[8].cost));
    QCOMPARE(view.front_series()->at(1), QPointF(*c[3].rank_value, *c[3].cost));
    view.set_second_figure(SearchSecondFigure::Energy);
    QCOMPARE(view.front_series()->at(1), QPointF(*c[3].rank_value, *c[3].energy));
    QCOMPARE(view.candidates_series()->at(0), QPointF(*c[8].rank_value, *c[8].energy));
    QSignalSpy chosen(&view, &SearchView::candidate_chosen);
    emit view.candidates_series()->clicked(view.candidates_series()->at(4)); // point 3
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.takeFirst().at(0).value<std::size_t>(), std::size_t(3));
    QCOMPARE(view.selected_series()->count(), 1);
    QCOMPARE(view.selected_series()->at(0), view.candidates_series()->at(4));
    QCOMPARE(view.proxy()->mapToSource(view.table()->currentIndex()).row(), 3);
    // A click on a table row.
    const QModelIndex row = view.proxy()->mapFromSource(view.model()->index(9, SearchModel::Settings));
    emit view.table()->clicked(row);
    QCOMPARE(chosen.count(), 1);
    QCOMPARE(chosen.takeFirst().at(0).value<std::size_t>(), std::size_t(9));
    // Loading it into the scenario: its axis values, and /strategy/data derived (taken out) as the search did.
    const nlohmann::json& scenario = view.outcome()->result.scenario_document;
    QVERIFY(scenario.contains(nlohmann::json::json_pointer("/strategy/data")));
    nlohmann::json document = scenario;
    partsim::apply_overrides(document, candidate_overrides(*view.outcome(), 9, scenario));
    QCOMPARE(document["cluster"]["nodes"].get<int>(), 16);
    QCOMPARE(document["strategy"]["tensor"].get<int>(), 4);
    QCOMPARE(document["strategy"]["pipeline"].get<int>(), 8);
    QVERIFY(!document["strategy"].contains("data"));
    view.set_outcome(std::nullopt);
    QVERIFY(view.candidates_series() == nullptr);
  }

  void trace_reads_tracks_in_rank_order() {
    const auto trace = parse_trace(samples::kTrace);
    QVERIFY(trace.has_value());
    QCOMPARE(trace->tracks.size(), std::size_t(3));
    QCOMPARE(trace->tracks[0].name, QStringLiteral("rank 0 (gpu 0)"));
    QCOMPARE(trace->tracks[2].name, QStringLiteral("coordinator"));
    QCOMPARE(trace->end, 4.0);
    QCOMPARE(trace->interval_count(), std::size_t(5));
    QCOMPARE(trace->kinds[trace->tracks[1].intervals[1].kind], QStringLiteral("wait"));
  }

  void overrides_express_edits_for_the_cli() {
    const nlohmann::json a = nlohmann::json::parse(R"({"cluster": {"nodes": 2, "gpu": "x"},
        "strategy": {"shares": {"skewed": 0.3}, "partitions": 4}})");
    nlohmann::json b = a;
    b["cluster"]["nodes"] = 8;
    b["cluster"]["network"] = {{"bandwidth", "25GBps"}};
    b["strategy"]["shares"] = "balanced";
    auto o = diff_overrides(a, b);
    QCOMPARE(o.size(), std::size_t(3));
    b = a;
    b["strategy"].erase("partitions"); // a removed key: the parent object is replaced
    o = diff_overrides(a, b);
    QCOMPARE(o.size(), std::size_t(1));
    QCOMPARE(o[0].pointer, std::string("/strategy"));
    QCOMPARE(o[0].value, b["strategy"]);
    QCOMPARE(partsim::escape_pointer_token("a/b~c"), std::string("a~1b~0c"));
  }

  void error_lines_name_their_pointer() {
    const ErrorLine e = parse_error_line(
        "\rpartsim: simulating  10.0%\npartsim: error: scenarios/x.json: /cluster/nodes: expected an integer\n");
    QCOMPARE(e.pointer, QStringLiteral("/cluster/nodes"));
    QCOMPARE(e.message, QStringLiteral("scenarios/x.json: /cluster/nodes: expected an integer"));
    QCOMPARE(parse_error_line("partsim: error: --set: expected PATH=VALUE").pointer, QString());
  }

  void validation_gives_the_cli_message() {
    ScenarioDocument doc;
    Validation v = validate_scenario(doc.document(), doc.source());
    QVERIFY2(v.ok, qPrintable(v.error.message));
    QVERIFY(v.planned_events > 0);
    QCOMPARE(v.gpus, 10);
    doc.set_value("/cluster/nodes", 0);
    v = validate_scenario(doc.document(), doc.source());
    QVERIFY(!v.ok);
    QCOMPARE(v.error.pointer, QStringLiteral("/cluster/nodes"));
    QVERIFY2(v.error.message.startsWith(QStringLiteral("<built-in default>: /cluster/nodes: ")),
             qPrintable(v.error.message));
  }

  void form_edits_the_document_and_shows_errors_at_fields() {
    ScenarioDocument doc;
    ScenarioForm form(&doc, QString::fromStdString(partsim::data_dir().string()));
    auto* nodes = qobject_cast<IntegerEditor*>(form.editor("/cluster/nodes"));
    QVERIFY(nodes != nullptr);
    QCOMPARE(nodes->spin_box()->value(), 10);
    QVERIFY(nodes->slider() != nullptr);
    nodes->spin_box()->setValue(4);
    QCOMPARE(doc.value("/cluster/nodes")->get<int>(), 4);
    QCOMPARE(doc.overrides().size(), std::size_t(1));
    // Programmatic edits show in the form; they do not echo back as edits.
    doc.set_value("/cluster/nodes", 6);
    QCOMPARE(nodes->spin_box()->value(), 6);
    // Skew: the shares editor writes {"skewed": S}.
    auto* shares = qobject_cast<SharesEditor*>(form.editor("/strategy/shares"));
    QVERIFY(shares != nullptr);
    shares->skew_box()->setValue(0.5);
    QCOMPARE((*doc.value("/strategy/shares"))["skewed"].get<double>(), 0.5);
    // Quantities keep their unit.
    auto* bandwidth = qobject_cast<QuantityEditor*>(form.editor("/cluster/network/bandwidth"));
    QVERIFY(bandwidth != nullptr);
    QCOMPARE(bandwidth->unit_box()->currentText(), QStringLiteral("GBps"));
    bandwidth->spin_box()->setValue(50);
    QCOMPARE(doc.value("/cluster/network/bandwidth")->get<std::string>(), std::string("50GBps"));
    // An optional field switched off leaves the document.
    QCheckBox* data_type = form.enable_box("/workload/data_type");
    QVERIFY(data_type != nullptr && data_type->isChecked());
    data_type->setChecked(false);
    QVERIFY(doc.value("/workload/data_type") == nullptr);
    // Errors land at the deepest field their pointer names, or at the section.
    form.show_error(parse_error_line("partsim: error: x.json: /cluster/nodes: expected at least 1"));
    QCOMPARE(form.error_at("/cluster/nodes"), QStringLiteral("expected at least 1"));
    form.show_error(parse_error_line("partsim: error: x.json: /cluster/speed_changes/0/node: expected < 10"));
    QVERIFY(form.error_at("/cluster/speed_changes").contains(QStringLiteral("/cluster/speed_changes/0/node")));
    QVERIFY(form.error_at("/cluster/nodes").isEmpty());
    form.show_error(parse_error_line("partsim: error: x.json: /cluster/network: required when nodes > 1"));
    QVERIFY(form.error_at("/cluster").contains(QStringLiteral("required")));
    // Unknown keys become JSON fields.
    nlohmann::json with_new = doc.document();
    with_new["workload"]["future_key"] = {1, 2};
    doc.load_text(QByteArray::fromStdString(with_new.dump()), QStringLiteral("x.json"));
    QVERIFY(qobject_cast<JsonEditor*>(form.editor("/workload/future_key")) != nullptr);
  }

  void form_shows_the_serving_arrivals_for_a_serving_workload() {
    ScenarioDocument doc;
    ScenarioForm form(&doc, QString::fromStdString(partsim::data_dir().string()));
    // The built-in default trains: no arrivals.
    auto* process = qobject_cast<ChoiceEditor*>(form.editor("/workload/arrivals/process"));
    QVERIFY(process != nullptr);
    QVERIFY(process->parentWidget()->isHidden());
    // A serving scenario: its arrivals show, with every process the schema knows.
    const QString path =
        QDir(QString::fromStdString((partsim::data_dir() / "scenarios").string())).filePath("seed-5-llm-trace.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    doc.load_text(file.readAll(), path);
    process = qobject_cast<ChoiceEditor*>(form.editor("/workload/arrivals/process")); // the form is rebuilt
    QVERIFY(process != nullptr);
    QCOMPARE(process->current_value(), nlohmann::json("trace"));
    QVERIFY(!process->parentWidget()->isHidden());
    for (const char* p : {"poisson", "closed", "gamma", "trace"})
      QVERIFY(process->combo_box()->findText(QString::fromLatin1(p)) >= 0);
    QVERIFY(form.editor("/workload/arrivals/trace") != nullptr);
    QVERIFY(form.enable_box("/workload/arrivals/cv") != nullptr &&
            !form.enable_box("/workload/arrivals/cv")->isChecked());
  }

  void form_edits_stragglers_failures_and_checkpoints() {
    ScenarioDocument doc;
    ScenarioForm form(&doc, QString::fromStdString(partsim::data_dir().string()));
    // A model-training scenario (failures and checkpoints apply to model training only).
    const QString path = QDir(QString::fromStdString((partsim::data_dir() / "scenarios").string()))
                             .filePath("llama3-70b-3d-64xh100.json");
    QFile file(path);
    QVERIFY(file.open(QIODevice::ReadOnly));
    doc.load_text(file.readAll(), path);
    // Both sections are optional and off there.
    auto* stragglers = form.findChild<QGroupBox*>(QStringLiteral("/cluster/stragglers"));
    auto* reliability = form.findChild<QGroupBox*>(QStringLiteral("/reliability"));
    QVERIFY(stragglers != nullptr && reliability != nullptr);
    QVERIFY(!stragglers->isChecked() && !reliability->isChecked());
    // Switched on, each writes its default object; the fields then edit nested keys.
    stragglers->setChecked(true);
    QCOMPARE((*doc.value("/cluster/stragglers"))["random"]["probability"].get<double>(), 0.01);
    reliability->setChecked(true);
    auto* gpu_mtbf = qobject_cast<NumberEditor*>(form.editor("/reliability/failures/gpu_mtbf_hours"));
    QVERIFY(gpu_mtbf != nullptr);
    gpu_mtbf->spin_box()->setValue(20000);
    QCOMPARE(doc.value("/reliability/failures/gpu_mtbf_hours")->get<double>(), 20000.0);
    auto* policy = qobject_cast<ChoiceEditor*>(form.editor("/reliability/recovery/policy"));
    QVERIFY(policy != nullptr);
    for (const char* p : {"restart", "spare", "elastic"})
      QVERIFY(policy->combo_box()->findText(QString::fromLatin1(p)) >= 0);
    // The edited scenario is one the core accepts.
    const Validation v = validate_scenario(doc.document(), doc.source());
    QVERIFY2(v.ok, qPrintable(v.error.message));
    // Switched off, the section leaves the document.
    stragglers->setChecked(false);
    QVERIFY(doc.value("/cluster/stragglers") == nullptr);
    // The parameter-server fields belong to that strategy only.
    QVERIFY(form.editor("/strategy/staleness_bound") != nullptr);
    QVERIFY(form.editor("/strategy/staleness_bound")->parentWidget()->isHidden());
  }

  void imbalance_chart_holds_the_report_numbers() {
    const RunReport r = *parse_report(samples::kReport);
    ImbalanceChart chart;
    chart.set_report(r);
    QVERIFY(chart.bars() != nullptr);
    const QList<QBarSet*> sets = chart.bars()->barSets();
    QCOMPARE(sets.size(), 4);
    for (int i = 0; i < 3; ++i) {
      QCOMPARE(sets[0]->at(i), r.ranks[std::size_t(i)].compute);
      QCOMPARE(sets[1]->at(i), r.ranks[std::size_t(i)].communication);
      QCOMPARE(sets[2]->at(i), r.ranks[std::size_t(i)].wait);
      QCOMPARE(sets[3]->at(i), r.ranks[std::size_t(i)].tail_idle);
    }
    chart.set_order(ImbalanceChart::Order::Busiest);
    QCOMPARE(chart.shown_ranks().front(), 0);
    chart.set_pinned(r);
    QVERIFY(chart.pinned_series() != nullptr);
    QCOMPARE(chart.pinned_series()->count(), 3);

    OverheadChart overhead;
    overhead.set_report(r);
    overhead.set_pinned(*parse_report(samples::kFutureReport));
    QVERIFY(overhead.bars() != nullptr);
    QCOMPARE(overhead.bars()->barSets().first()->at(0), 100.0 * r.time_shares()[0].share);
    QCOMPARE(overhead.bars()->barSets().first()->count(), 2); // current and pinned
  }

  void data_loading_is_its_own_share_and_bar() {
    // Rank 1 waits 0.5 s for its data out of its 2.0 s of idle time (workload/data_loading): a share and a bar of
    // its own, still part of idle; a report without it keeps four kinds (the test above).
    partsim::ReportDocument doc = samples::three_ranks();
    doc.ranks[1].data_loading = 0.5;
    doc.ranks[1].tail_idle = 1.5;
    const RunReport r = *parse_report(samples::report_text(doc));
    QCOMPARE(r.ranks[1].data_loading, 0.5);
    QCOMPARE(r.ranks[1].idle(), 2.4);
    QCOMPARE(r.ranks[2].data_loading, 0.0);
    double total = 0;
    std::optional<double> loading;
    for (const TimeShare& s : r.time_shares()) {
      total += s.share;
      if (s.kind == QStringLiteral("data loading")) loading = s.share;
    }
    QVERIFY(std::fabs(total - 1.0) < 1e-9);
    QVERIFY(loading.has_value());
    QCOMPARE(*loading, 0.5 / 12.0);
    ImbalanceChart chart;
    chart.set_report(r);
    const QList<QBarSet*> sets = chart.bars()->barSets();
    QCOMPARE(sets.size(), 5);
    QCOMPARE(sets[3]->label(), QStringLiteral("data loading"));
    QCOMPARE(sets[3]->at(1), 0.5);
    QCOMPARE(sets[4]->at(1), 1.5);
    QVERIFY(ranks_csv(r).split('\n').front().endsWith("data_loading_s"));
    QVERIFY(ranks_csv(r).split('\n')[2].endsWith(",0.5"));
  }

  void speedup_chart_draws_measured_ideal_and_amdahl() {
    SpeedupChart chart;
    chart.set_result(parse_sweep_csv(samples::kSweepCsv));
    QCOMPARE(chart.measured()->count(), 3);
    QCOMPARE(chart.measured()->at(2), QPointF(16, 8));
    QCOMPARE(chart.amdahl()->at(1), QPointF(4, 4));
    QCOMPARE(chart.ideal()->at(1), QPointF(16, 16));
  }

  void timeline_zooms_pans_and_culls() {
    auto trace = std::make_shared<Trace>(*parse_trace(samples::kTrace));
    // One track with 200k tiny intervals: painting must not draw them all.
    TraceTrack busy;
    busy.name = QStringLiteral("busy");
    busy.tid = 99;
    for (int i = 0; i < 200000; ++i) busy.intervals.push_back({i * 2e-5, i * 2e-5 + 1e-5, std::uint8_t(i % 2)});
    trace->tracks.push_back(busy);
    TimelineView view;
    view.resize(900, 300);
    view.set_trace(trace);
    TimelineCanvas* canvas = view.canvas();
    QCOMPARE(canvas->view_begin(), 0.0);
    QCOMPARE(canvas->view_end(), 4.0);
    canvas->zoom(2, -1);
    QCOMPARE(canvas->view_end() - canvas->view_begin(), 2.0);
    canvas->pan(10); // clamped at the end
    QCOMPARE(canvas->view_end(), 4.0);
    canvas->reset_view();
    view.show();
    canvas->grab();
    QVERIFY(canvas->last_painted_rectangles() > 0);
    QVERIFY2(canvas->last_painted_rectangles() < 5000, qPrintable(QString::number(canvas->last_painted_rectangles())));
    // An injected failure: a red line at its time while it is in view, said in the caption.
    QCOMPARE(canvas->last_painted_marks(), 0);
    view.set_failure(FailureMark{1.5, 31.5, QStringLiteral("GPU 0"), {0}});
    canvas->grab();
    QCOMPARE(canvas->last_painted_marks(), 1);
    bool said = false;
    for (const QLabel* label : view.findChildren<QLabel*>())
      said = said || label->text().contains(QStringLiteral("GPU 0 fails at"));
    QVERIFY(said);
    canvas->set_view(2.0, 3.0); // out of view: no line
    canvas->grab();
    QCOMPARE(canvas->last_painted_marks(), 0);
    view.set_failure(std::nullopt);
    canvas->reset_view();
    canvas->grab();
    QCOMPARE(canvas->last_painted_marks(), 0);
  }

  void replay_shows_training_checkpoints_recoveries_and_failures() {
    // reliability_trace.json as partsim writes it: training, checkpoints (one lost), a recovery, and failures as
    // instants on their component's track, over days; the kinds are the replay's, not a rank's.
    const QByteArray text = R"json({"displayTimeUnit":"ms","traceEvents":[
      {"ph":"M","name":"process_name","pid":0,"tid":0,"args":{"name":"the run, replayed"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":0,"args":{"name":"training"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":1,"args":{"name":"checkpoints"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":2,"args":{"name":"recovery"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":3,"args":{"name":"failures: gpu"}},
      {"ph":"M","name":"thread_name","pid":0,"tid":4,"args":{"name":"failures: switch"}},
      {"ph":"X","name":"training","pid":0,"tid":0,"ts":0,"dur":100000000000},
      {"ph":"X","name":"checkpoint","pid":0,"tid":1,"ts":50000000000,"dur":10000000},
      {"ph":"X","name":"checkpoint (lost)","pid":0,"tid":1,"ts":99000000000,"dur":10000000},
      {"ph":"i","s":"t","name":"gpu failure","pid":0,"tid":3,"ts":99005000000,"args":{"rolled_back_to_iteration":9}},
      {"ph":"i","s":"t","name":"gpu failure","pid":0,"tid":3,"ts":30000000000,"args":{"rolled_back_to_iteration":2}},
      {"ph":"X","name":"recovery","pid":0,"tid":2,"ts":99005000000,"dur":3600000000},
      {"ph":"X","name":"training","pid":0,"tid":0,"ts":102605000000,"dur":100000000000}]})json";
    const auto replay = parse_trace(text, nullptr, false);
    QVERIFY(replay.has_value());
    QCOMPARE(replay->kinds, (QStringList{QStringLiteral("training"), QStringLiteral("checkpoint"),
                                         QStringLiteral("checkpoint (lost)"), QStringLiteral("recovery")}));
    QCOMPARE(replay->tracks.size(), std::size_t(5)); // the switch's track is named, though empty
    QCOMPARE(replay->tracks[3].name, QStringLiteral("failures: gpu"));
    QCOMPARE(replay->tracks[3].instants, (std::vector<double>{30000.0, 99005.0})); // sorted, in s
    QCOMPARE(replay->instant_count(), std::size_t(2));
    QCOMPARE(replay->end, 202605.0);
    QCOMPARE(format_duration(202605.0), QStringLiteral("2.345 days"));
    QCOMPARE(format_duration(5400.0), QStringLiteral("5400 s"));
    QCOMPARE(format_duration(36000.0), QStringLiteral("10 h"));
    // The rank kinds stay first in an iteration's trace.
    QCOMPARE(parse_trace(text)->kinds.first(), QStringLiteral("compute"));

    TimelineView view;
    view.resize(900, 300);
    view.set_trace(std::make_shared<const Trace>(*replay));
    view.show();
    TimelineCanvas* canvas = view.canvas();
    canvas->grab();
    QCOMPARE(canvas->last_painted_instants(), 2);
    bool said = false;
    for (const QLabel* label : view.findChildren<QLabel*>())
      said = said || (label->text().contains(QStringLiteral("2 instants")) &&
                      label->text().contains(QStringLiteral("of 2.345 days")));
    QVERIFY(said);
    canvas->set_view(0.0, 50000.0); // the first failure only
    canvas->grab();
    QCOMPARE(canvas->last_painted_instants(), 1);
  }
};

QTEST_MAIN(ModelTests)
#include "model_tests.moc"
