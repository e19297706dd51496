#include "cli/terminal_style.h"

#include <unistd.h>

#include <cstdlib>

namespace nrt::cli {
namespace {

constexpr std::string_view kBold = "\033[1m";
constexpr std::string_view kRed = "\033[31m";
constexpr std::string_view kGreen = "\033[32m";
constexpr std::string_view kReset = "\033[0m";

}  // namespace

TerminalStyle TerminalStyle::for_stdout() {
  return TerminalStyle(isatty(STDOUT_FILENO) == 1 && std::getenv("NO_COLOR") == nullptr);
}

std::string TerminalStyle::wrap(std::string_view code, std::string_view text) const {
  if (!color_) return std::string(text);
  std::string out(code);
  out += text;
  out += kReset;
  return out;
}

std::string TerminalStyle::bold(std::string_view text) const { return wrap(kBold, text); }
std::string TerminalStyle::red(std::string_view text) const { return wrap(kRed, text); }
std::string TerminalStyle::green(std::string_view text) const { return wrap(kGreen, text); }

TextStyle TerminalStyle::text_style() const {
  if (!color_) return {};
  return TextStyle{std::string(kBold), std::string(kReset)};
}

}  // namespace nrt::cli
