// Writes Python pickles (protocol 2) of plain values: None, bools, ints, floats, strings, and
// tuples, lists and dicts of them, as Python's pickle.load reads them. No globals, no memo: what
// nrt writes for tools that read pickles (torch's flight-recorder analyzer).
//
//   PickleWriter w;
//   w.begin();                  // a dict's, list's or tuple's items follow
//   w.string("version"); w.string("2.10");
//   w.end_dict();
//   std::vector<uint8_t> bytes = w.finish();
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace nrt::pickle {

class PickleWriter {
 public:
  PickleWriter();

  void none();
  void boolean(bool value);
  void integer(int64_t value);
  void real(double value);
  void string(std::string_view text);  // UTF-8

  // begin(), the items, then one end_*: a dict's items alternate key, value.
  void begin();
  void end_tuple();
  void end_list();
  void end_dict();

  // The pickle, STOP included. The writer is spent.
  std::vector<uint8_t> finish();

 private:
  void put(uint8_t byte) { bytes_.push_back(byte); }
  void put_le(uint64_t value, int count);
  std::vector<uint8_t> bytes_;
};

}  // namespace nrt::pickle
