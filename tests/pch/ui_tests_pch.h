// Precompiled once for every UI test executable (CMake: tunebench_add_ui_test): GoogleTest,
// nlohmann and Qt's Core, Gui, Widgets and Test modules, which each of them includes. Third-party
// headers only: no change of ours rebuilds it (docs/BENCHMARKS.md, "Build time").
#pragma once

#include "tests/pch/core_tests_pch.h"

#include <QtCore>
#include <QtGui>
#include <QtTest>
#include <QtWidgets>
