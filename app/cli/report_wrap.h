// Fitting `tunebench-cli report` to a terminal (100 columns by default; --wide prints it as is).
//
// Tables (runs of lines whose cells are separated by two or more spaces) are split into blocks
// of columns that fit, each block repeating the first column, a "ratio" column kept with the
// value before it; prose lines are word-wrapped with a hanging indent under their text ("1. ",
// "try: " and "- " markers included). Widths are counted in characters (UTF-8 code points), so
// "–" counts once. Pure text in, text out: the analysis' wording is not touched.
#pragma once

#include <string>

namespace tunebench::cli {

std::string fit_report(const std::string& text, size_t width = 100);

}  // namespace tunebench::cli
