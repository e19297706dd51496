#include "serializer/inline_data_text.h"

namespace nrt {
namespace {

bool is_space(char c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }

class Scanner {
 public:
  explicit Scanner(std::string_view json) : json_(json) { out_.text.reserve(json.size()); }

  Result<InlineDataExtraction> run() {
    while (at_ < json_.size()) {
      const char c = json_[at_];
      if (c == '"' || c == '\'') {
        NRT_RETURN_IF_ERROR(string_token(c));
        continue;
      }
      if (c == '/' && at_ + 1 < json_.size() && (json_[at_ + 1] == '/' || json_[at_ + 1] == '*')) {
        comment();
        continue;
      }
      out_.text += c;
      ++at_;
      if (c == '{' || c == '[') {
        open(c);
      } else if (c == '}' || c == ']') {
        close();
      }
    }
    return std::move(out_);
  }

 private:
  // FlatBuffers' lexer skips // and /* */ comments even in strict mode: so does this scanner
  // (copying them), so that it never sees structure the parser does not.
  void comment() {
    const bool line = json_[at_ + 1] == '/';
    const size_t end = line ? json_.find('\n', at_ + 2) : json_.find("*/", at_ + 2);
    const size_t stop = end == std::string_view::npos ? json_.size() : end + (line ? 0 : 2);
    out_.text += json_.substr(at_, stop - at_);
    at_ = stop;
  }

  // A string in double or single quotes (FlatBuffers' lexer takes both); when it is a key that
  // matters here, what follows it too. Only the double-quoted keys nrt prints are recognised:
  // anything else stays in the text for the parser.
  Status string_token(char quote) {
    const size_t start = at_++;
    while (at_ < json_.size() && json_[at_] != quote) at_ += json_[at_] == '\\' ? 2 : 1;
    at_ = std::min(at_ + 1, json_.size());
    const std::string_view token = json_.substr(start, at_ - start);
    out_.text += token;
    size_t next = at_;
    while (next < json_.size() && is_space(json_[next])) ++next;
    if (next >= json_.size() || json_[next] != ':') return {};  // a value, not a key
    size_t value = next + 1;
    while (value < json_.size() && is_space(json_[value])) ++value;
    if (value >= json_.size() || json_[value] != '[') return {};
    if (token == "\"storages\"" && stack_.size() == 1) storages_depth_ = stack_.size() + 1;
    if (token == "\"inline_data\"" && storages_depth_ != 0 && stack_.size() == storages_depth_ + 1) {
      out_.text += json_.substr(at_, value - at_);
      at_ = value;
      return bytes_array();
    }
    return {};
  }

  // "[n, n, ...]" at at_: parsed into the current storage, written out as "[]".
  Status bytes_array() {
    std::vector<uint8_t> bytes;
    ++at_;  // '['
    bool expect_value = true, first = true;
    while (true) {
      while (at_ < json_.size() && is_space(json_[at_])) ++at_;
      if (at_ >= json_.size()) return refuse("the array never ends");
      const char c = json_[at_];
      if (c == ']' && (first || !expect_value)) {
        ++at_;
        break;
      }
      if (expect_value) {
        unsigned value = 0;
        size_t digits = 0;
        const bool leading_zero = json_[at_] == '0';  // JSON allows no 01
        while (at_ < json_.size() && json_[at_] >= '0' && json_[at_] <= '9' && digits < 4) {
          value = value * 10 + static_cast<unsigned>(json_[at_] - '0');
          ++at_;
          ++digits;
        }
        if (digits == 0 || value > 255 || (leading_zero && digits > 1) ||
            (at_ < json_.size() && json_[at_] >= '0' && json_[at_] <= '9')) {
          return refuse("expected a byte value 0..255");
        }
        bytes.push_back(static_cast<uint8_t>(value));
        expect_value = false;
      } else if (c == ',') {
        ++at_;
        expect_value = true;
      } else {
        return refuse("expected ',' or ']'");
      }
      first = false;
    }
    if (!out_.storages.emplace(storage_index_, std::move(bytes)).second) return refuse("given twice");
    out_.text += "[]";
    return {};
  }

  void open(char c) {
    stack_.push_back(c);
    if (c == '{' && storages_depth_ != 0 && stack_.size() == storages_depth_ + 1) ++storage_count_;
    storage_index_ = storage_count_ - 1;
  }

  void close() {
    if (!stack_.empty()) stack_.pop_back();
    if (storages_depth_ != 0 && stack_.size() < storages_depth_) storages_depth_ = 0;
  }

  Error refuse(const std::string& what) const {
    return make_error(ErrorCode::JsonParse, "storage " + std::to_string(storage_index_) + " inline_data at byte " +
                                                std::to_string(at_) + ": " + what);
  }

  std::string_view json_;
  size_t at_ = 0;
  std::vector<char> stack_;     // open objects and arrays
  size_t storages_depth_ = 0;   // depth of the top-level "storages" array while inside it
  uint32_t storage_count_ = 0;  // storage objects opened so far
  uint32_t storage_index_ = 0;
  InlineDataExtraction out_;
};

}  // namespace

Result<InlineDataExtraction> extract_inline_data(std::string_view json) { return Scanner(json).run(); }

}  // namespace nrt
