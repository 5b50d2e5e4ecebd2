// What the sweep and search runners share: their partsim child in its own process group, and the scenario it runs.
#pragma once

#include <QByteArray>
#include <QObject>
#include <QProcess>
#include <QStringList>
#include <QTemporaryDir>

namespace partsim::gui {

/** The scenario arguments of a child run: `args`, preceded by DIR/scenario.json holding `text` when it is not empty
 * (the form's unsaved scenario). */
QStringList scenario_arguments(const QTemporaryDir& dir, const QStringList& args, const QByteArray& text);

/** A new child process of `parent` whose standard output is discarded, started in its own process group, so that
 * kill_group() also stops the simulations it starts. */
QProcess* group_process(QObject* parent);

/** Kills the process group of `process` (a group_process) and the process itself; the caller handles its end. */
void kill_group(QProcess& process);

} // namespace partsim::gui
