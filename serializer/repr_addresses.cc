#include "serializer/repr_addresses.h"

#include <cctype>

namespace nrt {

std::string canonicalize_reprs(std::string_view text, bool* changed) {
  *changed = false;
  std::string out;
  out.reserve(text.size());
  size_t open = std::string_view::npos;  // position of the last '<' not yet closed
  size_t i = 0;
  while (i < text.size()) {
    const char c = text[i];
    if (c == '<') open = i;
    if (c == '>') open = std::string_view::npos;
    if (open != std::string_view::npos && text.compare(i, 6, " at 0x") == 0) {
      size_t end = i + 6;
      while (end < text.size() && std::isxdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end > i + 6) {
        out += " at 0x?";
        *changed = true;
        i = end;
        continue;
      }
    }
    out += c;
    ++i;
  }
  return out;
}

}  // namespace nrt
