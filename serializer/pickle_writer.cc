#include "serializer/pickle_writer.h"

#include <cstring>

namespace nrt::pickle {

PickleWriter::PickleWriter() {
  put(0x80);  // PROTO 2
  put(2);
}

void PickleWriter::put_le(uint64_t value, int count) {
  for (int i = 0; i < count; ++i) put(static_cast<uint8_t>(value >> (8 * i)));
}

void PickleWriter::none() { put('N'); }

void PickleWriter::boolean(bool value) { put(value ? 0x88 : 0x89); }

void PickleWriter::integer(int64_t value) {
  if (value >= 0 && value < 256) {
    put('K');
    put(static_cast<uint8_t>(value));
  } else if (value >= INT32_MIN && value <= INT32_MAX) {
    put('J');
    put_le(static_cast<uint32_t>(static_cast<int32_t>(value)), 4);
  } else {
    put(0x8a);  // LONG1: 8 bytes of two's complement
    put(8);
    put_le(static_cast<uint64_t>(value), 8);
  }
}

void PickleWriter::real(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  put('G');  // BINFLOAT: big-endian
  for (int i = 7; i >= 0; --i) put(static_cast<uint8_t>(bits >> (8 * i)));
}

void PickleWriter::string(std::string_view text) {
  put('X');  // BINUNICODE
  put_le(text.size(), 4);
  bytes_.insert(bytes_.end(), text.begin(), text.end());
}

void PickleWriter::begin() { put('('); }
void PickleWriter::end_tuple() { put('t'); }
void PickleWriter::end_list() { put('l'); }
void PickleWriter::end_dict() { put('d'); }

void PickleWriter::global(std::string_view module, std::string_view name) {
  put('c');
  bytes_.insert(bytes_.end(), module.begin(), module.end());
  put('\n');
  bytes_.insert(bytes_.end(), name.begin(), name.end());
  put('\n');
}

void PickleWriter::reduce() { put('R'); }
void PickleWriter::newobj() { put(0x81); }
void PickleWriter::build() { put('b'); }
void PickleWriter::persistent_id() { put('Q'); }

std::vector<uint8_t> PickleWriter::finish() {
  put('.');
  return std::move(bytes_);
}

}  // namespace nrt::pickle
