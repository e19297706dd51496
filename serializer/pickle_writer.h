// Writes Python pickles (protocol 2) as Python's pickle.load reads them: None, bools, ints, floats,
// strings, tuples, lists and dicts of them, and the object opcodes torch.save's pickles use
// (GLOBAL, REDUCE, NEWOBJ, BUILD, BINPERSID). No memo: a value written twice is two values. What
// nrt writes for torch (flight-recorder dumps, DTensor weight records).
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

  // A global by module and name (pushes the class or function).
  void global(std::string_view module, std::string_view name);
  // Pops args and callable, pushes callable(*args).
  void reduce();
  // Pops args and class, pushes cls.__new__(cls, *args).
  void newobj();
  // Pops a state, applies it to the object below it (its __setstate__ or __dict__.update).
  void build();
  // Pops a value: the persistent id of what the unpickler's persistent_load returns.
  void persistent_id();

  // The pickle, STOP included. The writer is spent.
  std::vector<uint8_t> finish();

 private:
  void put(uint8_t byte) { bytes_.push_back(byte); }
  void put_le(uint64_t value, int count);
  std::vector<uint8_t> bytes_;
};

}  // namespace nrt::pickle
