// A prediction as text (terminals, forum posts) and as JSON (scripts, `tunebench-cli predict
// --json`). Unknown figures are null in JSON and "unknown" in text, never 0.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "core/predict/predictor.h"

namespace tunebench::predict {

std::string render_text(const Prediction& prediction);
nlohmann::json render_json(const Prediction& prediction);

// "1.2 GiB", "512 MiB"
std::string format_bytes(double bytes);

}  // namespace tunebench::predict
