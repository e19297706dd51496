// Hand-written torch.export ExportedProgram JSON for the tests, built with nlohmann::json in the
// shape torch 2.12 writes (schema 8.20, None written as null).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace nrt::test {

using Json = nlohmann::json;

// TensorMeta of a contiguous CPU tensor (dtype in the export schema's numbering).
Json tensor_meta(std::vector<int64_t> sizes, int dtype = 7);
Json as_tensor(const std::string& name);
Json named(const std::string& name, Json arg, Json kind = 1);
Json node(const std::string& target, Json inputs, Json outputs, const std::string& name);
// A Graph with empty value tables; callers fill them.
Json graph(Json inputs, Json outputs, Json nodes);
// A whole ExportedProgram around `graph` and its signature.
Json exported_program(Json graph, Json input_specs, Json output_specs);

// x: f32[2,3] -> relu -> y, one user input, one user output.
Json relu_program();

}  // namespace nrt::test
