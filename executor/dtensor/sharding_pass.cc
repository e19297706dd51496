#include "executor/dtensor/sharding_pass.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <unordered_set>

#include "executor/dtensor/dtensor_ops.h"
#include "executor/dtensor/redistribute.h"
#include "executor/dtensor/schema_args.h"
#include "executor/dtensor/schema_placements.h"
#include "executor/dtensor/sharding_rules.h"
#include "executor/runtime/op_facts.h"
#include "serializer/schema_access.h"

namespace nrt::dist {
namespace {

struct State {
  Placements placements;
  std::vector<int64_t> global;
};

std::string target_of(const fb::ProgramT& p, const fb::NodeT& n) {
  if (n.op >= p.operators.size()) return "?";
  const auto& op = *p.operators[n.op];
  return op.overload.empty() ? op.name : op.name + "." + op.overload;
}

class Pass {
 public:
  Pass(ShardingResult& result, const ShardingOptions& options) : r_(result), p_(result.program), options_(options) {}

  Status run() {
    NRT_TRY(graph_index, graph_index_of());
    graph_ = p_.graphs[*graph_index].get();
    NRT_RETURN_IF_ERROR(bind_mesh());
    add_groups();
    rebind_dim_groups();
    step_op_ = operator_index(kRedistributeStepTarget);
    state_.resize(graph_->values.size());
    declared_.resize(graph_->values.size());
    NRT_RETURN_IF_ERROR(read_declared());
    // The graph is rebuilt node by node; binding the inputs may put steps first (strided weights).
    std::vector<std::unique_ptr<fb::NodeT>> nodes = std::move(graph_->nodes);
    graph_->nodes.clear();
    NRT_RETURN_IF_ERROR(shard_inputs());
    read_wanted(nodes);
    for (auto& node : nodes) {
      // An error names the node it arose at (planning fails only on what the verifier cannot see).
      const std::string where = "graph '" + graph_->name + "' node '" + node->name + "' (" + target_of(p_, *node) + "): ";
      if (Status s = plan_node(std::move(node)); !s) return make_error(s.error().code, where + s.error().message);
    }
    NRT_RETURN_IF_ERROR(finish_outputs());
    // Every value is local now: the program is a plain one.
    for (auto& v : graph_->values) {
      if (v->kind == fb::ValueKind::DTENSOR) v->kind = fb::ValueKind::TENSOR;
      v->dtensor.reset();
    }
    return {};
  }

 private:
  Result<uint32_t> graph_index_of() const {
    if (options_.graph.empty()) {
      if (p_.entry_points.empty()) return make_error(ErrorCode::NoEntryPoint, "program lists no entry point");
      return p_.entry_points[0];
    }
    for (uint32_t g = 0; g < p_.graphs.size(); ++g) {
      if (p_.graphs[g]->name == options_.graph) return g;
    }
    return make_error(ErrorCode::InvalidArgument, "no graph named '" + options_.graph + "'");
  }

  Status bind_mesh() {
    std::optional<uint32_t> used;
    for (const auto& v : graph_->values) {
      if (v->kind != fb::ValueKind::DTENSOR || !v->dtensor) continue;
      if (used && *used != v->dtensor->mesh) {
        return make_error(ErrorCode::NotSupported, "graph '" + graph_->name + "': DTensors on meshes " +
                                                       std::to_string(*used) + " and " +
                                                       std::to_string(v->dtensor->mesh) +
                                                       " (one mesh per graph runs)");
      }
      used = v->dtensor->mesh;
    }
    if (!used) return make_error(ErrorCode::InvalidArgument, "graph '" + graph_->name + "' has no DTensor value");
    mesh_index_ = *used;
    r_.mesh = mesh_from_schema(*p_.meshes[mesh_index_], mesh_index_);
    const Mesh& mesh = r_.mesh;
    if (static_cast<int64_t>(mesh.ranks.size()) != options_.world_size) {
      std::string shape;
      for (auto s : mesh.shape) shape += (shape.empty() ? "" : "x") + std::to_string(s);
      return make_error(ErrorCode::InvalidArgument,
                        "mesh '" + mesh.name + "' (" + shape + ") has " + std::to_string(mesh.ranks.size()) +
                            " ranks; the world has " + std::to_string(options_.world_size) +
                            (options_.world_size == 1 ? " (run it under mpirun -np " + std::to_string(mesh.ranks.size()) + ")"
                                                      : ""));
    }
    auto coordinate = mesh.coordinate_of(options_.rank);
    if (!coordinate) {
      return make_error(ErrorCode::InvalidArgument,
                        "mesh '" + mesh.name + "' does not hold rank " + std::to_string(options_.rank));
    }
    r_.coordinate = *coordinate;
    return {};
  }

  // One group per mesh dim and group, in the same order on every rank.
  // Linear in the mesh: each dim's groups are made from their first members (coordinate 0 on the
  // dim; every other rank's group is one of those), named in row-major order of them; names are
  // checked against a set.
  void add_groups() {
    const Mesh& mesh = r_.mesh;
    std::unordered_set<std::string> taken;
    for (const auto& g : p_.process_groups) taken.insert(g->name);
    for (int64_t d = 0; d < mesh.ndim(); ++d) {
      const auto dim = static_cast<size_t>(d);
      const std::string dim_name = dim < mesh.dim_names.size() ? mesh.dim_names[dim] : std::to_string(d);
      int index = 0;
      for (size_t flat = 0; flat < mesh.ranks.size(); ++flat) {
        const std::vector<int64_t> coordinate = mesh.coordinate_at(static_cast<int64_t>(flat));
        if (coordinate[dim] != 0) continue;
        std::vector<int32_t> ranks = mesh.group_ranks(d, coordinate);
        auto group = std::make_unique<fb::ProcessGroupT>();
        const std::string base = mesh.name + "." + dim_name + "." + std::to_string(index++);
        group->name = base;
        for (int k = 1; taken.count(group->name); ++k) group->name = base + "~" + std::to_string(k);
        taken.insert(group->name);
        group->ranks = ranks;
        group->backend = "mpi";
        group->mesh = static_cast<int32_t>(mesh_index_);
        group->mesh_dim = static_cast<int32_t>(d);
        if (std::find(ranks.begin(), ranks.end(), options_.rank) != ranks.end()) group_names_.push_back(group->name);
        p_.process_groups.push_back(std::move(group));
      }
    }
  }

  // A process group the file ties to a dim of this mesh stands for that dim's group: torch names
  // a mesh dim's group alike on every rank (a per-rank archive's collectives name it), and the file
  // lists the group of coordinate 0. The graph's collectives on it run on this rank's group along
  // the dim, one add_groups made.
  void rebind_dim_groups() {
    std::map<uint32_t, uint32_t> rebound;  // group -> this rank's group along its dim
    for (uint32_t g = 0; g < p_.process_groups.size(); ++g) {
      const auto& group = *p_.process_groups[g];
      if (group.mesh != static_cast<int32_t>(mesh_index_) || group.mesh_dim < 0 ||
          static_cast<size_t>(group.mesh_dim) >= group_names_.size() ||
          group.name == group_names_[static_cast<size_t>(group.mesh_dim)]) {
        continue;
      }
      for (uint32_t h = 0; h < p_.process_groups.size(); ++h) {
        if (p_.process_groups[h]->name == group_names_[static_cast<size_t>(group.mesh_dim)]) rebound[g] = h;
      }
    }
    if (rebound.empty()) return;
    for (auto& node : graph_->nodes) {
      for (auto& input : node->inputs) {
        if (auto* arg = input->arg.AsProcessGroupArg(); arg && rebound.count(arg->group)) arg->group = rebound[arg->group];
      }
    }
  }

  // The operator of `target` ("namespace::name.overload", as target_of makes it), found or added.
  uint32_t operator_index(std::string_view target) {
    const auto [name, overload] = split_operator_target(target);
    for (uint32_t i = 0; i < p_.operators.size(); ++i) {
      if (p_.operators[i]->name == name && p_.operators[i]->overload == overload) return i;
    }
    auto op = std::make_unique<fb::OperatorT>();
    op->name = name;
    op->overload = overload;
    p_.operators.push_back(std::move(op));
    return static_cast<uint32_t>(p_.operators.size() - 1);
  }

  std::string where(uint32_t v) const { return "graph '" + graph_->name + "' value '" + graph_->values[v]->name + "'"; }

  Result<std::vector<int64_t>> global_sizes(uint32_t v) const {
    const auto& value = *graph_->values[v];
    const auto& dims = value.dtensor ? value.dtensor->global_sizes : value.tensor->sizes;
    auto sizes = literal_sizes(dims);
    if (!sizes) return make_error(ErrorCode::NotSupported, where(v) + ": symbolic sizes do not shard yet");
    return *sizes;
  }

  bool is_tensor(uint32_t v) const {
    const auto& value = *graph_->values[v];
    return (value.kind == fb::ValueKind::TENSOR || value.kind == fb::ValueKind::DTENSOR) && value.tensor;
  }

  Status read_declared() {
    for (uint32_t v = 0; v < graph_->values.size(); ++v) {
      const auto& value = *graph_->values[v];
      if (value.kind != fb::ValueKind::DTENSOR || !value.dtensor) continue;
      NRT_TRY(placements, from_schema(value.dtensor->placements));
      NRT_TRY(global, global_sizes(v));
      NRT_RETURN_IF_ERROR(check_placements(*placements, static_cast<int64_t>(global->size()), r_.mesh.ndim(), where(v)));
      declared_[v] = State{*placements, *global};
    }
    return {};
  }

  // The placements the program wants each value in, read backwards from its declared values
  // through the ops whose output keeps its inputs' placements (elementwise): a draw that feeds
  // them is drawn in those placements (each rank its own elements) instead of whole and sliced.
  void read_wanted(const std::vector<std::unique_ptr<fb::NodeT>>& nodes) {
    wanted_.assign(graph_->values.size(), std::nullopt);
    for (uint32_t v = 0; v < graph_->values.size(); ++v) {
      if (declared_[v]) wanted_[v] = declared_[v];
    }
    for (auto it = nodes.rbegin(); it != nodes.rend(); ++it) {
      const fb::NodeT& node = **it;
      if (node.outputs.size() != 1) continue;
      const auto* out = node.outputs[0]->arg.AsTensorArg();
      if (out == nullptr || !wanted_[out->value] || !keeps_input_placements(target_of(p_, node))) continue;
      for (const auto& a : node.inputs) {
        const auto* t = a->arg.AsTensorArg();
        if (t == nullptr || wanted_[t->value]) continue;
        auto sizes = global_sizes(t->value);
        if (sizes && *sizes == wanted_[out->value]->global) wanted_[t->value] = wanted_[out->value];
      }
    }
  }

  Placements replicated() const { return Placements(static_cast<size_t>(r_.mesh.ndim()), Placement::replicate()); }

  Result<State> state_of(uint32_t v) {
    if (!state_[v]) {
      NRT_TRY(global, global_sizes(v));
      state_[v] = State{replicated(), *global};
    }
    return *state_[v];
  }

  // The value's metadata for this rank's shard of `state`; strides keep the recorded dim order.
  Status set_local_meta(fb::ValueT& value, const State& state) {
    NRT_TRY(region, shard_region(state.global, state.placements, r_.mesh.shape, r_.coordinate));
    auto& meta = *value.tensor;
    meta.sizes = literal_dims(region->sizes);
    meta.strides = literal_dims(dense_strides(region->sizes, literal_sizes(meta.strides)));
    return {};
  }

  uint32_t add_value(const fb::ValueT& like, const std::string& name) {
    auto v = std::make_unique<fb::ValueT>();
    v->name = unique_value_name(name);
    v->kind = fb::ValueKind::TENSOR;
    v->tensor = std::make_unique<fb::TensorMetaT>(*like.tensor);
    graph_->values.push_back(std::move(v));
    state_.emplace_back();
    declared_.emplace_back();
    return static_cast<uint32_t>(graph_->values.size() - 1);
  }

  std::string unique_value_name(const std::string& name) {
    std::string candidate = name;
    for (int k = 1; value_names().contains(candidate); ++k) candidate = name + "_" + std::to_string(k);
    names_.insert(candidate);
    return candidate;
  }

  const std::set<std::string>& value_names() {
    if (names_.empty()) {
      for (const auto& v : graph_->values) names_.insert(v->name);
    }
    return names_;
  }

  // Inserts the steps taking `v` to `to`; the last defines `into` when given (else a new value).
  // `to` is taken by value: it may name an entry of declared_, which adding values grows.
  Result<uint32_t> convert(uint32_t v, Placements to, std::vector<PlannedStep>& record,
                           std::optional<uint32_t> into = std::nullopt) {
    NRT_TRY(from, state_of(v));
    NRT_TRY(steps, plan_redistribute(from->placements, to));
    if (steps->empty() && !into) return v;
    const std::string base = graph_->values[v]->name;
    uint32_t current = v;
    for (size_t s = 0; s < steps->size(); ++s) {
      const RedistributeStep& step = (*steps)[s];
      NRT_TRY(region, shard_region(from->global, step.before, r_.mesh.shape, r_.coordinate, step.mesh_dim));
      const bool last = s + 1 == steps->size();
      const uint32_t out = last && into ? *into : add_value(*graph_->values[v], base + "_" + to_string(step.after));
      State out_state{step.after, from->global};
      NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[out], out_state));
      state_[out] = out_state;

      auto node = std::make_unique<fb::NodeT>();
      node->name = "redistribute_step_" + std::to_string(step_count_++);
      node->op = step_op_;
      node->inputs.push_back(named("input", tensor_arg(current)));
      node->inputs.push_back(named("from", string_arg(to_string(step.from))));
      node->inputs.push_back(named("to", string_arg(to_string(step.to))));
      node->inputs.push_back(named("region", int_list_arg(region->sizes)));
      node->inputs.push_back(named("group_name", string_arg(group_names_[static_cast<size_t>(step.mesh_dim)])));
      node->outputs.push_back(output_of(out));
      graph_->nodes.push_back(std::move(node));
      record.push_back({base, step.mesh_dim, step.from, step.to, step_collective(step)});
      current = out;
    }
    if (steps->empty()) {
      // Already in place, but `into` must be defined: a copy.
      NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[*into], *from));
      state_[*into] = *from;
      auto node = std::make_unique<fb::NodeT>();
      node->name = "redistribute_step_" + std::to_string(step_count_++);
      node->op = operator_index(kCloneTarget);
      node->inputs.push_back(named("self", tensor_arg(v)));
      node->outputs.push_back(output_of(*into));
      graph_->nodes.push_back(std::move(node));
      return *into;
    }
    return current;
  }

  Status shard_inputs() {
    std::map<int32_t, fb::InputSpecT*> spec_of;
    if (graph_->signature) {
      for (const auto& spec : graph_->signature->inputs) spec_of[spec->value] = spec.get();
    }
    for (const auto& holder : graph_->inputs) {
      const auto* t = holder->arg.AsTensorArg();
      if (!t) continue;
      const uint32_t v = t->value;
      if (!declared_[v]) continue;
      state_[v] = declared_[v];
      const State s = *declared_[v];  // a copy: binding a whole weight grows declared_
      auto it = spec_of.find(static_cast<int32_t>(v));
      const fb::InputKind kind = it == spec_of.end() ? fb::InputKind::USER_INPUT : it->second->kind;
      if (kind == fb::InputKind::USER_INPUT) {
        r_.inputs.push_back({graph_->values[v]->name, s.global, s.placements});
      } else if (kind == fb::InputKind::PARAMETER || kind == fb::InputKind::BUFFER ||
                 kind == fb::InputKind::TENSOR_CONSTANT) {
        NRT_TRY(region, shard_region(s.global, s.placements, r_.mesh.shape, r_.coordinate));
        if (const fb::WeightTensorT* local = local_weight(it->second->target)) {
          NRT_RETURN_IF_ERROR(bind_local_weight(*local, s, *region, v));
          NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[v], s));
          continue;
        }
        if (!region->contiguous()) {
          NRT_RETURN_IF_ERROR(bind_whole_weight(*holder, *it->second, v, s));
          continue;
        }
        NRT_RETURN_IF_ERROR(view_weight_shard(it->second->target, s, v));
      }
      NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[v], s));
    }
    return {};
  }

  // A strided shard is not one view of the stored weight: the whole weight is bound, and steps at
  // the start of the graph copy this rank's chunks out of it (reading only their pages).
  Status bind_whole_weight(fb::ArgumentHolderT& holder, fb::InputSpecT& spec, uint32_t v, const State& s) {
    const uint32_t whole = add_value(*graph_->values[v], graph_->values[v]->name);
    std::swap(graph_->values[v]->name, graph_->values[whole]->name);  // the bound input keeps its name
    const State replicate{replicated(), s.global};
    NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[whole], replicate));
    state_[whole] = replicate;
    holder.arg.AsTensorArg()->value = whole;
    spec.value = static_cast<int32_t>(whole);
    PlannedNodeSharding planned{spec.target, "weight", "strided weight: copied", {replicated()}, s.placements, {}, {}, {}};
    NRT_TRY(done, convert(whole, s.placements, planned.steps, v));
    r_.nodes.push_back(std::move(planned));
    return {};
  }

  // The weight of `fqn` when it holds one rank's local shard (a per-rank archive), else null.
  const fb::WeightTensorT* local_weight(const std::string& fqn) const {
    for (const auto& w : p_.weights) {
      if (w->fqn == fqn) return w->shard_coordinate.empty() ? nullptr : w.get();
    }
    return nullptr;
  }

  // A per-rank archive's weight is already this rank's shard: it runs only at its coordinate, and
  // its sizes must be the shard's.
  Status bind_local_weight(const fb::WeightTensorT& w, const State& s, const ShardRegion& region, uint32_t v) {
    if (w.shard_coordinate != r_.coordinate) {
      return make_error(ErrorCode::InvalidArgument,
                        where(v) + ": weight '" + w.fqn + "' holds the shard of mesh coordinate " +
                            coordinate_text(w.shard_coordinate) + ", but rank " + std::to_string(options_.rank) +
                            " sits at " + coordinate_text(r_.coordinate) +
                            ": give each rank its own archive (FILE with {rank}), or merge the ranks' archives "
                            "with nrt-inspect convert");
    }
    auto sizes = literal_sizes(w.meta->sizes);
    for (const auto& p : s.placements) {
      if (p.is_partial()) return make_error(ErrorCode::NotSupported, where(v) + ": a Partial weight does not run");
    }
    if (!sizes || *sizes != region.sizes) {
      return make_error(ErrorCode::InvalidShape, where(v) + ": weight '" + w.fqn + "' holds a local shard of sizes " +
                                                     coordinate_text(sizes ? *sizes : std::vector<int64_t>{}) +
                                                     " but this rank's shard is " + coordinate_text(region.sizes));
    }
    return {};
  }

  // A DTensor weight is stored whole: this rank's shard is a view of it.
  Status view_weight_shard(const std::string& fqn, const State& s, uint32_t v) {
    for (const auto& w : p_.weights) {
      if (w->fqn != fqn) continue;
      for (const auto& p : s.placements) {
        if (p.is_partial()) return make_error(ErrorCode::NotSupported, where(v) + ": a Partial weight does not run");
      }
      auto sizes = literal_sizes(w->meta->sizes);
      auto strides = literal_sizes(w->meta->strides);
      if (!sizes || !strides || *sizes != s.global) {
        return make_error(ErrorCode::InvalidArgument, where(v) + ": weight '" + fqn + "' is not stored as its global tensor");
      }
      NRT_TRY(region, shard_region(s.global, s.placements, r_.mesh.shape, r_.coordinate));
      int64_t offset = w->meta->storage_offset ? w->meta->storage_offset->literal : 0;
      bool empty = false;
      for (size_t d = 0; d < sizes->size(); ++d) empty |= region->sizes[d] == 0;
      for (size_t d = 0; d < sizes->size() && !empty; ++d) offset += region->offsets[d] * (*strides)[d];
      w->meta->sizes = literal_dims(region->sizes);
      if (!w->meta->storage_offset) w->meta->storage_offset = std::make_unique<fb::SymDimT>();
      w->meta->storage_offset->literal = offset;
      return {};
    }
    return make_error(ErrorCode::InvalidArgument, where(v) + ": no weight '" + fqn + "'");
  }

  Status plan_node(std::unique_ptr<fb::NodeT> node) {
    const std::string target = target_of(p_, *node);
    const ShardingEntry* entry = sharding_entry(target);
    const NodePlanning planning = entry ? entry->planning : NodePlanning::kByRule;
    // Tensor arguments, and whether any is not whole on every rank.
    std::vector<uint32_t*> args;
    std::vector<std::string> arg_names;  // of `args`
    std::vector<std::vector<uint32_t>*> lists;
    bool distributed = false;
    for (auto& a : node->inputs) {
      if (auto* t = a->arg.AsTensorArg()) {
        args.push_back(&t->value);
        arg_names.push_back(a->name);
      }
      if (auto* o = a->arg.AsOptionalTensorArg(); o && o->value >= 0) {
        args.push_back(reinterpret_cast<uint32_t*>(&o->value));
        arg_names.push_back(a->name);
      }
      if (auto* l = a->arg.AsTensorListArg()) lists.push_back(&l->values);
    }
    // A value brought into its declared placements after the node making it is read by later
    // nodes as that node produced it: the declared form is for the program's outputs (and
    // to_local, which reads a DTensor in its declared placements).
    if (planning != NodePlanning::kToLocal) {
      for (auto* v : args) *v = as_produced(*v);
      for (auto* l : lists) {
        for (auto& v : *l) v = as_produced(v);
      }
    }
    auto sharded = [&](uint32_t v) { return state_[v] && !all_replicate(state_[v]->placements); };
    for (auto* v : args) distributed |= sharded(*v);
    for (auto* l : lists) {
      for (auto v : *l) distributed |= sharded(v);
    }
    std::vector<uint32_t> outputs;
    for (const auto& o : node->outputs) {
      if (const auto* t = o->arg.AsTensorArg()) outputs.push_back(t->value);
      if (const auto* l = o->arg.AsTensorListArg()) outputs.insert(outputs.end(), l->values.begin(), l->values.end());
    }
    bool declared_output = false;
    for (auto v : outputs) declared_output |= declared_[v].has_value();
    // A draw whose consumers want it sharded is drawn sharded (read_wanted).
    const bool wanted_draw = planning == NodePlanning::kDraw && !outputs.empty() && wanted_[outputs[0]] &&
                             !all_replicate(wanted_[outputs[0]]->placements);
    declared_output |= wanted_draw;
    // Ops that only look at metadata run on the shards as they are.
    if (planning == NodePlanning::kMetadataOnly && outputs.empty()) distributed = false;
    if (!distributed && !declared_output) {
      graph_->nodes.push_back(std::move(node));
      return {};
    }

    PlannedNodeSharding planned{node->name, target, "replicate", {}, replicated(), {}, {}, {}};
    if (planning == NodePlanning::kRedistribute && args.size() == 1 && outputs.size() == 1 && declared_[outputs[0]]) {
      // The program's own redistribution: planned steps into its declared output.
      planned.rule = "redistribute";
      planned.output = declared_[outputs[0]]->placements;
      NRT_TRY(done, convert(*args[0], planned.output, planned.steps, outputs[0]));
      r_.nodes.push_back(std::move(planned));
      return {};
    }

    if ((planning == NodePlanning::kFromLocal || planning == NodePlanning::kToLocal) && outputs.size() == 1 &&
        args.size() <= 1) {
      planned.rule = "local";
      NRT_RETURN_IF_ERROR(
          plan_local_boundary(*node, target, planning == NodePlanning::kFromLocal, args, outputs[0], planned));
      graph_->nodes.push_back(std::move(node));
      r_.nodes.push_back(std::move(planned));
      return {};
    }

    if (planning == NodePlanning::kArgReduce && args.size() == 1) {
      if (auto handled = plan_arg_reduce(node, entry->arg_reduction, *args[0], planned)) {
        NRT_RETURN_IF_ERROR(*handled);
        r_.nodes.push_back(std::move(planned));
        return {};
      }
    }
    std::optional<RuleDecision> decision;
    std::vector<RuleInput> rule_inputs;
    // A list rule (cat's) sees the listed tensors as its inputs.
    const bool list_rule = args.empty() && lists.size() == 1 && !lists[0]->empty() && entry && entry->list_input;
    std::vector<uint32_t*> rule_values = args;
    if (list_rule) {
      rule_values.clear();
      for (auto& v : *lists[0]) rule_values.push_back(&v);
    }
    // Rules see a strided shard as whole: its chunks are gathered before the node (a strided
    // shard is kept through redistribution and at the program's edges only).
    for (auto* v : rule_values) {
      NRT_TRY(s, state_of(*v));
      Placements seen = s->placements;
      for (auto& p : seen) {
        if (p.kind == Placement::Kind::kStridedShard) p = Placement::replicate();
      }
      rule_inputs.push_back({seen, s->global});
    }
    if ((lists.empty() || list_rule) && !outputs.empty() && is_tensor(outputs[0])) {
      NRT_TRY(out_global, global_sizes(outputs[0]));
      decision = propagate(target, *node, rule_inputs, *out_global, r_.mesh.shape);
      // A rule speaks for a node of several outputs only when it gives them all its placements.
      if (decision && outputs.size() > 1 && !decision->every_output) decision.reset();
      if (planning == NodePlanning::kDraw && !list_rule) {
        // native_dropout's mask has its output's shape: both take the draw's placements.
        bool same_shapes = true;
        for (auto v : outputs) {
          auto sizes = global_sizes(v);
          same_shapes = same_shapes && sizes && *sizes == *out_global;
        }
        if (same_shapes) {
          decision = draw_decision(arg_names, rule_inputs, *out_global, wanted_[outputs[0]], decision);
          if (decision) decision->every_output = true;
        }
      }
    }
    if (!decision) {
      decision = RuleDecision{"replicate", std::vector<Placements>(rule_values.size(), replicated()), replicated()};
    }
    planned.rule = decision->rule;
    planned.output = decision->output;
    planned.inputs = decision->inputs;
    std::map<std::pair<uint32_t, std::string>, uint32_t> converted;
    for (size_t k = 0; k < rule_values.size(); ++k) {
      NRT_RETURN_IF_ERROR(check_placements(decision->inputs[k], static_cast<int64_t>(rule_inputs[k].global_sizes.size()),
                                           r_.mesh.ndim(), "node '" + node->name + "' (" + decision->rule + " rule)"));
      const std::string key = to_string(decision->inputs[k]);
      auto it = converted.find({*rule_values[k], key});
      if (it == converted.end()) {
        NRT_TRY(v, convert(*rule_values[k], decision->inputs[k], planned.steps));
        it = converted.emplace(std::pair{*rule_values[k], key}, *v).first;
      }
      *rule_values[k] = it->second;
    }
    for (auto* l : lists) {
      if (list_rule) break;
      for (auto& v : *l) {
        NRT_TRY(whole, convert(v, replicated(), planned.steps));
        v = *whole;
      }
    }
    const ArgumentRewrite rewrite = entry ? entry->rewrite : ArgumentRewrite::kNone;
    if ((rewrite == ArgumentRewrite::kViewSizes || rewrite == ArgumentRewrite::kExpandSizes) && outputs.size() == 1) {
      NRT_TRY(global, global_sizes(outputs[0]));
      NRT_RETURN_IF_ERROR(set_local_sizes_arg(*node, State{decision->output, *global}));
    }
    if (rewrite == ArgumentRewrite::kUnflattenSizes && outputs.size() == 1) {
      NRT_TRY(global, global_sizes(outputs[0]));
      NRT_RETURN_IF_ERROR(set_unflatten_sizes_arg(*node, rule_inputs[0].global_sizes.size(), State{decision->output, *global}));
    }
    if (decision->rule == kVocabularyShardedEmbedding) NRT_RETURN_IF_ERROR(mask_embedding(*node, rule_inputs[0].global_sizes, decision->inputs[0]));
    if (planning == NodePlanning::kDraw && !outputs.empty() && !all_replicate(decision->output)) {
      NRT_TRY(global, global_sizes(outputs[0]));
      NRT_RETURN_IF_ERROR(add_draw_region(*node, State{decision->output, *global}));
    }
    graph_->nodes.push_back(std::move(node));
    NRT_RETURN_IF_ERROR(place_outputs(*graph_->nodes.back(), decision->output, decision->every_output, planned));
    r_.nodes.push_back(std::move(planned));
    return {};
  }

  // nrt::from_local: this rank's local tensor is its shard of the output DTensor, in the output's
  // declared placements. nrt::to_local: the input DTensor, in its declared placements, gives this
  // rank's shard as a plain tensor. Neither communicates; the output takes this rank's shard sizes.
  // A None input gives None, so an input that may be None makes the output an optional tensor.
  Status plan_local_boundary(fb::NodeT& node, const std::string& target, bool from_local,
                             const std::vector<uint32_t*>& args, uint32_t out, PlannedNodeSharding& planned) {
    const std::string at = "node '" + node.name + "' (" + target + ")";
    const bool may_be_none = args.empty() || graph_->values[*args[0]]->kind == fb::ValueKind::OPTIONAL_TENSOR;
    if (from_local) {
      if (!declared_[out]) return make_error(ErrorCode::InvalidArgument, at + ": its output must be a DTensor");
      if (!args.empty() && state_[*args[0]] && !all_replicate(state_[*args[0]]->placements)) {
        return make_error(ErrorCode::InvalidArgument, at + ": its input must be a local tensor, not a DTensor");
      }
      state_[out] = declared_[out];
      NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[out], *declared_[out]));
      planned.inputs = {replicated()};
      planned.output = declared_[out]->placements;
    } else if (!args.empty()) {
      if (declared_[out]) return make_error(ErrorCode::InvalidArgument, at + ": its output must be a plain tensor");
      NRT_TRY(s, state_of(*args[0]));
      const Placements placements = declared_[*args[0]] ? declared_[*args[0]]->placements : s->placements;
      NRT_TRY(v, convert(*args[0], placements, planned.steps));
      *args[0] = *v;
      NRT_TRY(region, shard_region(s->global, placements, r_.mesh.shape, r_.coordinate));
      state_[out] = State{replicated(), region->sizes};
      NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[out], *state_[out]));
      planned.inputs = {placements};
      planned.output = replicated();
    }
    if (may_be_none) graph_->values[out]->kind = fb::ValueKind::OPTIONAL_TENSOR;
    return {};
  }

  // A draw keeps the placements its output is declared with or its consumers want (read_wanted),
  // else those its rule chose, else a sharded input's. Its key stays whole; every other tensor
  // input (the tensor drawn into, or whose shape is drawn) takes the output's placements. Not for
  // a batched key (one key per row of the output), nor a Partial output: those keep `by_rule`
  // (the fallback draws whole).
  std::optional<RuleDecision> draw_decision(const std::vector<std::string>& arg_names,
                                            const std::vector<RuleInput>& inputs,
                                            const std::vector<int64_t>& out_global,
                                            const std::optional<State>& declared,
                                            const std::optional<RuleDecision>& by_rule) const {
    const Placements* wanted = declared ? &declared->placements : by_rule ? &by_rule->output : nullptr;
    for (size_t k = 0; k < inputs.size() && wanted == nullptr; ++k) {  // else a sharded input's
      const bool key = k < arg_names.size() && arg_names[k] == "key";
      if (!key && inputs[k].global_sizes == out_global && !all_replicate(inputs[k].placements)) {
        wanted = &inputs[k].placements;
      }
    }
    if (wanted == nullptr || all_replicate(*wanted)) {
      // Whole on every rank: drawn whole, from whole inputs (no gather: nothing is sharded).
      if (by_rule) return by_rule;
      return RuleDecision{"draw (whole)", std::vector<Placements>(inputs.size(), replicated()), replicated()};
    }
    for (const Placement& p : *wanted) {
      if (p.kind == Placement::Kind::kPartial) return by_rule;
    }
    RuleDecision drawn{"draw (each rank its own elements)", {}, *wanted};
    for (size_t k = 0; k < inputs.size(); ++k) {
      if (k < arg_names.size() && arg_names[k] == "key") {
        if (inputs[k].global_sizes.size() != 1) return by_rule;
        drawn.inputs.push_back(replicated());
      } else if (inputs[k].global_sizes == out_global) {
        drawn.inputs.push_back(*wanted);
      } else {
        return by_rule;
      }
    }
    return drawn;
  }

  // The region of a sharded draw, as the kernel reads it (kDrawGlobalSizesArg, kDrawShardPiecesArg).
  Status add_draw_region(fb::NodeT& node, const State& state) {
    NRT_TRY(region, shard_region(state.global, state.placements, r_.mesh.shape, r_.coordinate));
    std::vector<int64_t> pieces;
    for (const auto& dim : region->pieces) {
      pieces.push_back(static_cast<int64_t>(dim.size()));
      for (const ChunkRange& range : dim) {
        pieces.push_back(range.offset);
        pieces.push_back(range.size);
      }
    }
    for (const auto& [name, values] : {std::pair{exec::kDrawGlobalSizesArg, state.global},
                                       std::pair{exec::kDrawShardPiecesArg, pieces}}) {
      auto arg = std::make_unique<fb::NamedArgumentT>();
      arg->name = name;
      arg->arg = int_list_arg(values);
      arg->kind = fb::ArgumentKind::KEYWORD;
      node.inputs.push_back(std::move(arg));
    }
    return {};
  }

  // A vocabulary-sharded embedding looks up only the rows this rank holds:
  // nrt::masked_embedding(weight, indices, vocab_start, vocab_size), zeros elsewhere.
  Status mask_embedding(fb::NodeT& node, const std::vector<int64_t>& weight_sizes, const Placements& weight_placements) {
    NRT_TRY(region, shard_region(weight_sizes, weight_placements, r_.mesh.shape, r_.coordinate));
    node.op = operator_index(kMaskedEmbeddingTarget);
    node.inputs.resize(2);  // weight, indices; padding_idx and the rest only matter to gradients
    node.inputs[0]->name = "weight";
    node.inputs[1]->name = "indices";
    node.inputs.push_back(named("vocab_start", int_arg(region->sizes[0] == 0 ? weight_sizes[0] : region->offsets[0])));
    node.inputs.push_back(named("vocab_size", int_arg(weight_sizes[0])));
    return {};
  }

  uint32_t as_produced(uint32_t v) const {
    auto it = produced_as_.find(v);
    return it == produced_as_.end() ? v : it->second;
  }

  // unflatten(self, dim, sizes): `sizes` made the local sizes of the output dims it names.
  Status set_unflatten_sizes_arg(fb::NodeT& node, size_t input_rank, const State& state) {
    NRT_TRY(region, shard_region(state.global, state.placements, r_.mesh.shape, r_.coordinate));
    auto dim = int_argument(node, "dim", 1);
    for (size_t i = 0; i < node.inputs.size() && dim; ++i) {
      auto& a = *node.inputs[i];
      if (!(a.name == "sizes" || (a.name.empty() && i == 2))) continue;
      std::vector<int64_t>* list = nullptr;
      if (auto* ints = a.arg.AsIntListArg()) list = &ints->values;
      const size_t count = list ? list->size() : (a.arg.AsSymIntListArg() ? a.arg.AsSymIntListArg()->items.size() : 0);
      const int64_t first = *dim < 0 ? *dim + static_cast<int64_t>(input_rank) : *dim;
      if (count == 0 || first < 0 || static_cast<size_t>(first) + count > region->sizes.size()) break;
      a.arg = int_list_arg(std::vector<int64_t>(region->sizes.begin() + first, region->sizes.begin() + first + static_cast<int64_t>(count)));
      return {};
    }
    return make_error(ErrorCode::NotSupported, "node '" + node.name + "': unflatten's sizes do not shard");
  }

  // A view's size argument, rewritten to the local sizes of its output in `state`.
  Status set_local_sizes_arg(fb::NodeT& node, const State& state) {
    NRT_TRY(region, shard_region(state.global, state.placements, r_.mesh.shape, r_.coordinate));
    for (size_t i = 0; i < node.inputs.size(); ++i) {
      auto& a = *node.inputs[i];
      if (!(a.name == "size" || a.name == "shape" || (a.name.empty() && i == 1))) continue;
      if (auto* list = a.arg.AsIntListArg()) {
        list->values = region->sizes;
        return {};
      }
      if (a.arg.AsSymIntListArg()) {
        a.arg = int_list_arg(region->sizes);
        return {};
      }
    }
    return make_error(ErrorCode::NotSupported, "node '" + node.name + "': no size argument to shard");
  }

  // The outputs of `placed` get `first` (the first output; every direct tensor output with
  // `every_output`), else Replicate; a declared DTensor output is redistributed into.
  Status place_outputs(fb::NodeT& placed, const Placements& first, bool every_output, PlannedNodeSharding& planned) {
    for (size_t o = 0; o < placed.outputs.size(); ++o) {
      auto* t = placed.outputs[o]->arg.AsTensorArg();
      std::vector<uint32_t*> defined;
      if (t) defined.push_back(&t->value);
      if (auto* l = placed.outputs[o]->arg.AsTensorListArg()) {
        for (auto& v : l->values) defined.push_back(&v);
      }
      for (uint32_t* v : defined) {
        if (!is_tensor(*v)) continue;
        NRT_TRY(global, global_sizes(*v));
        const State produced{every_output || (o == 0 && t) ? first : replicated(), *global};
        if (declared_[*v] && declared_[*v]->placements != produced.placements) {
          const uint32_t declared = *v;
          const uint32_t fresh = add_value(*graph_->values[declared], graph_->values[declared]->name + "_planned");
          state_[fresh] = produced;
          NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[fresh], produced));
          *v = fresh;
          NRT_TRY(done, convert(fresh, declared_[declared]->placements, planned.output_steps, declared));
          produced_as_[declared] = fresh;
        } else {
          state_[*v] = produced;
          NRT_RETURN_IF_ERROR(set_local_meta(*graph_->values[*v], produced));
        }
      }
    }
    return {};
  }

  // argmax/argmin, max.dim/min.dim. Over a sharded dim: the (value, index) exchange kernel on
  // the group of the first mesh dim sharding it (others sharding it are gathered first); over
  // an unsharded dim: the op itself on the shards. Nullopt when neither applies (dim None).
  std::optional<Status> plan_arg_reduce(std::unique_ptr<fb::NodeT>& node, ArgReduction kind, uint32_t input,
                                        PlannedNodeSharding& planned) {
    const std::optional<int64_t> dim = int_argument(*node, "dim", 1);
    const bool keepdim = bool_argument(*node, "keepdim", 2).value_or(false);
    auto s = state_of(input);
    if (!dim || !s) return std::nullopt;
    const auto rank = static_cast<int64_t>(s->global.size());
    const int64_t d = *dim < 0 ? *dim + rank : *dim;
    if (d < 0 || d >= rank) return std::nullopt;
    Placements required = s->placements;
    std::optional<size_t> exchange;
    for (size_t i = 0; i < required.size(); ++i) {
      // A strided shard of the reduced dim is not one offset into it: gathered.
      if (required[i].is_partial() || (required[i].kind == Placement::Kind::kStridedShard && required[i].dim == d)) {
        required[i] = Placement::replicate();
      }
      if (required[i].is_shard(static_cast<int32_t>(d))) {
        if (exchange) required[i] = Placement::replicate();
        else exchange = i;
      }
    }
    Placements output = required;
    for (size_t i = 0; i < output.size(); ++i) {
      if (exchange && i == *exchange) output[i] = Placement::replicate();
      if (output[i].is_shard() && !keepdim && output[i].dim > d) --output[i].dim;
    }
    planned.inputs = {required};
    planned.output = output;
    auto converted = convert(input, required, planned.steps);
    if (!converted) return Status(converted.error());
    if (!exchange) {
      planned.rule = "arg reduction over an unsharded dim";
      for (auto& a : node->inputs) {
        if (auto* t = a->arg.AsTensorArg(); t && t->value == input) t->value = *converted;
      }
      graph_->nodes.push_back(std::move(node));
    } else {
      planned.rule = "arg reduction: (value, index) exchange";
      auto region = shard_region(s->global, required, r_.mesh.shape, r_.coordinate);
      if (!region) return Status(region.error());
      auto replaced = std::make_unique<fb::NodeT>();
      replaced->name = node->name;
      replaced->op = operator_index(kShardedArgReduceTarget);
      replaced->outputs = std::move(node->outputs);
      replaced->metadata = std::move(node->metadata);
      replaced->inputs.push_back(named("self", tensor_arg(*converted)));
      replaced->inputs.push_back(named("dim", int_arg(d)));
      replaced->inputs.push_back(named("keepdim", bool_arg(keepdim)));
      replaced->inputs.push_back(named(
          "mode", string_arg(kind.indices_only ? (kind.maximum ? "argmax" : "argmin") : (kind.maximum ? "max" : "min"))));
      replaced->inputs.push_back(named("offset", int_arg(region->offsets[static_cast<size_t>(d)])));
      replaced->inputs.push_back(named("group_name", string_arg(group_names_[*exchange])));
      graph_->nodes.push_back(std::move(replaced));
      // The exchange itself: one all_gather of (value, index) records on the group.
      planned.exchanges.push_back({graph_->values[input]->name, static_cast<int64_t>(*exchange), required[*exchange],
                                   Placement::replicate(), "all_gather"});
    }
    return place_outputs(*graph_->nodes.back(), output, true, planned);
  }

  Status finish_outputs() {
    for (auto& holder : graph_->outputs) {
      auto* t = holder->arg.AsTensorArg();
      if (!t || !state_[t->value]) continue;
      const uint32_t v = t->value;
      const State s = *state_[v];
      const bool user = [&] {
        if (!graph_->signature) return true;
        for (const auto& spec : graph_->signature->outputs) {
          if (spec->value == static_cast<int32_t>(v)) {
            return spec->kind == fb::OutputKind::USER_OUTPUT || spec->kind == fb::OutputKind::LOSS_OUTPUT;
          }
        }
        return true;
      }();
      if (!user) continue;
      if (!options_.global_outputs || all_replicate(s.placements)) {
        if (declared_[v] || !all_replicate(s.placements)) r_.outputs.push_back({graph_->values[v]->name, s.global, s.placements});
        continue;
      }
      NRT_TRY(whole, convert(v, replicated(), r_.final_steps));
      // The assembled value takes the output's name; the shard keeps a name of its own.
      std::swap(graph_->values[v]->name, graph_->values[*whole]->name);
      t->value = *whole;
      if (graph_->signature) {
        for (auto& spec : graph_->signature->outputs) {
          if (spec->value == static_cast<int32_t>(v)) spec->value = static_cast<int32_t>(*whole);
        }
      }
      r_.outputs.push_back({graph_->values[*whole]->name, s.global, replicated()});
    }
    return {};
  }

  ShardingResult& r_;
  fb::ProgramT& p_;
  const ShardingOptions& options_;
  fb::GraphT* graph_ = nullptr;
  uint32_t mesh_index_ = 0;
  uint32_t step_op_ = 0;
  int step_count_ = 0;
  std::vector<std::string> group_names_;  // this rank's group per mesh dim
  std::vector<std::optional<State>> state_;
  std::vector<std::optional<State>> declared_;
  std::vector<std::optional<State>> wanted_;  // read_wanted
  std::map<uint32_t, uint32_t> produced_as_;  // declared value -> the value its node produced
  std::set<std::string> names_;
};

}  // namespace

bool is_dtensor_program(const fb::Program& program) {
  if (!program.meshes() || program.meshes()->size() == 0 || !program.graphs()) return false;
  for (const auto* graph : *program.graphs()) {
    if (!graph->values()) continue;
    for (const auto* value : *graph->values()) {
      if (value->kind() == fb::ValueKind::DTENSOR) return true;
    }
  }
  return false;
}

int32_t mesh_world_size(const fb::Program& program) {
  int32_t world = 1;
  for (const auto* mesh : elements(program.meshes())) {
    world = std::max<int32_t>(world, static_cast<int32_t>(mesh->ranks() ? mesh->ranks()->size() : 1));
  }
  return world;
}

std::vector<const PlannedNodeSharding*> replicated_nodes(const ShardingResult& result) {
  std::vector<const PlannedNodeSharding*> out;
  for (const auto& n : result.nodes) {
    // The fallback, or a rule that could keep no shard: either way inputs gathered, computed whole.
    bool gathered = false;
    for (const auto& step : n.steps) gathered = gathered || step.from.is_shard();
    bool whole = all_replicate(n.output) && gathered;
    for (const auto& p : n.inputs) whole = whole && all_replicate(p);
    if (n.rule == "replicate" || whole) out.push_back(&n);
  }
  return out;
}

Result<ShardingResult> shard_for_rank(const fb::Program& program, const ShardingOptions& options) {
  ShardingResult result;
  program.UnPackTo(&result.program);
  Pass pass(result, options);
  NRT_RETURN_IF_ERROR(pass.run());
  return result;
}

}  // namespace nrt::dist
