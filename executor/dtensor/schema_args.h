// The pieces of the schema's object API (ProgramT) the sharding code reads and writes: literal
// dims, dense strides, node arguments by name or position, and arguments to build nodes with.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "schema/nrt_generated.h"

namespace nrt::dist {

// The literals of `dims`; nullopt when one is symbolic (or absent).
std::optional<std::vector<int64_t>> literal_sizes(const std::vector<std::unique_ptr<fb::SymDimT>>& dims);
std::vector<std::unique_ptr<fb::SymDimT>> literal_dims(const std::vector<int64_t>& values);

// Dense strides for `sizes` laying dims out in the order `like` does (largest stride first, ties
// in dim order); contiguous without `like` (or when its length differs).
std::vector<int64_t> dense_strides(const std::vector<int64_t>& sizes,
                                   const std::optional<std::vector<int64_t>>& like = std::nullopt);

// The argument called `name`, else the unnamed one at `position`, of the kind asked; nullopt when
// absent or of another kind.
std::optional<int64_t> int_argument(const fb::NodeT& node, std::string_view name, size_t position);
std::optional<bool> bool_argument(const fb::NodeT& node, std::string_view name, size_t position);
std::optional<std::vector<int64_t>> int_list_argument(const fb::NodeT& node, std::string_view name, size_t position);

fb::ArgumentUnion tensor_arg(uint32_t value);
fb::ArgumentUnion int_arg(int64_t value);
fb::ArgumentUnion bool_arg(bool value);
fb::ArgumentUnion string_arg(std::string value);
fb::ArgumentUnion int_list_arg(std::vector<int64_t> values);
std::unique_ptr<fb::NamedArgumentT> named(std::string name, fb::ArgumentUnion arg);  // POSITIONAL
std::unique_ptr<fb::ArgumentHolderT> output_of(uint32_t value);                        // a TensorArg

}  // namespace nrt::dist
