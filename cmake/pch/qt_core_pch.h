// ui/runner and ui/models: Qt's Core (CMake: tunebench_pch). A header compiled with a module's
// macro (QT_*_LIB) must match every file's, so each flavour takes only the modules its targets link.
#pragma once

#include "cmake/pch/common_pch.h"

#include <QtCore>
