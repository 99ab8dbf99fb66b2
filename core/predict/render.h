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

// The memory line every view of a prediction shows, with its fit verdict: "Memory per GPU: peak
// 114.4 GiB (optimizer step); needs 116.0 GiB of 139.8 GiB: fits"; CPU ranks: "Memory per rank:
// ...; needs 1.2 GiB x 2 ranks = 2.4 GiB of 23.5 GiB on this host: fits".
std::string memory_line(const Prediction& prediction);
// "fits", "tight: ...", "does not fit: ..." with the numbers; "" when the memory is unknown.
std::string fit_sentence(const Prediction& prediction);

}  // namespace tunebench::predict
