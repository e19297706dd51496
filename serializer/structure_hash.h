// The structure digest: a canonical walk of a verified program that sees topology, targets,
// constants, value types, signatures, DTensor placements, meshes and process groups, and never
// names, metadata, builder layout or memory addresses.
//
// Each value gets an identity digest: a graph input's from its position and type, a node
// output's from its node's digest and slot. A node's digest covers its target, argument names and
// kinds, constants, the identities of the values it reads and the types it produces, so renaming
// values or reordering independent nodes leaves every digest unchanged (a Merkle DAG; the graph
// digest takes the node digests as a sorted multiset). Nodes with effects (collectives,
// with_effects, ops producing nothing) also chain to the previous effectful node: reordering two
// collectives changes the digest, since ranks must issue them in the same order.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "schema/nrt_generated.h"
#include "serializer/argument_values.h"
#include "serializer/digest.h"

namespace nrt {

struct GraphDigests {
  Digest graph;                      // the graph as a whole (includes its signature)
  Digest signature;                  // input and output specs alone
  std::vector<Digest> nodes;         // by node index in the file
  std::vector<Digest> values;        // identity of each value, by value index
};

struct StructureDigests {
  Digest program;
  std::vector<GraphDigests> graphs;  // by graph index in the file
  std::vector<std::string> unstable_reprs;  // strings that carried object addresses
};

// `program` must have passed verification (ProgramFile guarantees it).
StructureDigests hash_structure(const fb::Program& program, HashAlgorithm algorithm);

// For diff: one argument's digest with value references standing for `identities` (by value
// index), and one value type's digest.
Digest hash_argument(const fb::Program& program, const fb::Graph& graph, fb::Argument type, const void* arg,
                     std::span<const Digest> identities, HashAlgorithm algorithm);
Digest hash_value_type(const fb::Program& program, const fb::Value& value, HashAlgorithm algorithm);

// True for targets whose order matters beyond data dependencies.
bool has_effects(const fb::Operator& op, const fb::Node& node);

}  // namespace nrt
