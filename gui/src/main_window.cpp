// MainWindow.
#include "main_window.hpp"

#include "charts/expert_load_chart.hpp"
#include "charts/imbalance_chart.hpp"
#include "charts/overhead_chart.hpp"
#include "charts/search_view.hpp"
#include "charts/serving_view.hpp"
#include "charts/speedup_chart.hpp"
#include "charts/timeline_view.hpp"
#include "exporter.hpp"
#include "form/scenario_form.hpp"
#include "models/rank_model.hpp"
#include "models/summary_model.hpp"
#include "partsim/common/error.hpp"
#include "partsim/input/data_dir.hpp"
#include "partsim_locator.hpp"
#include "scenario_document.hpp"

#include <QAction>
#include <QChartView>
#include <QDockWidget>
#include <QFileDialog>
#include <QFileInfo>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QLabel>
#include <QListWidget>
#include <QMenu>
#include <QMenuBar>
#include <QProgressBar>
#include <QPushButton>
#include <QScrollArea>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QThread>
#include <QToolBar>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

#include <algorithm>

namespace partsim::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  partsim_ = find_partsim_binary();
  document_ = new ScenarioDocument(this);
  validator_ = new Validator(this);
  runner_ = new SimulationRunner(this);
  sweeper_ = new SweepRunner(this);
  searcher_ = new SearchRunner(this);

  form_ = new ScenarioForm(document_, QString::fromStdString(data_dir().string()));
  auto* form_scroll = new QScrollArea;
  form_scroll->setWidget(form_);
  form_scroll->setWidgetResizable(true);
  auto* dock = new QDockWidget(tr("Scenario"), this);
  dock->setObjectName(QStringLiteral("scenario_dock"));
  dock->setWidget(form_scroll);
  dock->setFeatures(QDockWidget::DockWidgetMovable | QDockWidget::DockWidgetFloatable);
  dock->setMinimumWidth(400);
  addDockWidget(Qt::LeftDockWidgetArea, dock);

  imbalance_ = new ImbalanceChart;
  overhead_ = new OverheadChart;
  speedup_ = new SpeedupChart;
  timeline_ = new TimelineView;
  search_ = new SearchView;
  expert_load_ = new ExpertLoadChart;
  serving_ = new ServingView;
  replay_ = new TimelineView;
  ranks_ = new RankModel(this);
  auto* rank_view = new QTableView;
  rank_view->setModel(ranks_);
  rank_view->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  tabs_ = new QTabWidget;
  tabs_->addTab(imbalance_, tr("Load imbalance"));
  tabs_->addTab(overhead_, tr("Communication overhead"));
  tabs_->addTab(speedup_, tr("Speedup"));
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(rank_view, tr("Ranks"));
  tabs_->addTab(search_, tr("Search"));
  tabs_->addTab(expert_load_, tr("Expert load"));
  tabs_->addTab(serving_, tr("Serving"));
  tabs_->setTabVisible(ServingTab, false); // until a serving run
  tabs_->addTab(replay_, tr("Failures and checkpoints"));
  tabs_->setTabVisible(ReplayTab, false); // until a run with /reliability

  summary_ = new SummaryModel(this);
  summary_view_ = new QTableView;
  summary_view_->setModel(summary_);
  summary_view_->verticalHeader()->hide();
  summary_view_->horizontalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  summary_view_->horizontalHeader()->setStretchLastSection(true);
  summary_view_->setWordWrap(false);
  warnings_ = new QListWidget;
  warnings_->setMaximumHeight(110);
  auto* side = new QWidget;
  side->setMinimumWidth(400);
  auto* side_layout = new QVBoxLayout(side);
  side_layout->setContentsMargins(0, 0, 0, 0);
  side_layout->addWidget(new QLabel(tr("<b>Summary</b>")));
  run_caption_ = new QLabel;
  run_caption_->setWordWrap(true);
  side_layout->addWidget(run_caption_);
  side_layout->addWidget(summary_view_, 1);
  side_layout->addWidget(new QLabel(tr("<b>Warnings</b>")));
  side_layout->addWidget(warnings_);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(tabs_);
  split->addWidget(side);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  setCentralWidget(split);

  status_ = new QLabel;
  progress_ = new QProgressBar;
  progress_->setMaximumWidth(220);
  progress_->setRange(0, 1000);
  progress_->setVisible(false);
  cancel_button_ = new QPushButton(tr("Cancel"));
  cancel_button_->setVisible(false);
  statusBar()->addWidget(status_, 1);
  statusBar()->addPermanentWidget(progress_);
  statusBar()->addPermanentWidget(cancel_button_);
  connect(cancel_button_, &QPushButton::clicked, this, &MainWindow::cancel);

  build_menus();

  debounce_.setSingleShot(true);
  debounce_.setInterval(kDebounceMs);
  connect(&debounce_, &QTimer::timeout, this, &MainWindow::validate_now);
  connect(document_, &ScenarioDocument::loaded, this, &MainWindow::on_loaded);
  connect(document_, &ScenarioDocument::edited, this, &MainWindow::on_edited);
  connect(validator_, &Validator::validated, this, &MainWindow::on_validated);
  connect(runner_, &SimulationRunner::started, this, [this] { update_actions(); });
  connect(runner_, &SimulationRunner::progress, this, [this](double fraction) {
    progress_->setVisible(true);
    if (fraction < 0) {
      progress_->setRange(0, 0);
    } else {
      progress_->setRange(0, 1000);
      progress_->setValue(static_cast<int>(fraction * 1000));
    }
  });
  connect(runner_, &SimulationRunner::finished, this, &MainWindow::on_run_finished);
  connect(speedup_, &SpeedupChart::sweep_requested, this, &MainWindow::start_sweep);
  connect(speedup_, &SpeedupChart::cancel_requested, this, [this] {
    sweeper_->cancel();
    speedup_->set_running(false, tr("sweep cancelled"));
  });
  connect(sweeper_, &SweepRunner::progress, speedup_, &SpeedupChart::set_progress);
  connect(sweeper_, &SweepRunner::finished, this, [this](bool ok, const SweepResult& result, const ErrorLine& error) {
    if (ok) {
      sweep_ = result;
      speedup_->set_result(sweep_);
      speedup_->set_running(false, tr("%1 points simulated").arg(result.rows.size()));
    } else {
      speedup_->set_running(false, error.message);
    }
    emit sweep_finished(ok);
  });
  connect(search_, &SearchView::search_requested, this, &MainWindow::start_search);
  connect(search_, &SearchView::cancel_requested, this, [this] {
    searcher_->cancel();
    search_->set_running(false, tr("search cancelled"));
  });
  connect(search_, &SearchView::candidate_chosen, this, &MainWindow::load_candidate);
  connect(searcher_, &SearchRunner::progress, search_, &SearchView::set_progress);
  connect(
      searcher_, &SearchRunner::finished, this, [this](bool ok, const SearchOutcome& outcome, const ErrorLine& error) {
        if (ok) {
          search_->set_outcome(outcome);
          const SearchResult& r = outcome.result;
          const auto simulated = static_cast<std::size_t>(
              std::count_if(r.rows.begin(), r.rows.end(), [](const SearchRow& row) { return row.fast.has_value(); }));
          QString message = tr("%1 points: %2 simulated, %3 ranked; click a point or a row to load it into the form")
                                .arg(r.rows.size())
                                .arg(simulated)
                                .arg(outcome.ranking.size());
          if (!error.message.isEmpty()) message += tr(" (%1)").arg(error.message);
          search_->set_running(false, message);
        } else {
          search_->set_running(false, error.message);
        }
        emit search_finished(ok);
      });

  setWindowTitle(tr("partsim-gui"));
  resize(1500, 950);
  if (partsim_.isEmpty()) set_status(tr("partsim not found: set PARTSIM_BIN or put partsim on PATH"));
  on_loaded(); // the document starts with the built-in default
}

MainWindow::~MainWindow() = default;

void MainWindow::build_menus() {
  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open scenario..."), this, [this] {
    const QString dir = QString::fromStdString((data_dir() / "scenarios").string());
    const QString path = QFileDialog::getOpenFileName(this, tr("Open scenario"), dir, tr("Scenarios (*.json)"));
    if (!path.isEmpty()) {
      const QString error = open_scenario(path);
      if (!error.isEmpty()) set_status(error);
    }
  });
  open->setShortcut(QKeySequence::Open);
  recent_menu_ = file->addMenu(tr("Open &recent"));
  QAction* builtin = file->addAction(tr("Open the built-in &default"), this, [this] { open_scenario(QString()); });
  file->addSeparator();
  QMenu* export_menu = file->addMenu(tr("&Export"));
  export_menu->addAction(tr("Chart as PNG..."), this, [this] { export_dialog(true, tr("PNG image (*.png)")); });
  export_menu->addAction(tr("Chart as SVG..."), this, [this] { export_dialog(true, tr("SVG image (*.svg)")); });
  export_menu->addAction(tr("Report as JSON..."), this, [this] { export_dialog(false, tr("JSON (*.json)")); });
  export_menu->addAction(tr("Ranks as CSV..."), this, [this] { export_dialog(false, tr("CSV (*.csv)")); });
  export_menu->addAction(tr("Edited scenario as JSON..."), this, [this] {
    const QString path =
        QFileDialog::getSaveFileName(this, tr("Save scenario"), document_->title(), tr("Scenarios (*.json)"));
    if (!path.isEmpty())
      set_status(export_scenario(path).isEmpty() ? tr("wrote %1").arg(path) : tr("cannot write %1").arg(path));
  });
  file->addSeparator();
  file->addAction(tr("&Quit"), this, &QWidget::close)->setShortcut(QKeySequence::Quit);

  QMenu* run_menu = menuBar()->addMenu(tr("&Run"));
  run_action_ = run_menu->addAction(tr("&Run"), this, &MainWindow::run);
  run_action_->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_R));
  cancel_action_ = run_menu->addAction(tr("&Cancel"), this, &MainWindow::cancel);
  cancel_action_->setShortcut(QKeySequence(Qt::Key_Escape));
  auto_action_ = run_menu->addAction(tr("Re-run &automatically after edits"));
  auto_action_->setCheckable(true);
  auto_action_->setChecked(true);
  auto_action_->setToolTip(
      tr("When the run is small (under about a second), re-run %1 ms after the last edit").arg(kDebounceMs));
  run_menu->addSeparator();
  pin_action_ = run_menu->addAction(tr("&Pin this run for comparison"), this, &MainWindow::pin);
  unpin_action_ = run_menu->addAction(tr("&Unpin"), this, &MainWindow::unpin);
  run_menu->addAction(tr("Speedup &sweep"), this, [this] {
    show_tab(SpeedupTab);
    start_sweep();
  });

  QToolBar* bar = addToolBar(tr("Main"));
  bar->setObjectName(QStringLiteral("main_toolbar"));
  bar->addAction(open);
  bar->addAction(builtin);
  bar->addSeparator();
  bar->addAction(run_action_);
  bar->addAction(cancel_action_);
  bar->addAction(auto_action_);
  bar->addSeparator();
  bar->addAction(pin_action_);
  bar->addAction(unpin_action_);
  rebuild_recent_menu();
  update_actions();
}

QString MainWindow::open_scenario(const QString& path) {
  if (path.isEmpty()) {
    document_->load_default();
    return {};
  }
  const QString error = document_->load_file(path);
  if (error.isEmpty()) add_recent(QFileInfo(path).absoluteFilePath());
  return error;
}

void MainWindow::on_loaded() {
  setWindowTitle(tr("partsim-gui: %1").arg(document_->title()));
  current_.reset();
  sweep_.reset();
  show_report();
  speedup_->set_result(std::nullopt);
  timeline_->set_trace(nullptr);
  timeline_->set_failure(std::nullopt);
  replay_->set_trace(nullptr);
  last_wall_s_ = -1;
  // The sweep's default node counts: powers of two up to twice the scenario's.
  const nlohmann::json* nodes = document_->value("/cluster/nodes");
  const int n = nodes != nullptr && nodes->is_number_integer() ? nodes->get<int>() : 8;
  QStringList counts;
  for (int c = 1; c < 2 * n && c <= 1024; c *= 2) counts << QString::number(c);
  if (!counts.contains(QString::number(n))) counts << QString::number(n);
  speedup_->set_node_counts(counts.join(QLatin1Char(',')));
  // The search's defaults: the split of a model-parallel scenario, else the node count; time to train a budget for a
  // model-training workload, else throughput.
  const nlohmann::json* strategy = document_->value("/strategy/kind");
  const nlohmann::json* workload = document_->value("/workload/kind");
  const bool training = workload != nullptr && *workload == "model_training";
  if (strategy != nullptr && *strategy == "model_parallel")
    search_->set_axes({QStringLiteral("/strategy/tensor=1,2,4,8"), QStringLiteral("/strategy/pipeline=1,2,4,8")});
  else
    search_->set_axes({QStringLiteral("/cluster/nodes=") + counts.join(QLatin1Char(','))});
  search_->set_rank_by(training ? QStringLiteral("time_to_train") : QStringLiteral("throughput"));
  search_->set_tokens(training ? QStringLiteral("1e12") : QString());
  search_->set_outcome(std::nullopt);
  run_after_validation_ = false;
  validate_now();
}

void MainWindow::on_edited() {
  validation_.reset();
  debounce_.start();
  update_actions();
}

void MainWindow::validate_now() {
  debounce_.stop();
  validator_->validate(document_->document(), document_->source());
}

void MainWindow::on_validated(const Validation& v) {
  if (debounce_.isActive()) return; // more edits are coming
  validation_ = v;
  if (v.ok) {
    form_->show_valid(v);
  } else {
    form_->show_error(v.error);
    // Before the signal: whoever listens (the screenshot mode) reads the status.
    set_status(tr("invalid scenario: %1").arg(v.error.message));
  }
  emit validated(v.ok);
  const bool requested = run_after_validation_; // an explicit Run waited for this answer
  run_after_validation_ = false;
  const bool small = v.planned_events <= kAutoRunEventLimit && last_wall_s_ < 1.0;
  if (!v.ok) {
    // the status says why (above)
  } else if (requested || (auto_action_->isChecked() && small)) {
    start_run();
  } else {
    set_status(tr("ready: %1 events planned%2")
                   .arg(v.planned_events)
                   .arg(auto_action_->isChecked() ? tr(" (too large to re-run automatically: press Run)") : QString()));
  }
  update_actions();
}

void MainWindow::run() {
  if (!validation_ || debounce_.isActive() || validator_->busy()) {
    run_after_validation_ = true;
    validate_now();
    return;
  }
  if (!validation_->ok) {
    form_->show_error(validation_->error);
    set_status(tr("invalid scenario: %1").arg(validation_->error.message));
    return;
  }
  start_run();
}

void MainWindow::start_run() {
  RunRequest request;
  request.program = partsim_;
  request.scenario_args = document_->scenario_arguments();
  request.with_trace = validation_ && validation_->planned_events <= kTraceEventLimit;
  // The replay's timeline is small (at most 10,000 events) however large the split: always asked for.
  request.with_replay = document_->value("/reliability") != nullptr && document_->value("/reliability")->is_object();
  if (document_->value("/run") == nullptr || !document_->value("/run")->is_object()) {
    request.trace_set = QStringLiteral("/run={\"outputs\":[\"trace\"]}");
    request.replay_set = QStringLiteral("/run={\"outputs\":[\"reliability_trace\"]}");
  }
  ++runs_started_;
  set_status(tr("running: %1").arg(request.scenario_args.join(QLatin1Char(' '))));
  runner_->start(request);
  update_actions();
}

void MainWindow::cancel() {
  if (!runner_->running()) return;
  runner_->cancel();
}

void MainWindow::on_run_finished(const RunOutcome& outcome) {
  progress_->setVisible(false);
  switch (outcome.state) {
  case RunState::Finished:
    current_ = outcome.report;
    last_wall_s_ = outcome.wall_s;
    show_report();
    timeline_->set_trace(outcome.trace,
                         outcome.trace
                             ? QString()
                             : tr("no timeline: runs over %1 planned events record no trace").arg(kTraceEventLimit));
    timeline_->set_failure(current_->failure);
    replay_->set_trace(outcome.replay, tr("no replay: the run has no /reliability section"));
    {
      const auto failures = current_->figure("reliability/failures");
      const bool cut = outcome.replay && failures && static_cast<double>(outcome.replay->instant_count()) < *failures;
      replay_->set_note(cut ? tr("the timeline holds the replay's first 10,000 events (%1 of the run's %2 failures; "
                                 "the summary counts all)")
                                  .arg(outcome.replay->instant_count())
                                  .arg(*failures)
                            : QString());
    }
    set_status(current_->verdict == QLatin1String("out_of_memory")
                   ? tr("not simulated: out of memory (%1)").arg(current_->warnings.value(0))
                   : tr("finished in %1 s of wall time: makespan %2")
                         .arg(outcome.wall_s, 0, 'f', 2)
                         .arg(format_seconds(current_->makespan())));
    break;
  case RunState::InputError:
    form_->show_error(outcome.error);
    set_status(tr("invalid scenario: %1").arg(outcome.error.message));
    break;
  case RunState::Cancelled:
    set_status(tr("cancelled after %1 s").arg(outcome.wall_s, 0, 'f', 2));
    break;
  default:
    set_status(tr("run %1: %2").arg(to_string(outcome.state), outcome.error.message));
    break;
  }
  update_actions();
  emit run_finished(outcome.state);
}

void MainWindow::show_report() {
  summary_->set_current(current_);
  summary_->set_pinned(pinned_);
  ranks_->set_report(current_ ? *current_ : RunReport{});
  imbalance_->set_report(current_);
  imbalance_->set_pinned(pinned_);
  overhead_->set_report(current_);
  expert_load_->set_report(current_);
  serving_->set_report(current_);
  // The Serving tab only for a serving run: training reports keep their tabs.
  const bool serving = current_ && current_->serving.has_value();
  tabs_->setTabVisible(ServingTab, serving);
  if (serving && requested_tab_ == ServingTab) {
    tabs_->setCurrentIndex(ServingTab);
    requested_tab_.reset();
  }
  // The Replay tab only for a run with failures and checkpoints replayed (report.json `reliability`).
  const bool replayed = current_ && current_->figure("reliability/goodput").has_value();
  tabs_->setTabVisible(ReplayTab, replayed);
  if (replayed && requested_tab_ == ReplayTab) {
    tabs_->setCurrentIndex(ReplayTab);
    requested_tab_.reset();
  }
  overhead_->set_pinned(pinned_);
  speedup_->set_pinned(pinned_sweep_);
  warnings_->clear();
  run_caption_->setText(current_ ? QStringLiteral("%1<br><i>%2</i>")
                                       .arg(current_->scenario_name.toHtmlEscaped(), current_->strategy.toHtmlEscaped())
                                 : tr("no run yet"));
  if (current_) {
    for (const QString& w : current_->warnings) warnings_->addItem(w);
    if (current_->warnings.isEmpty()) warnings_->addItem(tr("none"));
  }
}

void MainWindow::pin() {
  if (!current_) return;
  pinned_ = current_;
  pinned_sweep_ = sweep_;
  show_report();
  set_status(tr("pinned: change parameters to compare against this run"));
  update_actions();
}

void MainWindow::unpin() {
  pinned_.reset();
  pinned_sweep_.reset();
  show_report();
  update_actions();
}

void MainWindow::start_sweep() {
  if (partsim_.isEmpty()) {
    speedup_->set_running(false, tr("partsim not found"));
    return;
  }
  QStringList values;
  for (const QString& v : speedup_->node_counts().split(QLatin1Char(','), Qt::SkipEmptyParts)) values << v.trimmed();
  if (values.isEmpty()) return;
  speedup_->set_running(true, tr("checking %1 points...").arg(values.size()));
  // Points the scenario refuses (more GPUs than partitions, a speed factor per node) are dropped up front, with
  // the reason: validation parses labels and builds plans, so it runs on a worker thread.
  const nlohmann::json doc = document_->document();
  const std::string source = document_->source();
  auto* watcher = new QFutureWatcher<std::pair<QStringList, QString>>(this);
  connect(watcher, &QFutureWatcher<std::pair<QStringList, QString>>::finished, this, [this, watcher] {
    const auto [valid, skipped] = watcher->result();
    watcher->deleteLater();
    if (valid.isEmpty()) {
      speedup_->set_running(false, tr("no valid point: %1").arg(skipped));
      emit sweep_finished(false);
      return;
    }
    SweepRequest request;
    request.program = partsim_;
    request.values = valid;
    request.jobs = std::max(1, QThread::idealThreadCount());
    request.scenario_args = document_->scenario_arguments();
    if (document_->path().isEmpty())
      request.scenario_file_text = QByteArray::fromStdString(document_->original().dump(2));
    sweeper_->start(request);
    speedup_->set_running(true, skipped.isEmpty()
                                    ? tr("sweeping /cluster/nodes over %1").arg(valid.join(QLatin1Char(',')))
                                    : tr("skipped %1").arg(skipped));
  });
  watcher->setFuture(QtConcurrent::run([doc, source, values] {
    QStringList valid;
    QString skipped;
    for (const QString& v : values) {
      nlohmann::json point = doc;
      bool ok = false;
      const int nodes = v.toInt(&ok);
      if (!ok) {
        skipped += QStringLiteral("%1 (not a number) ").arg(v);
        continue;
      }
      point["cluster"]["nodes"] = nodes;
      const Validation check = validate_scenario(point, source);
      if (check.ok)
        valid << v;
      else
        skipped += QStringLiteral("%1 nodes (%2) ").arg(v, check.error.message.section(QStringLiteral(": "), 1));
    }
    return std::pair<QStringList, QString>(valid, skipped.trimmed());
  }));
}

void MainWindow::start_search() {
  if (partsim_.isEmpty()) {
    search_->set_running(false, tr("partsim not found"));
    emit search_finished(false);
    return;
  }
  SearchRequest request;
  request.program = partsim_;
  request.axes = search_->axes();
  if (request.axes.isEmpty()) {
    search_->set_running(false, tr("no axis to search: give one per line, /json/pointer=v1,v2,..."));
    emit search_finished(false);
    return;
  }
  request.rank_by = search_->rank_by();
  request.tokens = search_->tokens();
  request.refine = search_->refine();
  request.jobs = std::max(1, QThread::idealThreadCount());
  request.scenario_args = document_->scenario_arguments();
  if (document_->path().isEmpty())
    request.scenario_file_text = QByteArray::fromStdString(document_->original().dump(2));
  searcher_->start(request);
  search_->set_running(true, tr("searching: %1").arg(searcher_->last_arguments().mid(1).join(QLatin1Char(' '))));
}

void MainWindow::load_candidate(std::size_t candidate) {
  const std::optional<SearchOutcome>& outcome = search_->outcome();
  if (!outcome || candidate >= outcome->candidates.size()) return;
  std::vector<Override> edits;
  try {
    edits = candidate_overrides(*outcome, candidate, document_->document());
  } catch (const InputError& e) {
    set_status(tr("cannot load point %1: %2").arg(outcome->candidates[candidate].point).arg(e.what()));
    return;
  }
  for (const Override& o : edits) {
    if (o.remove)
      document_->remove_value(o.pointer);
    else
      document_->set_value(o.pointer, o.value);
  }
  set_status(tr("loaded search point %1: %2")
                 .arg(outcome->candidates[candidate].point)
                 .arg(outcome->candidates[candidate].settings));
}

void MainWindow::set_auto_run(bool on) {
  auto_action_->setChecked(on);
}

void MainWindow::show_tab(Tab tab) {
  requested_tab_.reset();
  if (tabs_->isTabVisible(static_cast<int>(tab)))
    tabs_->setCurrentIndex(static_cast<int>(tab));
  else
    requested_tab_ = tab; // shown by show_report when it appears
}

bool MainWindow::tab_visible(Tab tab) const {
  return tabs_->isTabVisible(static_cast<int>(tab));
}

void MainWindow::update_actions() {
  const bool running = runner_->running();
  run_action_->setEnabled(!running);
  cancel_action_->setEnabled(running);
  cancel_button_->setVisible(running);
  pin_action_->setEnabled(current_.has_value());
  unpin_action_->setEnabled(pinned_.has_value());
}

QString MainWindow::status_text() const {
  return status_->text();
}

void MainWindow::set_status(const QString& text) {
  status_->setText(text);
  status_->setToolTip(text);
}

void MainWindow::add_recent(const QString& path) {
  QSettings settings;
  QStringList recent = settings.value(QStringLiteral("recent_files")).toStringList();
  recent.removeAll(path);
  recent.prepend(path);
  while (recent.size() > 8) recent.removeLast();
  settings.setValue(QStringLiteral("recent_files"), recent);
  rebuild_recent_menu();
}

void MainWindow::rebuild_recent_menu() {
  recent_menu_->clear();
  const QStringList recent = QSettings().value(QStringLiteral("recent_files")).toStringList();
  for (const QString& path : recent)
    recent_menu_
        ->addAction(QFileInfo(path).fileName(), this,
                    [this, path] {
                      const QString error = open_scenario(path);
                      if (!error.isEmpty()) set_status(error);
                    })
        ->setToolTip(path);
  recent_menu_->setEnabled(!recent.isEmpty());
}

QString MainWindow::export_chart(Tab tab, const QString& path) {
  QWidget* widget = nullptr;
  QString title;
  switch (tab) {
  case ImbalanceTab:
    widget = imbalance_->view();
    title = tr("Load imbalance");
    break;
  case OverheadTab:
    widget = overhead_->view();
    title = tr("Communication overhead");
    break;
  case SpeedupTab:
    widget = speedup_->view();
    title = tr("Speedup");
    break;
  case TimelineTab:
    widget = timeline_->canvas();
    title = tr("Timeline");
    break;
  case SearchTab:
    widget = search_->view();
    title = tr("Search");
    break;
  case ExpertLoadTab:
    widget = expert_load_->view();
    title = tr("Expert load");
    break;
  case ServingTab:
    widget = serving_; // its latency, TTFT/TPOT and over-time charts together
    title = tr("Serving");
    break;
  case ReplayTab:
    widget = replay_->canvas();
    title = tr("Failures and checkpoints");
    break;
  default:
    widget = tabs_->widget(static_cast<int>(tab));
    title = tr("Ranks");
    break;
  }
  return path.endsWith(QLatin1String(".svg"), Qt::CaseInsensitive) ? save_svg(widget, path, title)
                                                                   : save_png(widget, path);
}

QString MainWindow::export_report_json(const QString& path) const {
  if (!current_) return tr("no report yet: run first");
  return save_bytes(current_->json_text, path);
}

QString MainWindow::export_ranks_csv(const QString& path) const {
  if (!current_) return tr("no report yet: run first");
  return save_bytes(ranks_csv(*current_), path);
}

QString MainWindow::export_scenario(const QString& path) const {
  return save_bytes(document_->text(), path);
}

void MainWindow::export_dialog(bool chart, const QString& filter) {
  const QString path = QFileDialog::getSaveFileName(this, tr("Export"), QString(), filter);
  if (path.isEmpty()) return;
  QString error;
  if (chart)
    error = export_chart(static_cast<Tab>(tabs_->currentIndex()), path);
  else if (path.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive))
    error = export_ranks_csv(path);
  else
    error = export_report_json(path);
  set_status(error.isEmpty() ? tr("wrote %1").arg(path) : error);
}

} // namespace partsim::gui
