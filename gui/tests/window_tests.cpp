// partsim-gui window tests against a real child partsim (PARTSIM_BIN): open, edit, run, charts against the report,
// invalid edits, cancel, debounced auto re-run, pin and compare, the speedup sweep, export, a responsive loop.
#include "charts/imbalance_chart.hpp"
#include "charts/overhead_chart.hpp"
#include "charts/search_view.hpp"
#include "charts/speedup_chart.hpp"
#include "charts/timeline_view.hpp"
#include "form/field_catalog.hpp"
#include "form/field_editors.hpp"
#include "form/scenario_form.hpp"
#include "main_window.hpp"
#include "models/rank_model.hpp"
#include "models/search_model.hpp"
#include "models/summary_model.hpp"
#include "models/sweep_model.hpp"
#include "scenario_document.hpp"

#include "partsim/input/scenario_schema.hpp"

#include <QBarSet>
#include <QCheckBox>
#include <QComboBox>
#include <QElapsedTimer>
#include <QHorizontalPercentBarSeries>
#include <QLabel>
#include <QLineSeries>
#include <QListWidget>
#include <QScatterSeries>
#include <QSignalSpy>
#include <QSpinBox>
#include <QStackedBarSeries>
#include <QTemporaryDir>
#include <QtTest>

#include <signal.h>

using namespace partsim::gui;

namespace {
const QString kSource = QStringLiteral(PARTSIM_SOURCE_DIR);
QString scenario(const char* name) {
  return kSource + QStringLiteral("/scenarios/") + QLatin1String(name);
}

/** Runs partsim synchronously (test side only) and returns stdout, or fails. */
QByteArray run_cli(const QStringList& args, int expected_exit, QByteArray* err = nullptr) {
  QProcess p;
  p.start(qEnvironmentVariable("PARTSIM_BIN"), args);
  if (!p.waitForFinished(60000)) return {};
  if (err != nullptr) *err = p.readAllStandardError();
  if (p.exitCode() != expected_exit) {
    qWarning() << "partsim" << args << "exited" << p.exitCode();
    return {};
  }
  return p.readAllStandardOutput();
}

/** Waits for the window's next run to end; returns its state. */
RunState wait_run(QSignalSpy& spy, int timeout_ms = 30000) {
  if (spy.isEmpty() && !spy.wait(timeout_ms)) return RunState::Idle;
  return spy.takeFirst().at(0).value<RunState>();
}

/** Measures the longest gap between 5 ms timer ticks while running: how long the event loop was blocked. */
class StallMeter : public QObject {
 public:
  StallMeter() {
    timer_.setInterval(5);
    connect(&timer_, &QTimer::timeout, this, [this] { max_gap_ = std::max(max_gap_, clock_.restart()); });
  }
  void start() {
    clock_.start();
    timer_.start();
  }
  void stop() { timer_.stop(); }
  qint64 max_gap_ms() const { return max_gap_; }

 private:
  QTimer timer_;
  QElapsedTimer clock_;
  qint64 max_gap_ = 0;
};
} // namespace

class WindowTests : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("partsim-tests"));
    QCoreApplication::setApplicationName(QStringLiteral("partsim-gui-tests"));
    QSettings().clear();
    qRegisterMetaType<RunState>();
    QVERIFY2(QFileInfo(qEnvironmentVariable("PARTSIM_BIN")).isExecutable(), "PARTSIM_BIN must name partsim");
  }

  void catalog_is_the_core_schema() {
    // Every field of the form comes from the core's scenario schema: its range, default, choices and kinds.
    const std::vector<SectionSpec> sections = scenario_catalog(kSource);
    int fields = 0;
    for (const SectionSpec& s : sections)
      for (const FieldSpec& f : s.fields) {
        ++fields;
        QVERIFY2(partsim::scenario_schema().find(f.pointer, "") != nullptr, f.pointer.c_str());
        QVERIFY2(!f.label.isEmpty(), f.pointer.c_str());
        if (f.kind == FieldKind::Choice) QVERIFY2(!f.choices.isEmpty(), f.pointer.c_str());
        if (f.kind == FieldKind::Quantity) QVERIFY2(!units_of(f.dimension).isEmpty(), f.pointer.c_str());
        if (f.kind == FieldKind::Choice && f.default_value.is_string())
          QVERIFY2(f.choices.contains(QString::fromStdString(f.default_value.get<std::string>())) || !f.optional,
                   f.pointer.c_str());
      }
    QVERIFY(fields > 60);
    auto field = [&](const std::string& pointer) -> const FieldSpec& {
      for (const SectionSpec& s : sections)
        for (const FieldSpec& f : s.fields)
          if (f.pointer == pointer) return f;
      throw std::logic_error("no field " + pointer);
    };
    QCOMPARE(field("/cluster/nodes").max, 65536.0);
    QCOMPARE(field("/workload/micro_batch").default_value, nlohmann::json(1));
    QVERIFY(field("/cluster/gpu").choices.contains(QStringLiteral("a100-sxm4-80gb")));
    QVERIFY(field("/workload/recomputation").choices.contains(QStringLiteral("selective")));
    QCOMPARE(field("/workload/recompute_modules").kind, FieldKind::Json); // a list, edited as JSON
    QVERIFY(field("/workload/recompute_modules").optional);
    QVERIFY(field("/workload/recompute_policy").choices.contains(QStringLiteral("torchtitan_op")));
    QCOMPARE(field("/strategy/microbatch_group").strategy_kinds, QStringList{QStringLiteral("model_parallel")});
    QVERIFY(field("/strategy/microbatch_group").optional);
    QCOMPARE(field("/strategy/tensor").strategy_kinds, QStringList{QStringLiteral("model_parallel")});
    QCOMPARE(field("/workload/global_batch").workload_kinds, QStringList{QStringLiteral("model_training")});
    QVERIFY(field("/workload/iterations").workload_kinds.isEmpty() ||
            field("/workload/iterations").workload_kinds.size() == 3);
  }

  void edit_run_and_charts_hold_the_report_numbers() {
    MainWindow w;
    w.set_auto_run(false);
    w.show();
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("seed-1-skewed-partitions.json")).isEmpty());
    QTest::qWait(200); // first paint
    StallMeter stalls;
    stalls.start();
    auto* nodes = qobject_cast<IntegerEditor*>(w.form()->editor("/cluster/nodes"));
    QVERIFY(nodes != nullptr);
    nodes->spin_box()->setValue(5); // 10 partitions on 5 GPUs
    w.run();
    QCOMPARE(wait_run(runs), RunState::Finished);
    QTest::qWait(50); // the repaint of the charts
    stalls.stop();
    QVERIFY(w.current_report().has_value());

    // The same run through the CLI: the charts must hold its numbers.
    const QByteArray text =
        run_cli({QStringLiteral("run"), scenario("seed-1-skewed-partitions.json"), QStringLiteral("--set"),
                 QStringLiteral("/cluster/nodes=5"), QStringLiteral("--json"), QStringLiteral("--no-files")},
                0);
    const auto cli = parse_report(text);
    QVERIFY(cli.has_value());
    const RunReport& r = *w.current_report();
    QCOMPARE(r.ranks.size(), std::size_t(5));
    QCOMPARE(r.makespan(), cli->makespan());
    const QList<QBarSet*> sets = w.imbalance_chart()->bars()->barSets();
    for (int i = 0; i < 5; ++i) {
      QCOMPARE(sets[0]->at(i), cli->ranks[std::size_t(i)].compute);
      QCOMPARE(sets[1]->at(i), cli->ranks[std::size_t(i)].communication);
      QCOMPARE(sets[2]->at(i), cli->ranks[std::size_t(i)].wait);
      QCOMPARE(sets[3]->at(i), cli->ranks[std::size_t(i)].tail_idle);
    }
    const int row = w.summary_model()->row_of("speedup");
    QCOMPARE(w.summary_model()->index(row, SummaryModel::Current).data(Qt::UserRole).toDouble(),
             cli->figure("speedup").value());
    QCOMPARE(w.rank_model()->rowCount(), 5);
    QCOMPARE(w.overhead_chart()->bars()->barSets().first()->at(0), 100.0 * cli->time_shares()[0].share);
    // The timeline holds the trace of the same run: one track per rank, ending at the makespan.
    const Trace* trace = w.timeline()->canvas()->trace();
    QVERIFY(trace != nullptr);
    QCOMPARE(trace->tracks.size(), std::size_t(5));
    QVERIFY(std::fabs(trace->end - cli->makespan()) < 1e-6 * cli->makespan());
    qInfo("longest event-loop stall: %lld ms", static_cast<long long>(stalls.max_gap_ms()));
    QVERIFY2(stalls.max_gap_ms() < 1000, "the event loop was blocked");
  }

  void a_run_with_failures_shows_its_replay() {
    // The seed-9 scenario plans over the trace limit (1,024 GPUs): no iteration timeline, but its replay over the
    // whole run (reliability_trace.json, asked for alone) in the Failures and checkpoints tab: the tracks of
    // training, checkpoints, recovery and each component, one red mark per failure the report counts.
    MainWindow w;
    w.set_auto_run(false);
    w.show();
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QSignalSpy validated(&w, &MainWindow::validated);
    QVERIFY(w.open_scenario(scenario("seed-9-failures-checkpointing.json")).isEmpty());
    QVERIFY(validated.wait(20000));
    QVERIFY(!w.tab_visible(MainWindow::ReplayTab));
    w.run();
    QCOMPARE(wait_run(runs, 120000), RunState::Finished);
    QVERIFY(w.timeline()->canvas()->trace() == nullptr);
    QVERIFY(w.tab_visible(MainWindow::ReplayTab));
    const Trace* replay = w.replay()->canvas()->trace();
    QVERIFY(replay != nullptr);
    QStringList names;
    for (const TraceTrack& t : replay->tracks) names << t.name;
    const QStringList first{QStringLiteral("training"), QStringLiteral("checkpoints"), QStringLiteral("recovery"),
                            QStringLiteral("failures: gpu")};
    QVERIFY2(names.mid(0, 4) == first, qPrintable(names.join(QLatin1Char(','))));
    const auto failures = w.current_report()->figure("reliability/failures");
    QVERIFY(failures.has_value() && *failures > 0);
    // reliability_trace.json holds the replay's first 10,000 events: here 10 of the 11 failures, 9.3 of 9.8 days,
    // which the caption says.
    QVERIFY(replay->instant_count() > 0);
    QVERIFY(static_cast<double>(replay->instant_count()) <= *failures);
    const auto days = w.current_report()->figure("reliability/time_to_finish_days");
    QVERIFY(days.has_value());
    QVERIFY(replay->end <= *days * 86400.0 * (1 + 1e-9));
    if (static_cast<double>(replay->instant_count()) < *failures) {
      bool said = false;
      for (const QLabel* label : w.replay()->findChildren<QLabel*>())
        said = said || label->text().contains(QStringLiteral("first 10,000 events"));
      QVERIFY(said);
    }
    w.show_tab(MainWindow::ReplayTab);
    QTest::qWait(50);
    QVERIFY(w.replay()->canvas()->last_painted_instants() > 0);
  }

  void invalid_edit_shows_the_cli_error_at_the_field() {
    MainWindow w;
    w.set_auto_run(false);
    QSignalSpy validated(&w, &MainWindow::validated);
    QVERIFY(w.open_scenario(scenario("seed-1-skewed-partitions.json")).isEmpty());
    QVERIFY(validated.wait(10000));
    validated.clear();
    auto* partitions = qobject_cast<IntegerEditor*>(w.form()->editor("/strategy/partitions"));
    QVERIFY(partitions != nullptr);
    partitions->spin_box()->setValue(3); // fewer partitions than the 10 GPUs
    QVERIFY(validated.wait(10000));
    QCOMPARE(validated.takeFirst().at(0).toBool(), false);
    QByteArray err;
    run_cli({QStringLiteral("validate"), scenario("seed-1-skewed-partitions.json"), QStringLiteral("--set"),
             QStringLiteral("/strategy/partitions=3")},
            2, &err);
    const ErrorLine cli = parse_error_line(QString::fromUtf8(err));
    QCOMPARE(cli.pointer, QStringLiteral("/strategy/partitions"));
    QCOMPARE(w.form()->banner_text(), cli.message);
    QVERIFY(!w.form()->error_at("/strategy/partitions").isEmpty());
    QVERIFY(cli.message.endsWith(w.form()->error_at("/strategy/partitions")));
    // The child reports the same: exit code 2 is an input error naming the field.
    SimulationRunner runner;
    QSignalSpy done(&runner, &SimulationRunner::finished);
    RunRequest request;
    request.program = qEnvironmentVariable("PARTSIM_BIN");
    request.scenario_args = w.document()->scenario_arguments();
    runner.start(request);
    QVERIFY(done.wait(30000));
    const auto outcome = done.takeFirst().at(0).value<RunOutcome>();
    QCOMPARE(outcome.state, RunState::InputError);
    QCOMPARE(outcome.error.message, cli.message);
    // Fixing the value clears the error.
    partitions->spin_box()->setValue(10);
    QVERIFY(validated.wait(10000));
    QVERIFY(w.form()->error_at("/strategy/partitions").isEmpty());
  }

  void cancel_kills_the_child() {
    MainWindow w;
    w.set_auto_run(false);
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("dp-training-ring-allreduce.json")).isEmpty());
    w.document()->set_value("/workload/iterations", 5000); // millions of messages: many seconds
    w.run();
    QTRY_VERIFY_WITH_TIMEOUT(w.runner()->process() != nullptr && w.runner()->process()->state() == QProcess::Running,
                             20000);
    const qint64 pid = w.runner()->process()->processId();
    QVERIFY(pid > 0);
    // partsim --progress reports every 0.5 s of wall time: the runner turns it into a fraction.
    QSignalSpy progress(w.runner(), &SimulationRunner::progress);
    QTRY_VERIFY_WITH_TIMEOUT(!progress.isEmpty() && progress.last().at(0).toDouble() > 0, 20000);
    QVERIFY(progress.last().at(0).toDouble() < 1);
    QVERIFY(w.runner()->running()); // still going: the window stayed responsive meanwhile
    w.cancel();
    QCOMPARE(wait_run(runs), RunState::Cancelled);
    QVERIFY(!w.current_report().has_value());
    // The child is gone (killed and reaped): signal 0 finds no such process.
    QTRY_VERIFY_WITH_TIMEOUT(::kill(static_cast<pid_t>(pid), 0) != 0, 10000);
  }

  void a_missing_partsim_is_reported() {
    SimulationRunner runner;
    QSignalSpy done(&runner, &SimulationRunner::finished);
    RunRequest request;
    request.program = QStringLiteral("/nonexistent/partsim");
    runner.start(request);
    QVERIFY(done.wait(10000));
    const auto outcome = done.takeFirst().at(0).value<RunOutcome>();
    QCOMPARE(outcome.state, RunState::NotFound);
    QVERIFY(outcome.error.message.contains(QStringLiteral("/nonexistent/partsim")));
    QVERIFY(!runner.running());
  }

  void model_training_runs_and_out_of_memory_is_reported() {
    MainWindow w;
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("gpt3-1.3b-dp-8xa100.json")).isEmpty());
    QCOMPARE(wait_run(runs), RunState::Finished);
    QVERIFY(w.current_report()->figure("mfu").has_value());
    QVERIFY(!w.current_report()->collectives.empty());
    // The form shows the training fields and hides the data-job ones.
    QVERIFY(!w.form()->editor("/workload/model")->parentWidget()->isHidden());
    QVERIFY(w.form()->editor("/workload/samples")->parentWidget()->isHidden());
    QVERIFY(w.form()->editor("/workload/arrivals/process")->parentWidget()->isHidden());
    // A 70B model on A100s: partsim exits with 3 and reports the memory, not a simulation.
    auto* model = qobject_cast<ChoiceEditor*>(w.form()->editor("/workload/model"));
    QVERIFY(model != nullptr);
    model->combo_box()->setCurrentIndex(model->combo_box()->findText(QStringLiteral("llama3-70b")));
    QCOMPARE(wait_run(runs), RunState::Finished);
    QCOMPARE(w.current_report()->verdict, QStringLiteral("out_of_memory"));
    QVERIFY(w.warnings()->count() >= 1);
    QVERIFY(w.warnings()->item(0)->text().startsWith(QStringLiteral("out of memory")));
    QVERIFY(w.summary_model()->row_of("memory_per_gpu/total_bytes") >= 0);
    QVERIFY(w.status_text().contains(QStringLiteral("out of memory")));
  }

  void model_parallel_fields_edit_the_split() {
    MainWindow w;
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("seed-3-pipeline-nvlink.json")).isEmpty());
    QCOMPARE(wait_run(runs), RunState::Finished);
    // A model-parallel strategy shows its degrees and hides the data-parallel partitions.
    auto* pipeline = qobject_cast<IntegerEditor*>(w.form()->editor("/strategy/pipeline"));
    auto* tensor = qobject_cast<IntegerEditor*>(w.form()->editor("/strategy/tensor"));
    QVERIFY(pipeline != nullptr && tensor != nullptr);
    QVERIFY(!pipeline->parentWidget()->isHidden());
    QVERIFY(w.form()->editor("/strategy/partitions")->parentWidget()->isHidden());
    QCOMPARE(pipeline->current_value(), nlohmann::json(8));
    const double pipelined = w.current_report()->makespan();
    // Re-split the same 8 GPUs by tensor: a burst of edits in the form, then one run.
    QVERIFY(!tensor->isEnabled()); // absent from the file: its check box adds it
    w.form()->enable_box("/strategy/tensor")->setChecked(true);
    tensor->spin_box()->setValue(8);
    pipeline->spin_box()->setValue(1);
    w.run(); // 170,000 events: more than the window re-runs by itself
    QCOMPARE(wait_run(runs), RunState::Finished);
    QCOMPARE(w.document()->value("/strategy/tensor")->get<int>(), 8);
    QCOMPARE(w.document()->value("/strategy/pipeline")->get<int>(), 1);
    QCOMPARE(tensor->current_value(), nlohmann::json(8));
    QVERIFY(w.current_report()->makespan() > 0);
    QVERIFY(w.current_report()->makespan() != pipelined);
  }

  void opened_files_are_remembered() {
    QSettings().remove(QStringLiteral("recent_files"));
    MainWindow w;
    w.set_auto_run(false);
    QVERIFY(w.open_scenario(scenario("seed-6-amdahl.json")).isEmpty());
    QVERIFY(w.open_scenario(scenario("seed-7-over-partitioning.json")).isEmpty());
    QVERIFY(!w.open_scenario(scenario("no-such-file.json")).isEmpty()); // an error line, not remembered
    const QStringList recent = QSettings().value(QStringLiteral("recent_files")).toStringList();
    QCOMPARE(recent.size(), 2);
    QVERIFY(recent[0].endsWith(QStringLiteral("seed-7-over-partitioning.json")));
    QCOMPARE(w.document()->title(), QStringLiteral("seed-7-over-partitioning.json"));
  }

  void edits_rerun_automatically_once_debounced() {
    MainWindow w;
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("seed-1-skewed-partitions.json")).isEmpty());
    QCOMPARE(wait_run(runs), RunState::Finished); // small: runs by itself
    const int started = w.runs_started();
    auto* nodes = qobject_cast<IntegerEditor*>(w.form()->editor("/cluster/nodes"));
    for (int n : {2, 4, 6, 8}) nodes->spin_box()->setValue(n); // a burst of edits
    QCOMPARE(wait_run(runs), RunState::Finished);
    QCOMPARE(w.runs_started(), started + 1);
    QCOMPARE(w.current_report()->ranks.size(), std::size_t(8));
    QVERIFY(!runs.wait(2 * MainWindow::kDebounceMs + 500)); // and no more
  }

  void pin_and_compare() {
    MainWindow w;
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(scenario("seed-1-skewed-partitions.json")).isEmpty());
    QCOMPARE(wait_run(runs), RunState::Finished);
    const double skewed = w.current_report()->makespan();
    w.pin();
    auto* shares = qobject_cast<SharesEditor*>(w.form()->editor("/strategy/shares"));
    QVERIFY(shares != nullptr);
    shares->mode_box()->setCurrentIndex(shares->mode_box()->findData(QStringLiteral("balanced")));
    QCOMPARE(wait_run(runs), RunState::Finished);
    const double balanced = w.current_report()->makespan();
    QVERIFY(balanced < skewed);
    const int row = w.summary_model()->row_of("makespan_s");
    QCOMPARE(w.summary_model()->index(row, SummaryModel::Pinned).data(Qt::UserRole).toDouble(), skewed);
    QCOMPARE(w.summary_model()->index(row, SummaryModel::Delta).data(Qt::UserRole).toDouble(), balanced - skewed);
    QVERIFY(w.imbalance_chart()->pinned_series() != nullptr);
    QCOMPARE(w.imbalance_chart()->pinned_series()->count(), 10);
    QCOMPARE(w.overhead_chart()->bars()->barSets().first()->count(), 2);
    w.unpin();
    QVERIFY(w.imbalance_chart()->pinned_series() == nullptr);
  }

  void speedup_sweep_runs_in_the_background() {
    MainWindow w;
    w.set_auto_run(false);
    w.show();
    w.show_tab(MainWindow::SpeedupTab);
    QVERIFY(w.open_scenario(scenario("seed-6-amdahl.json")).isEmpty());
    QTest::qWait(200); // first paint
    StallMeter stalls;
    stalls.start();
    QSignalSpy swept(&w, &MainWindow::sweep_finished);
    w.speedup_chart()->set_node_counts(QStringLiteral("1,2,4"));
    w.start_sweep();
    QVERIFY(swept.wait(60000));
    QTest::qWait(50);
    stalls.stop();
    QCOMPARE(swept.takeFirst().at(0).toBool(), true);
    const QLineSeries* measured = w.speedup_chart()->measured();
    QVERIFY(measured != nullptr);
    QCOMPARE(measured->count(), 3);
    // seed 6: half serial, so 1, 1.333, 1.6 (README) against an Amdahl bound of the same.
    QVERIFY(std::fabs(measured->at(0).y() - 1.0) < 0.01);
    QVERIFY(std::fabs(measured->at(1).y() - 1.333) < 0.01);
    QVERIFY(std::fabs(measured->at(2).y() - 1.6) < 0.01);
    QVERIFY(std::fabs(w.speedup_chart()->amdahl()->at(2).y() - 1.6) < 0.01);
    QCOMPARE(w.speedup_chart()->model()->rowCount(), 3);
    QVERIFY(std::fabs(w.speedup_chart()->model()->result().rows[2].karp_flatt - 0.5) < 0.01);
    qInfo("longest event-loop stall: %lld ms", static_cast<long long>(stalls.max_gap_ms()));
    QVERIFY2(stalls.max_gap_ms() < 1000, "the event loop was blocked");
  }

  void search_runs_in_the_background_and_loads_a_candidate() {
    MainWindow w;
    w.set_auto_run(false);
    w.show();
    w.show_tab(MainWindow::SearchTab);
    const QString llama = scenario("llama3-70b-3d-64xh100.json");
    QVERIFY(w.open_scenario(llama).isEmpty());
    SearchView* view = w.search_view();
    // The defaults for a model-parallel training scenario.
    QCOMPARE(view->axes(),
             (QStringList{QStringLiteral("/strategy/tensor=1,2,4,8"), QStringLiteral("/strategy/pipeline=1,2,4,8")}));
    QCOMPARE(view->rank_by(), QStringLiteral("time_to_train"));
    QCOMPARE(view->tokens(), QStringLiteral("1e12"));
    view->set_axes({QStringLiteral("/strategy/tensor=4,8"), QStringLiteral("/strategy/pipeline=4,8")});
    QSignalSpy searched(&w, &MainWindow::search_finished);
    QSignalSpy progress(w.searcher(), &SearchRunner::progress);
    w.start_search();
    QVERIFY(searched.wait(120000));
    QCOMPARE(searched.takeFirst().at(0).toBool(), true);
    QVERIFY(view->outcome().has_value());
    QVERIFY2(progress.count() > 2, "progress from --progress=json");
    // What the CLI gives for the same search.
    QTemporaryDir dir;
    const QString json = dir.filePath(QStringLiteral("search.json"));
    run_cli({QStringLiteral("search"), llama, QStringLiteral("--vary"), QStringLiteral("/strategy/tensor=4,8"),
             QStringLiteral("--vary"), QStringLiteral("/strategy/pipeline=4,8"), QStringLiteral("--rank-by"),
             QStringLiteral("time_to_train"), QStringLiteral("--tokens"), QStringLiteral("1e12"),
             QStringLiteral("--refine"), QString::number(view->refine()), QStringLiteral("--json"), json},
            0);
    QFile file(json);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(partsim::search_json(view->outcome()->result), nlohmann::json::parse(file.readAll().toStdString()));
    QVERIFY(!view->outcome()->ranking.empty());
    QCOMPARE(view->model()->rowCount(), 4);
    QCOMPARE(static_cast<std::size_t>(view->candidates_series()->count()), view->outcome()->ranking.size());
    QVERIFY(view->front_series()->count() >= 1);
    // A click loads the winner into the form: its split, the data degree derived (taken out).
    const std::size_t best = view->outcome()->ranking.front();
    view->choose(best);
    const partsim::SweepPoint& point = view->outcome()->result.rows[best].point;
    QCOMPARE(*w.document()->value("/strategy/tensor"), point.overrides[0].value);
    QCOMPARE(*w.document()->value("/strategy/pipeline"), point.overrides[1].value);
    QVERIFY(w.document()->value("/strategy/data") == nullptr);
    QVERIFY2(w.status_text().contains(QStringLiteral("loaded search point")), qPrintable(w.status_text()));
  }

  void exports_charts_report_and_scenario() {
    MainWindow w;
    QSignalSpy runs(&w, &MainWindow::run_finished);
    QVERIFY(w.open_scenario(QString()).isEmpty()); // the built-in default
    QCOMPARE(wait_run(runs), RunState::Finished);
    QTemporaryDir dir;
    const QString png = dir.filePath(QStringLiteral("imbalance.png"));
    const QString svg = dir.filePath(QStringLiteral("overhead.svg"));
    QCOMPARE(w.export_chart(MainWindow::ImbalanceTab, png), QString());
    QCOMPARE(w.export_chart(MainWindow::OverheadTab, svg), QString());
    QCOMPARE(w.export_chart(MainWindow::TimelineTab, dir.filePath(QStringLiteral("timeline.png"))), QString());
    QVERIFY(QImage(png).width() > 100);
    QFile svg_file(svg);
    QVERIFY(svg_file.open(QIODevice::ReadOnly));
    QVERIFY(svg_file.readAll().contains("<svg"));
    const QString json = dir.filePath(QStringLiteral("report.json"));
    QCOMPARE(w.export_report_json(json), QString());
    QFile json_file(json);
    QVERIFY(json_file.open(QIODevice::ReadOnly));
    QCOMPARE(parse_report(json_file.readAll())->makespan(), w.current_report()->makespan());
    const QString csv = dir.filePath(QStringLiteral("ranks.csv"));
    QCOMPARE(w.export_ranks_csv(csv), QString());
    QFile csv_file(csv);
    QVERIFY(csv_file.open(QIODevice::ReadOnly));
    QCOMPARE(csv_file.readAll().count('\n'), qsizetype(11)); // header + 10 ranks
    // The edited scenario round-trips, and partsim accepts it.
    w.document()->set_value("/cluster/nodes", 5);
    const QString scen = dir.filePath(QStringLiteral("edited.json"));
    QCOMPARE(w.export_scenario(scen), QString());
    ScenarioDocument reread;
    QCOMPARE(reread.load_file(scen), QString());
    QCOMPARE(reread.document(), w.document()->document());
    QVERIFY(!run_cli({QStringLiteral("validate"), scen}, 0).isEmpty());
  }
};

QTEST_MAIN(WindowTests)
#include "window_tests.moc"
