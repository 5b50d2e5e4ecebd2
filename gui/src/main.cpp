// partsim-gui: what-if exploration of partitioning strategies. `--screenshot out.png [SCENARIO]` renders the
// window after a run (and optionally a sweep) to a PNG, for docs and tests.
#include "charts/imbalance_chart.hpp"
#include "charts/search_view.hpp"
#include "main_window.hpp"
#include "scenario_document.hpp"

#include "partsim/common/error.hpp"
#include "partsim/common/exit_codes.hpp"
#include "partsim/common/text.hpp"
#include "partsim/input/scenario.hpp"

#include <QApplication>
#include <QCommandLineParser>
#include <QTimer>

#include <cstdio>
#include <cstdlib>

namespace {
/** One printable line on stderr (escaped as partsim's own errors are), never an empty one. */
int fail(const QString& message) {
  const std::string text = partsim::printable(message.toStdString());
  std::fprintf(stderr, "partsim-gui: error: %s\n", text.empty() ? "(no message)" : text.c_str());
  return partsim::kExitInputError;
}
} // namespace

int main(int argc, char** argv) {
  // A screenshot needs no display: fall back to the offscreen platform when there is none.
  bool screenshot = false;
  for (int i = 1; i < argc; ++i) screenshot = screenshot || std::string_view(argv[i]) == "--screenshot";
  if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM") && qEnvironmentVariableIsEmpty("DISPLAY") &&
      qEnvironmentVariableIsEmpty("WAYLAND_DISPLAY"))
    qputenv("QT_QPA_PLATFORM", "offscreen");

  QApplication app(argc, argv);
  QApplication::setOrganizationName(QStringLiteral("partsim"));
  QApplication::setApplicationName(QStringLiteral("partsim-gui"));
  QCommandLineParser parser;
  parser.setApplicationDescription(QStringLiteral("partsim-gui: what-if exploration of partitioning strategies"));
  parser.addHelpOption();
  parser.addPositionalArgument(QStringLiteral("SCENARIO"), QStringLiteral("Scenario JSON file (default: built-in)"));
  const QCommandLineOption shot(QStringLiteral("screenshot"), QStringLiteral("Run, render the window to FILE, exit"),
                                QStringLiteral("FILE"));
  const QCommandLineOption set(QStringLiteral("set"), QStringLiteral("Edit a field before running: /pointer=json"),
                               QStringLiteral("PATH=VALUE"));
  const QCommandLineOption compare(QStringLiteral("compare-set"),
                                   QStringLiteral("Pin the first run, apply this edit, run again (screenshots)"),
                                   QStringLiteral("PATH=VALUE"));
  const QCommandLineOption tab(QStringLiteral("tab"),
                               QStringLiteral("Tab to show: imbalance, overhead, speedup, timeline, ranks, search, "
                                              "expert_load, serving (a serving run), replay (a run with /reliability)"),
                               QStringLiteral("NAME"), QStringLiteral("imbalance"));
  const QCommandLineOption sweep(QStringLiteral("sweep"),
                                 QStringLiteral("Also run the speedup sweep before the screenshot"));
  const QCommandLineOption search(QStringLiteral("search"),
                                  QStringLiteral("Also run the search view's search (its default space) before the "
                                                 "screenshot"));
  const QCommandLineOption search_vary(QStringLiteral("search-vary"),
                                       QStringLiteral("An axis of the --search instead of the view's defaults "
                                                      "(repeatable): /pointer=v1,v2,..."),
                                       QStringLiteral("PATH=V1,V2,..."));
  const QCommandLineOption size(QStringLiteral("size"), QStringLiteral("Window size WxH"), QStringLiteral("WxH"),
                                QStringLiteral("1500x950"));
  parser.addOptions({shot, set, compare, tab, sweep, search, search_vary, size});
  parser.process(app);

  partsim::gui::MainWindow window;
  const QStringList positional = parser.positionalArguments();
  if (!positional.isEmpty()) {
    const QString error = window.open_scenario(positional.first());
    if (!error.isEmpty()) return fail(error);
  }
  // The CLI's own --set parser: the same values, the same refusals (nesting, duplicate keys, bytes not UTF-8).
  QString set_error;
  auto apply = [&](const QString& text) -> bool {
    try {
      const partsim::Override o = partsim::parse_override(text.toStdString());
      window.document()->set_value(o.pointer, o.value);
      return true;
    } catch (const partsim::InputError& e) {
      set_error = QString::fromStdString(e.what());
      return false;
    }
  };
  for (const QString& s : parser.values(set))
    if (!apply(s)) return fail(set_error);

  // In MainWindow::Tab order.
  const QStringList tabs{QStringLiteral("imbalance"),   QStringLiteral("overhead"), QStringLiteral("speedup"),
                         QStringLiteral("timeline"),    QStringLiteral("ranks"),    QStringLiteral("search"),
                         QStringLiteral("expert_load"), QStringLiteral("serving"),  QStringLiteral("replay")};
  const qsizetype tab_index = tabs.indexOf(parser.value(tab));
  if (tab_index < 0) return fail(QStringLiteral("unknown --tab %1").arg(parser.value(tab)));
  window.show_tab(static_cast<partsim::gui::MainWindow::Tab>(tab_index));
  const QStringList wh = parser.value(size).split(QLatin1Char('x'));
  if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  window.show();
  if (!parser.isSet(shot)) return QApplication::exec();

  // Screenshot: run (the first valid run starts by itself when small; else press Run), optionally compare and
  // sweep, then grab.
  const QString out = parser.value(shot);
  QStringList compare_sets = parser.values(compare);
  const bool with_sweep = parser.isSet(sweep);
  const bool with_search = parser.isSet(search);
  if (parser.isSet(search_vary)) window.search_view()->set_axes(parser.values(search_vary));
  int exit_code = 0;
  auto grab = [&] {
    QTimer::singleShot(50, &window, [&] {
      window.repaint();
      const QString error = window.grab().save(out, "PNG") ? QString() : QStringLiteral("cannot write ") + out;
      if (!error.isEmpty()) exit_code = fail(error);
      QApplication::exit(exit_code);
    });
  };
  QObject::connect(&window, &partsim::gui::MainWindow::sweep_finished, &window, [&](bool) {
    if (with_search)
      window.start_search();
    else
      grab();
  });
  QObject::connect(&window, &partsim::gui::MainWindow::search_finished, &window, [&](bool) { grab(); });
  QObject::connect(&window, &partsim::gui::MainWindow::run_finished, &window, [&](partsim::gui::RunState state) {
    if (state != partsim::gui::RunState::Finished) {
      exit_code =
          fail(QStringLiteral("the run ended: %1: %2").arg(partsim::gui::to_string(state), window.status_text()));
      QApplication::exit(exit_code);
      return;
    }
    if (!compare_sets.isEmpty()) {
      window.pin();
      for (const QString& s : compare_sets) apply(s);
      compare_sets.clear();
      window.run();
      return;
    }
    if (with_sweep)
      window.start_sweep();
    else if (with_search)
      window.start_search();
    else
      grab();
  });
  QObject::connect(&window, &partsim::gui::MainWindow::validated, &window, [&](bool ok) {
    if (!ok) {
      exit_code = fail(window.status_text());
      QApplication::exit(exit_code);
    }
  });
  window.set_auto_run(false);
  window.run();
  QTimer::singleShot(120000, &window, [&] {
    exit_code = fail(QStringLiteral("timed out"));
    QApplication::exit(exit_code);
  });
  return QApplication::exec();
}
