// tunebench-cli: CLI11 and nlohmann in every command's file (CMake: tunebench_pch).
#pragma once

#include "cmake/pch/common_pch.h"

#include <CLI/CLI.hpp>
