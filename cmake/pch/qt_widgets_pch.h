// ui/plots, ui/windows and the GUI program: Qt's Widgets and QCustomPlot, which a file of theirs
// spends most of its compile time parsing (13 s a file without, 5 s with; docs/history/benchmarks-2026-12.md, "Second measurement").
#pragma once

#include "cmake/pch/common_pch.h"

#include <QtCore>
#include <QtGui>
#include <QtWidgets>
#include <qcustomplot.h>
