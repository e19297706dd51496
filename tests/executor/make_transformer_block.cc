// Writes the end-to-end transformer block program (transformer_block_program.h, default shape:
// batch 2, sequence 8, D=32, 4 heads, MLP 64) as tests/executor/data/transformer_block.nrt and its
// .nrt.json twin, from which make_goldens.py reads the weights. Regenerate (then run
// make_goldens.py and review the diff):
//   bazel run //tests/executor:make_transformer_block -- $PWD/tests/executor/data
#include <cstdio>
#include <string>
#include <utility>

#include "serializer/open_program.h"
#include "tests/executor/transformer_block_program.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_transformer_block OUT_DIR\n");
    return 2;
  }
  const std::string base = std::string(argv[1]) + "/transformer_block";
  for (auto [path, format] : {std::pair{base + ".nrt", nrt::ProgramFormat::kNrt},
                              std::pair{base + ".nrt.json", nrt::ProgramFormat::kNrtJson}}) {
    if (nrt::Status s = nrt::save_program(nrt::testing::transformer_block_program(), path, format); !s) {
      std::fprintf(stderr, "make_transformer_block: %s\n", s.error().to_string().c_str());
      return 1;
    }
    std::printf("wrote %s\n", path.c_str());
  }
  return 0;
}
