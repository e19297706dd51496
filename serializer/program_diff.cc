#include "serializer/program_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "serializer/element_value.h"
#include "serializer/program_text.h"
#include "core/schema_enums.h"
#include "serializer/structure_hash.h"
#include "serializer/schema_access.h"

namespace nrt {
namespace {

constexpr auto kAlgorithm = HashAlgorithm::kXxh3;

std::string node_label(const fb::Graph& g, uint32_t n) {
  const auto* node = g.nodes()->Get(n);
  return node->name() ? "%" + node->name()->str() : "#" + std::to_string(n);
}

std::string node_line(const fb::Program& p, const fb::Graph& g, uint32_t n) {
  return node_label(g, n) + " = " + render_target(*p.operators()->Get(g.nodes()->Get(n)->op()));
}

// A node's shape for pairing: target (optionally) and its argument names.
std::string pairing_key(const fb::Program& p, const fb::Node& node, bool with_target) {
  std::string key = with_target ? render_target(*p.operators()->Get(node.op())) : "";
  for (uint32_t i = 0; i < vector_size(node.inputs()); ++i) {
    const auto* name = node.inputs()->Get(i)->name();
    key += "|" + (name ? name->str() : "");
  }
  return key + "|" + std::to_string(vector_size(node.outputs()));
}

class GraphDiffer {
 public:
  GraphDiffer(const fb::Program& pa, const fb::Graph& ga, const GraphDigests& da, const fb::Program& pb,
              const fb::Graph& gb, const GraphDigests& db)
      : pa_(pa), ga_(ga), da_(da), pb_(pb), gb_(gb), db_(db) {}

  GraphDiff run() {
    GraphDiff out;
    out.name = ga_.name()->str();
    if (da_.graph == db_.graph) return out;
    pair_nodes();
    assign_labels();
    const uint32_t na = vector_size(ga_.nodes()), nb = vector_size(gb_.nodes());
    for (uint32_t a = 0; a < na; ++a) {
      if (match_a_[a] < 0) {
        out.removed_nodes.push_back(node_line(pa_, ga_, a));
      } else if (da_.nodes[a] != db_.nodes[static_cast<uint32_t>(match_a_[a])]) {
        NodeChange change = compare_nodes(a, static_cast<uint32_t>(match_a_[a]));
        if (!change.changes.empty()) out.changed_nodes.push_back(std::move(change));
      }
    }
    for (uint32_t b = 0; b < nb; ++b) {
      if (match_b_[b] < 0) out.added_nodes.push_back(node_line(pb_, gb_, b));
    }
    compare_interface(out.interface_changes);
    return out;
  }

 private:
  void pair(uint32_t a, uint32_t b) {
    match_a_[a] = b;
    match_b_[b] = a;
  }

  void pair_nodes() {
    const uint32_t na = vector_size(ga_.nodes()), nb = vector_size(gb_.nodes());
    match_a_.assign(na, -1);
    match_b_.assign(nb, -1);
    // 1. Equal digests: the same computation on the same inputs.
    std::multimap<Digest, uint32_t> by_digest;
    for (uint32_t b = 0; b < nb; ++b) by_digest.emplace(db_.nodes[b], b);
    for (uint32_t a = 0; a < na; ++a) {
      auto it = by_digest.find(da_.nodes[a]);
      if (it != by_digest.end()) {
        pair(a, it->second);
        by_digest.erase(it);
      }
    }
    // 2. Same target and argument names, then 3. same argument names: in topological order.
    for (bool with_target : {true, false}) {
      std::multimap<std::string, uint32_t> by_key;
      for (uint32_t b = 0; b < nb; ++b) {
        if (match_b_[b] < 0) by_key.emplace(pairing_key(pb_, *gb_.nodes()->Get(b), with_target), b);
      }
      for (uint32_t a = 0; a < na; ++a) {
        if (match_a_[a] >= 0) continue;
        auto it = by_key.find(pairing_key(pa_, *ga_.nodes()->Get(a), with_target));
        if (it != by_key.end()) {
          pair(a, it->second);
          by_key.erase(it);
        }
      }
    }
  }

  static Digest label(uint64_t tag, int64_t node, uint64_t slot, uint64_t element) {
    StreamHasher h(kAlgorithm);
    h.u64(tag);
    h.i64(node);
    h.u64(slot);
    h.u64(element);
    return h.finish();
  }

  // Value identities through the pairing: a B value is (its node, slot, element); an A value is
  // the same when its node is paired, and unique to A otherwise. Graph inputs go by position.
  void assign_labels() {
    labels_a_.assign(vector_size(ga_.values()), Digest{});
    labels_b_.assign(vector_size(gb_.values()), Digest{});
    auto inputs = [](const fb::Graph& g, std::vector<Digest>& labels) {
      for (uint32_t i = 0; i < vector_size(g.inputs()); ++i) {
        const auto* h = g.inputs()->Get(i);
        const auto values = defined_values(h->arg_type(), h->arg());
        for (size_t e = 0; e < values.size(); ++e) {
          if (values[e] >= 0) labels[static_cast<size_t>(values[e])] = label(1, i, 0, e);
        }
      }
    };
    inputs(ga_, labels_a_);
    inputs(gb_, labels_b_);
    auto outputs = [](const fb::Graph& g, std::vector<Digest>& labels, auto&& node_id) {
      for (uint32_t n = 0; n < vector_size(g.nodes()); ++n) {
        const auto* node = g.nodes()->Get(n);
        for (uint32_t slot = 0; slot < vector_size(node->outputs()); ++slot) {
          const auto* h = node->outputs()->Get(slot);
          const auto values = defined_values(h->arg_type(), h->arg());
          for (size_t e = 0; e < values.size(); ++e) {
            if (values[e] >= 0) labels[static_cast<size_t>(values[e])] = node_id(n, slot, e);
          }
        }
      }
    };
    outputs(gb_, labels_b_, [](uint32_t n, uint32_t slot, size_t e) { return label(2, n, slot, e); });
    outputs(ga_, labels_a_, [this](uint32_t n, uint32_t slot, size_t e) {
      return match_a_[n] >= 0 ? label(2, match_a_[n], slot, e) : label(3, n, slot, e);
    });
  }

  NodeChange compare_nodes(uint32_t a, uint32_t b) {
    const auto* na = ga_.nodes()->Get(a);
    const auto* nb = gb_.nodes()->Get(b);
    NodeChange change{node_label(ga_, a), node_label(gb_, b), {}};
    const std::string ta = render_target(*pa_.operators()->Get(na->op()));
    const std::string tb = render_target(*pb_.operators()->Get(nb->op()));
    if (ta != tb) change.changes.push_back("target: " + ta + " -> " + tb);
    // Arguments by name (positional ones by position when unnamed).
    std::map<std::string, const fb::NamedArgument*> args_b;
    for (uint32_t i = 0; i < vector_size(nb->inputs()); ++i) {
      const auto* arg = nb->inputs()->Get(i);
      args_b[arg->name() ? arg->name()->str() : "#" + std::to_string(i)] = arg;
    }
    for (uint32_t i = 0; i < vector_size(na->inputs()); ++i) {
      const auto* arg_a = na->inputs()->Get(i);
      const std::string name = arg_a->name() ? arg_a->name()->str() : "#" + std::to_string(i);
      auto it = args_b.find(name);
      const std::string text_a = render_argument(arg_a->arg_type(), arg_a->arg(), ga_, pa_);
      if (it == args_b.end()) {
        change.changes.push_back("argument '" + name + "' removed (was " + text_a + ")");
        continue;
      }
      const auto* arg_b = it->second;
      args_b.erase(it);
      const Digest ha = hash_argument(pa_, ga_, arg_a->arg_type(), arg_a->arg(), labels_a_, kAlgorithm);
      const Digest hb = hash_argument(pb_, gb_, arg_b->arg_type(), arg_b->arg(), labels_b_, kAlgorithm);
      if (ha != hb || arg_a->kind() != arg_b->kind()) {
        change.changes.push_back("argument '" + name + "': " + text_a + " -> " +
                                 render_argument(arg_b->arg_type(), arg_b->arg(), gb_, pb_));
      }
    }
    for (const auto& [name, arg_b] : args_b) {
      change.changes.push_back("argument '" + name + "' added: " + render_argument(arg_b->arg_type(), arg_b->arg(), gb_, pb_));
    }
    // Result types by slot.
    const uint32_t slots = std::max(vector_size(na->outputs()), vector_size(nb->outputs()));
    for (uint32_t slot = 0; slot < slots; ++slot) {
      const std::string ra = slot < vector_size(na->outputs()) ? result_type(pa_, ga_, na->outputs()->Get(slot)) : "(none)";
      const std::string rb = slot < vector_size(nb->outputs()) ? result_type(pb_, gb_, nb->outputs()->Get(slot)) : "(none)";
      if (ra != rb) change.changes.push_back("result " + std::to_string(slot) + " type: " + ra + " -> " + rb);
    }
    return change;
  }

  static std::string result_type(const fb::Program& p, const fb::Graph& g, const fb::ArgumentHolder* h) {
    std::string text;
    for (int64_t v : defined_values(h->arg_type(), h->arg())) {
      if (!text.empty()) text += ", ";
      text += v < 0 ? "None" : render_type(*g.values()->Get(static_cast<uint32_t>(v)), p);
    }
    return text.empty() ? std::string(fb::EnumNameArgument(h->arg_type())) : text;
  }

  void compare_interface(std::vector<std::string>& out) {
    const uint32_t ni = std::max(vector_size(ga_.inputs()), vector_size(gb_.inputs()));
    for (uint32_t i = 0; i < ni; ++i) {
      const bool in_a = i < vector_size(ga_.inputs()), in_b = i < vector_size(gb_.inputs());
      const std::string ta = in_a ? result_type(pa_, ga_, ga_.inputs()->Get(i)) : "(none)";
      const std::string tb = in_b ? result_type(pb_, gb_, gb_.inputs()->Get(i)) : "(none)";
      if (ta != tb) out.push_back("input " + std::to_string(i) + " type: " + ta + " -> " + tb);
    }
    const uint32_t no = std::max(vector_size(ga_.outputs()), vector_size(gb_.outputs()));
    for (uint32_t i = 0; i < no; ++i) {
      if (i >= vector_size(ga_.outputs()) || i >= vector_size(gb_.outputs())) {
        out.push_back("output " + std::to_string(i) + (i >= vector_size(ga_.outputs()) ? " added" : " removed"));
        continue;
      }
      const auto* ha = ga_.outputs()->Get(i);
      const auto* hb = gb_.outputs()->Get(i);
      if (hash_argument(pa_, ga_, ha->arg_type(), ha->arg(), labels_a_, kAlgorithm) !=
          hash_argument(pb_, gb_, hb->arg_type(), hb->arg(), labels_b_, kAlgorithm)) {
        out.push_back("output " + std::to_string(i) + ": " + render_argument(ha->arg_type(), ha->arg(), ga_, pa_) +
                      " -> " + render_argument(hb->arg_type(), hb->arg(), gb_, pb_));
      }
    }
    if (da_.signature != db_.signature) compare_signature(out);
  }

  void compare_signature(std::vector<std::string>& out) {
    const auto* sa = ga_.signature();
    const auto* sb = gb_.signature();
    if (!sa || !sb) {
      out.push_back(std::string("signature ") + (sa ? "removed" : "added"));
      return;
    }
    auto spec_text = [](fb::InputKind kind, const flatbuffers::String* target) {
      return render_input_kind(kind) + (target && target->size() ? "(" + target->str() + ")" : "");
    };
    const uint32_t ni = std::max(vector_size(sa->inputs()), vector_size(sb->inputs()));
    for (uint32_t i = 0; i < ni; ++i) {
      const std::string a = i < vector_size(sa->inputs()) ? spec_text(sa->inputs()->Get(i)->kind(), sa->inputs()->Get(i)->target()) : "(none)";
      const std::string b = i < vector_size(sb->inputs()) ? spec_text(sb->inputs()->Get(i)->kind(), sb->inputs()->Get(i)->target()) : "(none)";
      if (a != b) out.push_back("input spec " + std::to_string(i) + ": " + a + " -> " + b);
    }
    auto out_text = [](fb::OutputKind kind, const flatbuffers::String* target) {
      return render_output_kind(kind) + (target && target->size() ? "(" + target->str() + ")" : "");
    };
    const uint32_t no = std::max(vector_size(sa->outputs()), vector_size(sb->outputs()));
    for (uint32_t i = 0; i < no; ++i) {
      const std::string a = i < vector_size(sa->outputs()) ? out_text(sa->outputs()->Get(i)->kind(), sa->outputs()->Get(i)->target()) : "(none)";
      const std::string b = i < vector_size(sb->outputs()) ? out_text(sb->outputs()->Get(i)->kind(), sb->outputs()->Get(i)->target()) : "(none)";
      if (a != b) out.push_back("output spec " + std::to_string(i) + ": " + a + " -> " + b);
    }
    if (out.empty()) out.push_back("signature: constant inputs or buffer persistence differ");
  }

  const fb::Program& pa_;
  const fb::Graph& ga_;
  const GraphDigests& da_;
  const fb::Program& pb_;
  const fb::Graph& gb_;
  const GraphDigests& db_;
  std::vector<int64_t> match_a_, match_b_;
  std::vector<Digest> labels_a_, labels_b_;
};

std::string mesh_text(const fb::DeviceMesh& m) {
  std::string text = render_device_type(m.device_type()) + " shape [";
  for (uint32_t i = 0; i < vector_size(m.shape()); ++i) text += (i ? "," : "") + std::to_string(m.shape()->Get(i));
  text += "] ranks [";
  for (uint32_t i = 0; i < vector_size(m.ranks()); ++i) text += (i ? "," : "") + std::to_string(m.ranks()->Get(i));
  return text + "]";
}

std::string group_text(const fb::ProcessGroup& g) {
  std::string text = "ranks [";
  for (uint32_t i = 0; i < vector_size(g.ranks()); ++i) text += (i ? "," : "") + std::to_string(g.ranks()->Get(i));
  text += "] backend " + (g.backend() ? g.backend()->str() : std::string("?"));
  if (g.mesh() >= 0) text += " mesh " + std::to_string(g.mesh()) + " dim " + std::to_string(g.mesh_dim());
  return text;
}

// Compares named entries of two lists; `text` renders an entry's content.
template <typename T, typename Text>
void diff_named(const flatbuffers::Vector<flatbuffers::Offset<T>>* a, const flatbuffers::Vector<flatbuffers::Offset<T>>* b,
                Text text, std::vector<std::string>& out) {
  std::map<std::string, std::string> ma, mb;
  for (uint32_t i = 0; i < vector_size(a); ++i) ma[a->Get(i)->name() ? a->Get(i)->name()->str() : "#" + std::to_string(i)] = text(*a->Get(i));
  for (uint32_t i = 0; i < vector_size(b); ++i) mb[b->Get(i)->name() ? b->Get(i)->name()->str() : "#" + std::to_string(i)] = text(*b->Get(i));
  for (const auto& [name, t] : ma) {
    auto it = mb.find(name);
    if (it == mb.end()) {
      out.push_back("'" + name + "' removed (" + t + ")");
    } else if (it->second != t) {
      out.push_back("'" + name + "': " + t + " -> " + it->second);
    }
  }
  for (const auto& [name, t] : mb) {
    if (!ma.count(name)) out.push_back("'" + name + "' added (" + t + ")");
  }
}

// Visits every element offset (in elements) of a literal strided view, row-major.
template <typename F>
void for_each_element(const fb::TensorMeta& meta, F&& f) {
  const uint32_t rank = vector_size(meta.sizes());
  std::vector<int64_t> sizes(rank), strides(rank), index(rank, 0);
  for (uint32_t d = 0; d < rank; ++d) {
    sizes[d] = meta.sizes()->Get(d)->literal();
    strides[d] = meta.strides() ? meta.strides()->Get(d)->literal() : 0;
    if (sizes[d] == 0) return;
  }
  const int64_t base = meta.storage_offset() ? meta.storage_offset()->literal() : 0;
  while (true) {
    int64_t offset = base;
    for (uint32_t d = 0; d < rank; ++d) offset += index[d] * strides[d];
    f(offset);
    int d = static_cast<int>(rank) - 1;
    while (d >= 0 && ++index[static_cast<size_t>(d)] == sizes[static_cast<size_t>(d)]) index[static_cast<size_t>(d--)] = 0;
    if (d < 0) return;
  }
}

void diff_weights(const ProgramFile& a, const ProgramFile& b, std::vector<WeightChange>& out) {
  std::map<std::string, uint32_t> wa, wb;
  const auto& pa = a.program();
  const auto& pb = b.program();
  for (uint32_t i = 0; i < vector_size(pa.weights()); ++i) wa[pa.weights()->Get(i)->fqn()->str()] = i;
  for (uint32_t i = 0; i < vector_size(pb.weights()); ++i) wb[pb.weights()->Get(i)->fqn()->str()] = i;
  for (const auto& [fqn, ia] : wa) {
    auto it = wb.find(fqn);
    if (it == wb.end()) {
      out.push_back({fqn, "removed", std::nullopt});
      continue;
    }
    const auto* x = pa.weights()->Get(ia);
    const auto* y = pb.weights()->Get(it->second);
    const std::string ma = render_tensor_meta(x->meta()), mb = render_tensor_meta(y->meta());
    if (ma != mb) {
      out.push_back({fqn, "metadata: " + ma + " -> " + mb, std::nullopt});
      continue;
    }
    const auto bytes_a = a.storage_bytes(x->storage());
    const auto bytes_b = b.storage_bytes(y->storage());
    const size_t elem = element_size(x->meta()->dtype());
    bool differs = false;
    std::optional<double> max_diff;
    for_each_element(*x->meta(), [&](int64_t offset) {
      const uint8_t* ea = bytes_a.data() + static_cast<size_t>(offset) * elem;
      const uint8_t* eb = bytes_b.data() + static_cast<size_t>(offset) * elem;
      if (std::equal(ea, ea + elem, eb)) return;
      differs = true;
      auto va = element_as_double(x->meta()->dtype(), ea);
      auto vb = element_as_double(x->meta()->dtype(), eb);
      if (va && vb) {
        const double d = std::isnan(*va) || std::isnan(*vb) ? std::numeric_limits<double>::infinity() : std::fabs(*va - *vb);
        max_diff = std::max(max_diff.value_or(0.0), d);
      }
    });
    if (differs) out.push_back({fqn, "bytes", max_diff});
  }
  for (const auto& [fqn, ib] : wb) {
    if (!wa.count(fqn)) out.push_back({fqn, "added", std::nullopt});
  }
}

}  // namespace

ProgramDiff diff_programs(const ProgramFile& a, const ProgramFile& b) {
  const auto& pa = a.program();
  const auto& pb = b.program();
  const StructureDigests da = hash_structure(pa, kAlgorithm);
  const StructureDigests db = hash_structure(pb, kAlgorithm);
  ProgramDiff out;
  std::map<std::string, uint32_t> ga, gb;
  for (uint32_t i = 0; i < vector_size(pa.graphs()); ++i) ga[pa.graphs()->Get(i)->name()->str()] = i;
  for (uint32_t i = 0; i < vector_size(pb.graphs()); ++i) gb[pb.graphs()->Get(i)->name()->str()] = i;
  for (const auto& [name, ia] : ga) {
    auto it = gb.find(name);
    if (it == gb.end()) {
      out.graphs_removed.push_back(name);
      continue;
    }
    GraphDiff g = GraphDiffer(pa, *pa.graphs()->Get(ia), da.graphs[ia], pb, *pb.graphs()->Get(it->second),
                              db.graphs[it->second])
                      .run();
    if (!g.empty()) out.graphs.push_back(std::move(g));
  }
  for (const auto& [name, ib] : gb) {
    if (!ga.count(name)) out.graphs_added.push_back(name);
  }
  diff_named(pa.meshes(), pb.meshes(), mesh_text, out.mesh_changes);
  diff_named(pa.process_groups(), pb.process_groups(), group_text, out.group_changes);
  diff_weights(a, b, out.weights);
  return out;
}

}  // namespace nrt
