// The compatibility corpus: small programs that together cover every value type, argument kind,
// enum value, signature kind, DTensor placement (1-D and 2-D meshes), process group inputs, a
// subgraph and shared storages. `make_testdata` writes each as testdata/<name>.nrt and
// testdata/<name>.nrt.json; tests rebuild them and compare with the committed files, and every
// later version must keep loading the committed ones.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "serializer/json_form.h"

namespace nrt::testdata {

struct CorpusProgram {
  std::string name;
  std::function<ProgramWithWeights()> build;
};

const std::vector<CorpusProgram>& corpus_programs();

}  // namespace nrt::testdata
