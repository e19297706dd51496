// Colors on stdout, decided once: only when stdout is a terminal and NO_COLOR is not set (any
// value, even empty, turns color off). Without color every function returns its text unchanged,
// so redirected output and NO_COLOR output carry no escape bytes.
#pragma once

#include <string>
#include <string_view>

#include "serializer/program_text.h"

namespace nrt::cli {

class TerminalStyle {
 public:
  explicit TerminalStyle(bool color) : color_(color) {}
  static TerminalStyle for_stdout();

  bool color() const { return color_; }
  std::string bold(std::string_view text) const;
  std::string red(std::string_view text) const;
  std::string green(std::string_view text) const;
  // For program_text: operator names in bold.
  TextStyle text_style() const;

 private:
  std::string wrap(std::string_view code, std::string_view text) const;
  bool color_;
};

}  // namespace nrt::cli
