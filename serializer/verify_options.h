// How much `ProgramFile::open` checks. Structural and semantic checks always run; they never read
// weight bytes. `deep` adds the XXH3-128 checksum of every storage (reads all weights).
#pragma once

namespace nrt {

struct VerifyOptions {
  bool deep = false;
};

}  // namespace nrt
