// nrt.Runner: one loaded graph of a program (an nrt::Session of one process), called with its inputs
// by name. The GIL is released while the graph runs, and one Runner serves any number of threads
// at once (the executor's frames are pooled; `threads` frames are made up front).
#include "python/runner_bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <memory>
#include <string>
#include <vector>

#include "python/array_interop.h"
#include "python/errors.h"
#include "python/program_bindings.h"
#include "executor/runtime/kernel_library.h"
#include "session/session.h"

namespace nb = nanobind;

namespace nrt::python {
namespace {

// Frames made up front are bounded: each holds the graph's planned memory.
constexpr int kMaxThreads = 1024;

// Kernel libraries register into the process's one registry, where a second registration of the
// same targets is a conflict: each library (by its real path) is loaded once per process.
void load_kernel_library_once(const std::string& path) {
  static std::mutex mutex;
  static std::set<std::string> loaded;
  std::error_code ec;
  const std::string key = std::filesystem::weakly_canonical(path, ec).string();
  std::lock_guard<std::mutex> lock(mutex);
  if (loaded.contains(key)) return;
  value_or_raise(exec::load_kernel_library(path));
  loaded.insert(key);
}

class Runner {
 public:
  Runner(const Program& program, const std::optional<std::string>& graph, int threads,
         const std::vector<std::string>& kernel_libraries, const std::string& device, uint64_t seed) {
    if (threads < 1 || threads > kMaxThreads) {
      throw nb::value_error(("threads must be 1 to " + std::to_string(kMaxThreads) + ", not " +
                             std::to_string(threads))
                                .c_str());
    }
    for (const auto& library : kernel_libraries) load_kernel_library_once(library);
    SessionOptions options;
    if (graph) options.graph = *graph;
    options.device = value_or_raise(parse_device(device));
    options.seed = seed;
    {
      nb::gil_scoped_release release;
      session_ = value_or_raise(Session::open(*program.file, options));
      raise_if_error(session_->reserve_frames(static_cast<size_t>(threads)));
    }
    ordered_ = session_->inputs();
    for (const auto& input : ordered_) {
      names_ += (names_.empty() ? "" : ", ") + input.name;
      inputs_.emplace(input.name, &input);
    }
  }

  nb::dict call(const nb::kwargs& kwargs) {
    HeldArrays held;  // destroyed after `inputs`, with the GIL held
    exec::NamedInputs inputs = bind(kwargs, held);
    Result<std::vector<exec::NamedOutput>> outputs = make_error(ErrorCode::Internal, "not run");
    {
      // `held` keeps the arrays the graph reads in place.
      nb::gil_scoped_release release;
      outputs = session_->run(inputs);
    }
    nb::dict result;
    for (const auto& output : value_or_raise(std::move(outputs))) {
      result[output.name.c_str()] = to_python(output.value);
    }
    return result;
  }

  // The benchmark's baseline (bench/python/runner_bench.py): `repeats` runs of the graph on the
  // same inputs in a C++ loop, the GIL released; returns the seconds of each run.
  std::vector<double> time_native_runs(int repeats, const nb::kwargs& kwargs) {
    HeldArrays held;
    exec::NamedInputs inputs = bind(kwargs, held);
    std::vector<double> seconds;
    seconds.reserve(static_cast<size_t>(std::max(repeats, 0)));
    nb::gil_scoped_release release;
    for (int r = 0; r < repeats; ++r) {
      const auto start = std::chrono::steady_clock::now();
      auto outputs = session_->run(inputs);
      seconds.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      if (!outputs) {
        nb::gil_scoped_acquire acquire;
        throw ErrorRaised(outputs.error());
      }
    }
    return seconds;
  }

 private:
  // The inputs of a call, checked against the graph's.
  exec::NamedInputs bind(const nb::kwargs& kwargs, HeldArrays& held) const {
    exec::NamedInputs inputs;
    for (auto [key, value] : kwargs) {
      std::string name = nb::cast<std::string>(key);
      auto declared = inputs_.find(name);
      if (declared == inputs_.end()) {
        throw nb::value_error(("unknown input '" + name + "'; the graph's inputs are: " + names_).c_str());
      }
      inputs.emplace(std::move(name), input_value(*declared->second, value, held));
    }
    if (inputs.size() != inputs_.size()) {
      std::string missing;
      for (const auto& input : ordered_) {
        if (!inputs.contains(input.name)) missing += (missing.empty() ? "" : ", ") + input.name;
      }
      throw nb::value_error(("missing input(s): " + missing).c_str());
    }
    return inputs;
  }

 public:
  nb::list input_descriptions() const {
    nb::list list;
    for (const auto& input : ordered_) {
      nb::dict entry;
      entry["name"] = input.name;
      if (input.kind == fb::ValueKind::TENSOR || input.kind == fb::ValueKind::DTENSOR) {
        entry["dtype"] = std::string(short_name(input.dtype));
        nb::list shape;
        for (const auto& dim : input.sizes) {
          if (dim.expr.empty()) {
            shape.append(dim.literal);
          } else {
            shape.append(dim.expr);
          }
        }
        entry["shape"] = shape;
      } else {
        entry["dtype"] = nb::none();
        entry["shape"] = nb::none();
      }
      list.append(entry);
    }
    return list;
  }

 private:
  static exec::RuntimeValue input_value(const exec::InputDescription& input, nb::handle value, HeldArrays& held) {
    switch (input.kind) {
      case fb::ValueKind::TENSOR:
      case fb::ValueKind::DTENSOR:
        return tensor_from_array(input.name, value, input.dtype, held);
      case fb::ValueKind::SYM_INT:
        if (!nb::isinstance<nb::int_>(value) || nb::isinstance<nb::bool_>(value)) {
          throw nb::type_error(("input '" + input.name + "' is an int").c_str());
        }
        return nb::cast<int64_t>(value);
      case fb::ValueKind::SYM_FLOAT:
        if (!nb::isinstance<nb::float_>(value) && !nb::isinstance<nb::int_>(value)) {
          throw nb::type_error(("input '" + input.name + "' is a float").c_str());
        }
        return nb::cast<double>(value);
      case fb::ValueKind::SYM_BOOL:
        if (!nb::isinstance<nb::bool_>(value)) throw nb::type_error(("input '" + input.name + "' is a bool").c_str());
        return nb::cast<bool>(value);
      default:
        throw nb::type_error(("input '" + input.name + "' is of a kind a Python caller cannot give").c_str());
    }
  }

  std::unique_ptr<Session> session_;
  std::vector<exec::InputDescription> ordered_;  // in graph order
  std::map<std::string, const exec::InputDescription*, std::less<>> inputs_;
  std::string names_;  // for messages
};

}  // namespace

void add_runner_bindings(nb::module_& m) {
  nb::class_<Runner>(m, "Runner",
                     "Runs one graph of a Program on the CPU or a CUDA device. Call it with the graph's inputs by name: NumPy arrays "
                     "or objects with __dlpack__ (read in place when C-contiguous and of the declared dtype). "
                     "Returns {output name: numpy.ndarray}. The GIL is released while the graph runs; one Runner "
                     "serves many threads at once.")
      .def(nb::init<const Program&, const std::optional<std::string>&, int, const std::vector<std::string>&,
                    const std::string&, uint64_t>(),
           nb::arg("program"), nb::kw_only(), nb::arg("graph") = nb::none(), nb::arg("threads") = 1,
           nb::arg("kernel_libraries") = std::vector<std::string>(), nb::arg("device") = "cpu", nb::arg("seed") = 0,
           "graph: the entry point to run (default the first); threads: how many calls may run at once "
           "without making a frame (each holds the graph's planned memory); more still run, making one; "
           "kernel_libraries: shared objects with kernels for custom ops (nrt-run's --kernel-library, "
           "executor/runtime/kernel_library.h), loaded once per process before the graph is planned; "
           "device: 'cpu', 'cuda' or 'cuda:N' (inputs are copied there and outputs back as NumPy arrays; "
           "a device the machine or build lacks raises nrt.Error NRT-E1014); "
           "seed: the seed of the random ops the graph draws with (rand, randn, dropout in training, ...; "
           "nrt-run --seed; docs/RANDOM.md), default 0.")
      .def("__call__", &Runner::call, "Run the graph: runner(x=array, ...) -> {name: numpy.ndarray}")
      .def("_time_native_runs", &Runner::time_native_runs,
           "_time_native_runs(repeats, **inputs): the benchmark's baseline, the seconds of each of `repeats` runs "
           "made in a C++ loop on these inputs.")
      .def_prop_ro("inputs", &Runner::input_descriptions,
                   "The inputs a call gives: [{'name', 'dtype', 'shape'}] (symbolic sizes as their names).");
}

}  // namespace nrt::python
