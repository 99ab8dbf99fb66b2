// Precompiled into the libraries and programs that parse nlohmann and the standard library in
// nearly every file (CMake: tunebench_pch). Third-party headers only: no change of ours rebuilds
// a precompiled header (docs/BENCHMARKS.md, "Build time").
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
