#include "app/cli/report_wrap.h"

#include <algorithm>
#include <sstream>
#include <vector>

namespace tunebench::cli {

namespace {
using Chars = std::u32string;

Chars decode(const std::string& s) {
  Chars out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    const int n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    char32_t cp = n == 1 ? c : c & (0x3f >> (n - 1));
    for (int k = 1; k < n && i + size_t(k) < s.size(); ++k)
      cp = (cp << 6) | (static_cast<unsigned char>(s[i + size_t(k)]) & 0x3f);
    out.push_back(cp);
    i += size_t(n);
  }
  return out;
}

std::string encode(const Chars& s) {
  std::string out;
  for (char32_t c : s) {
    if (c < 0x80) {
      out += char(c);
    } else if (c < 0x800) {
      out += char(0xc0 | (c >> 6));
      out += char(0x80 | (c & 0x3f));
    } else if (c < 0x10000) {
      out += char(0xe0 | (c >> 12));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    } else {
      out += char(0xf0 | (c >> 18));
      out += char(0x80 | ((c >> 12) & 0x3f));
      out += char(0x80 | ((c >> 6) & 0x3f));
      out += char(0x80 | (c & 0x3f));
    }
  }
  return out;
}

size_t indent_of(const Chars& line) {
  size_t i = 0;
  while (i < line.size() && line[i] == U' ') ++i;
  return i;
}

// A table row: a gap of two or more spaces between cells after the indent.
bool is_table_row(const Chars& line) {
  const size_t start = indent_of(line);
  const auto gap = line.find(U"  ", start);
  return gap != Chars::npos && gap + 2 < line.size() && line.find_first_not_of(U' ', gap) != Chars::npos;
}

Chars rtrim(Chars s) {
  while (!s.empty() && s.back() == U' ') s.pop_back();
  return s;
}

std::vector<Chars> split_table(const std::vector<Chars>& rows, size_t width) {
  size_t longest = 0;
  for (const Chars& r : rows) longest = std::max(longest, r.size());
  if (longest <= width) return rows;
  // Gutters: positions blank in every row. Columns are the runs between gutters of 2+ blanks.
  std::vector<bool> blank(longest, true);
  for (const Chars& r : rows)
    for (size_t i = 0; i < r.size(); ++i)
      if (r[i] != U' ') blank[i] = false;
  std::vector<std::pair<size_t, size_t>> cols;  // [start, end)
  const size_t indent = indent_of(rows.front());
  size_t i = indent;
  while (i < longest) {
    while (i < longest && blank[i]) ++i;
    if (i >= longest) break;
    size_t end = i;
    while (end < longest) {
      if (blank[end]) {
        size_t run = end;
        while (run < longest && blank[run]) ++run;
        if (run - end >= 2 || run == longest) break;
        end = run;
        continue;
      }
      ++end;
    }
    cols.emplace_back(i, end);
    i = end;
  }
  if (cols.size() < 3) return rows;  // nothing to split into blocks
  auto cell = [&](const Chars& r, size_t c) {
    const auto [a, b] = cols[c];
    return a >= r.size() ? Chars() : r.substr(a, std::min(b, r.size()) - a);
  };
  auto header_is = [&](size_t c, const Chars& text) {
    Chars h = cell(rows.front(), c);
    h.erase(0, h.find_first_not_of(U' '));
    return rtrim(h) == text;
  };
  // Groups of value columns; a "ratio" column stays with the value before it.
  std::vector<std::vector<size_t>> units;
  for (size_t c = 1; c < cols.size(); ++c) {
    if (header_is(c, U"ratio") && !units.empty())
      units.back().push_back(c);
    else
      units.push_back({c});
  }
  const size_t first = cols[0].second;  // indent + first column
  std::vector<std::vector<size_t>> blocks(1);
  size_t used = first;
  for (const auto& unit : units) {
    size_t w = 0;
    for (size_t c : unit) w += (cols[c].second - cols[c].first) + 2;
    if (!blocks.back().empty() && used + w > width) {
      blocks.emplace_back();
      used = first;
    }
    for (size_t c : unit) blocks.back().push_back(c);
    used += w;
  }
  std::vector<Chars> out;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) out.push_back(Chars());
    for (const Chars& r : rows) {
      Chars line = r.substr(0, std::min(first, r.size()));
      line.resize(first, U' ');
      for (size_t c : blocks[b]) {
        line += U"  ";
        Chars v = cell(r, c);
        v.resize(cols[c].second - cols[c].first, U' ');
        line += v;
      }
      out.push_back(rtrim(line));
    }
  }
  return out;
}

std::vector<Chars> wrap_prose(const Chars& line, size_t width) {
  if (line.size() <= width) return {line};
  const size_t indent = indent_of(line);
  // Continuation lines start under the text, after a list marker when there is one.
  size_t hang = indent + 2;
  const Chars rest = line.substr(indent);
  if (rest.rfind(U"try: ", 0) == 0)
    hang = indent + 5;
  else if (rest.rfind(U"- ", 0) == 0)
    hang = indent + 2;
  else {
    size_t d = 0;
    while (d < rest.size() && rest[d] >= U'0' && rest[d] <= U'9') ++d;
    if (d > 0 && d + 1 < rest.size() && rest[d] == U'.' && rest[d + 1] == U' ') hang = indent + d + 2;
  }
  hang = std::min(hang, width / 2);
  std::vector<Chars> out;
  Chars current = line.substr(0, indent);
  size_t pos = indent;
  bool firstWord = true;
  while (pos < line.size()) {
    size_t end = line.find(U' ', pos);
    if (end == Chars::npos) end = line.size();
    Chars word = line.substr(pos, end - pos);
    const size_t needed = current.size() + (firstWord ? 0 : 1) + word.size();
    if (!firstWord && needed > width) {
      out.push_back(rtrim(current));
      current = Chars(hang, U' ');
      firstWord = true;
    }
    while (current.size() + word.size() > width && word.size() > width - hang) {  // a word longer than a line
      const size_t take = width - current.size() - (firstWord ? 0 : 1);
      if (!firstWord) current += U' ';
      current += word.substr(0, take);
      out.push_back(current);
      word.erase(0, take);
      current = Chars(hang, U' ');
      firstWord = true;
    }
    if (!firstWord) current += U' ';
    current += word;
    firstWord = false;
    pos = end;
    while (pos < line.size() && line[pos] == U' ') ++pos;
  }
  if (!rtrim(current).empty()) out.push_back(rtrim(current));
  return out;
}
}  // namespace

std::string fit_report(const std::string& text, size_t width) {
  width = std::max<size_t>(width, 40);
  std::vector<Chars> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(decode(l));
  std::string out;
  for (size_t i = 0; i < lines.size();) {
    size_t j = i;
    while (j < lines.size() && is_table_row(lines[j])) ++j;
    std::vector<Chars> block;
    if (j - i >= 2) {
      block = split_table(std::vector<Chars>(lines.begin() + long(i), lines.begin() + long(j)), width);
      // A table that cannot be split (two columns) is wrapped like prose, row by row.
      std::vector<Chars> fitted;
      for (const Chars& l : block)
        for (Chars& w : wrap_prose(l, width)) fitted.push_back(std::move(w));
      block = std::move(fitted);
      i = j;
    } else {
      block = wrap_prose(lines[i], width);
      ++i;
    }
    for (const Chars& l : block) out += encode(l) + "\n";
  }
  return out;
}

}  // namespace tunebench::cli
