// What every chart of the window does alike: its QChart in an antialiased view, and clearing it before a rebuild.
#pragma once

#include <QAbstractAxis>
#include <QChart>
#include <QChartView>
#include <QLegend>

namespace partsim::gui {

/** A new chart (legend at the bottom, no animation: a rebuild must show at once) and its antialiased view, a child of
 * `parent`. */
inline QChartView* new_chart_view(QChart*& chart, QWidget* parent) {
  chart = new QChart;
  chart->legend()->setAlignment(Qt::AlignBottom);
  chart->setAnimationOptions(QChart::NoAnimation);
  auto* view = new QChartView(chart, parent);
  view->setRenderHint(QPainter::Antialiasing);
  return view;
}

/** Removes every series and axis of `chart`, deleting the axes (removeAllSeries deletes the series). */
inline void clear_chart(QChart* chart) {
  chart->removeAllSeries();
  for (QAbstractAxis* axis : chart->axes()) {
    chart->removeAxis(axis);
    delete axis;
  }
}

} // namespace partsim::gui
