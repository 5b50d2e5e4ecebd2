// Where partsim-gui finds the `partsim` binary it runs as a child process.
#pragma once

#include <QString>

namespace partsim::gui {

/** `$PARTSIM_BIN` when set; else the partsim of the build tree this GUI was built in; else one next to the GUI
 * executable; else the first `partsim` on PATH. Empty when none is found. */
QString find_partsim_binary();

} // namespace partsim::gui
