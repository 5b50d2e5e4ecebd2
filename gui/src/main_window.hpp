// MainWindow: the scenario form, run control, and the charts of the current (and pinned) run.
#pragma once

#include "run/search_runner.hpp"
#include "run/simulation_runner.hpp"
#include "run/sweep_runner.hpp"
#include "run/validator.hpp"
#include "run_report.hpp"
#include "sweep_result.hpp"

#include <QMainWindow>
#include <QTimer>

#include <optional>

class QAction;
class QLabel;
class QListWidget;
class QMenu;
class QProgressBar;
class QPushButton;
class QTabWidget;
class QTableView;

namespace partsim::gui {

class ImbalanceChart;
class OverheadChart;
class ExpertLoadChart;
class RankModel;
class SearchView;
class ServingView;
class ScenarioDocument;
class ScenarioForm;
class SpeedupChart;
class SummaryModel;
class TimelineView;

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  /** Runs planned at or below this many events record trace.json for the timeline. */
  static constexpr std::uint64_t kTraceEventLimit = 300'000;
  /** Edits re-run automatically when the run plans at most this many events (about 3 us each: under a second)
   * and the last run took under a second of wall time. */
  static constexpr std::uint64_t kAutoRunEventLimit = 150'000;
  /** Edits are validated (and maybe re-run) this long after the last one. */
  static constexpr int kDebounceMs = 300;

  /** In tab order. The Serving tab is shown only for a report with a `serving` section, the Replay tab (failures and
   * checkpoints over the whole run) only for one with a `reliability` section. */
  enum Tab {
    ImbalanceTab,
    OverheadTab,
    SpeedupTab,
    TimelineTab,
    RanksTab,
    SearchTab,
    ExpertLoadTab,
    ServingTab,
    ReplayTab,
    NUM_TABS
  };

  explicit MainWindow(QWidget* parent = nullptr);
  ~MainWindow() override;

  /** Opens a scenario file (empty: the built-in default). Returns an error line or "". */
  QString open_scenario(const QString& path);
  void run();
  void cancel();
  void pin();
  void unpin();
  void start_sweep();
  /** Runs `partsim search` of the current scenario over the search view's axes. */
  void start_search();
  /** Loads a candidate of the last search into the form: its fixed, axis and derived values (edits). */
  void load_candidate(std::size_t candidate);
  void set_auto_run(bool on);
  /** Shows a tab; a tab hidden now (Serving, before a serving run) is shown when it appears. */
  void show_tab(Tab tab);
  /** Whether a tab is shown (the Serving tab only for a serving run). */
  bool tab_visible(Tab tab) const;

  /** Exports the chart of a tab (PNG, or SVG when the path ends in .svg). Returns an error message or "". */
  QString export_chart(Tab tab, const QString& path);
  QString export_report_json(const QString& path) const;
  QString export_ranks_csv(const QString& path) const;
  QString export_scenario(const QString& path) const;

  // For tests and --screenshot.
  ScenarioDocument* document() const { return document_; }
  ScenarioForm* form() const { return form_; }
  SimulationRunner* runner() const { return runner_; }
  SweepRunner* sweeper() const { return sweeper_; }
  SearchRunner* searcher() const { return searcher_; }
  SearchView* search_view() const { return search_; }
  ImbalanceChart* imbalance_chart() const { return imbalance_; }
  OverheadChart* overhead_chart() const { return overhead_; }
  ExpertLoadChart* expert_load_chart() const { return expert_load_; }
  ServingView* serving_view() const { return serving_; }
  SpeedupChart* speedup_chart() const { return speedup_; }
  TimelineView* timeline() const { return timeline_; }
  /** The Replay tab: a run with /reliability replayed over failures and checkpoints (reliability_trace.json). */
  TimelineView* replay() const { return replay_; }
  SummaryModel* summary_model() const { return summary_; }
  RankModel* rank_model() const { return ranks_; }
  QListWidget* warnings() const { return warnings_; }
  const std::optional<RunReport>& current_report() const { return current_; }
  const std::optional<RunReport>& pinned_report() const { return pinned_; }
  const std::optional<Validation>& validation() const { return validation_; }
  QString status_text() const;
  int runs_started() const { return runs_started_; }

 signals:
  /** Every run's end (finished, cancelled, failed...). */
  void run_finished(partsim::gui::RunState state);
  void sweep_finished(bool ok);
  void search_finished(bool ok);
  void validated(bool ok);

 private:
  void build_menus();
  void on_loaded();
  void on_edited();
  void on_validated(const Validation& v);
  void on_run_finished(const RunOutcome& outcome);
  void start_run();
  void validate_now();
  void show_report();
  void update_actions();
  void add_recent(const QString& path);
  void rebuild_recent_menu();
  void set_status(const QString& text);
  void export_dialog(bool chart, const QString& filter);

  ScenarioDocument* document_ = nullptr;
  ScenarioForm* form_ = nullptr;
  Validator* validator_ = nullptr;
  SimulationRunner* runner_ = nullptr;
  SweepRunner* sweeper_ = nullptr;
  SearchRunner* searcher_ = nullptr;
  SummaryModel* summary_ = nullptr;
  RankModel* ranks_ = nullptr;
  ImbalanceChart* imbalance_ = nullptr;
  OverheadChart* overhead_ = nullptr;
  ExpertLoadChart* expert_load_ = nullptr;
  ServingView* serving_ = nullptr;
  SpeedupChart* speedup_ = nullptr;
  TimelineView* timeline_ = nullptr;
  TimelineView* replay_ = nullptr;
  SearchView* search_ = nullptr;
  QTabWidget* tabs_ = nullptr;
  QTableView* summary_view_ = nullptr;
  QListWidget* warnings_ = nullptr;
  QLabel* run_caption_ = nullptr;
  QLabel* status_ = nullptr;
  QProgressBar* progress_ = nullptr;
  QPushButton* cancel_button_ = nullptr;
  QMenu* recent_menu_ = nullptr;
  QAction* run_action_ = nullptr;
  QAction* cancel_action_ = nullptr;
  QAction* auto_action_ = nullptr;
  QAction* pin_action_ = nullptr;
  QAction* unpin_action_ = nullptr;
  QTimer debounce_;

  QString partsim_;
  std::optional<Validation> validation_;
  std::optional<RunReport> current_;
  std::optional<RunReport> pinned_;
  std::optional<SweepResult> sweep_;
  std::optional<SweepResult> pinned_sweep_;
  bool run_after_validation_ = false;
  double last_wall_s_ = -1;
  int runs_started_ = 0;
  std::optional<Tab> requested_tab_; ///< show_tab's tab while it is hidden
};

} // namespace partsim::gui
