// Precompiled once for every GoogleTest executable of tests/core and tests/app (CMake:
// tunebench_add_test). Third-party and standard headers only: no change of ours rebuilds it.
// Parsing these took about 60 % of a test file's compile (docs/BENCHMARKS.md, "Build time").
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
