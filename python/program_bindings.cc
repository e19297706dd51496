// nrt.load, nrt.Program (verify, hash, info, save, text/print), nrt.diff, nrt.convert and nrt.shard:
// the calls of nrt-inspect, over the same libraries (serializer/open_program.h and friends), with
// the same results (info() is `info --json`'s object, hash() the digests `hash` prints).
#include "python/program_bindings.h"

#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include <memory>
#include <string>

#include "executor/dtensor/shard_plan.h"
#include "python/errors.h"
#include "serializer/open_program.h"
#include "serializer/program_diff.h"
#include "serializer/program_diff_json.h"
#include "serializer/program_hash.h"
#include "serializer/program_summary.h"
#include "serializer/program_summary_json.h"
#include "serializer/program_text.h"
#include "serializer/read_file.h"

namespace nb = nanobind;

namespace nrt::python {
namespace {

// Plans are small JSON documents; the same cap as nrt-inspect shard's --plan.
constexpr size_t kMaxPlanBytes = size_t{1} << 24;

struct Digests {
  std::string algorithm;
  std::string structure;
  std::string weights;
  std::string full;
};

struct Diff {
  ProgramDiff diff;
};

std::optional<ProgramFormat> format_argument(const std::optional<std::string>& name, const char* what) {
  if (!name) return std::nullopt;
  auto format = format_from_name(*name);
  if (!format) {
    throw nb::value_error((std::string(what) + " must be one of 'nrt', 'nrt.json', 'pt2', 'torch.json', not '" +
                           *name + "'")
                              .c_str());
  }
  return format;
}

VerifyOptions verify_argument(nb::handle verify) {
  VerifyOptions options;
  if (nb::isinstance<nb::str>(verify)) {
    if (nb::cast<std::string>(verify) != "deep") throw nb::value_error("verify must be True, False or 'deep'");
    options.deep = true;
  } else if (!nb::isinstance<nb::bool_>(verify)) {
    throw nb::type_error("verify must be True, False or 'deep'");
  }
  return options;
}

// A path from str or os.PathLike.
std::string path_argument(nb::handle path, const char* what) {
  nb::object fspath = nb::module_::import_("os").attr("fspath");
  nb::object text;
  try {
    text = fspath(path);
  } catch (const nb::python_error&) {
    throw nb::type_error((std::string(what) + " must be a path (str or os.PathLike), got " +
                          nb::inst_name(path).c_str())
                             .c_str());
  }
  if (!nb::isinstance<nb::str>(text)) {
    throw nb::type_error((std::string(what) + " must be a str path, got bytes").c_str());
  }
  return nb::cast<std::string>(text);
}

Program load(nb::handle source, nb::handle verify, const std::optional<std::string>& format,
             const std::optional<std::string>& model) {
  OpenOptions options;
  options.verify = verify_argument(verify);
  options.format = format_argument(format, "format");
  if (model) options.model = *model;
  if (PyBytes_Check(source.ptr()) || PyByteArray_Check(source.ptr()) || PyMemoryView_Check(source.ptr())) {
    Py_buffer view;
    if (PyObject_GetBuffer(source.ptr(), &view, PyBUF_SIMPLE) != 0) throw nb::python_error();
    std::span<const uint8_t> bytes(static_cast<const uint8_t*>(view.buf), static_cast<size_t>(view.len));
    Result<ProgramFile> file = make_error(ErrorCode::Internal, "not opened");
    {
      nb::gil_scoped_release release;
      file = open_program_bytes(bytes, options);
    }
    PyBuffer_Release(&view);
    return Program{std::make_shared<const ProgramFile>(value_or_raise(std::move(file)))};
  }
  const std::string path = path_argument(source, "source");
  nb::gil_scoped_release release;
  return Program{std::make_shared<const ProgramFile>(value_or_raise(open_program(path, options)))};
}

// A Program, or a path / bytes loaded as nrt.load does.
Program program_argument(nb::handle value) {
  if (nb::isinstance<Program>(value)) return nb::cast<Program>(value);
  return load(value, nb::bool_(true), std::nullopt, std::nullopt);
}

std::string program_text(const Program& program, const std::optional<std::string>& graph) {
  const fb::Program& p = program.file->program();
  if (!graph) return render_program(p);
  if (auto text = render_named_graph(p, *graph)) return *text;
  throw nb::value_error(("no graph named '" + printable(*graph) + "'; graphs: " + graph_names(p)).c_str());
}

nb::object json_loads(const std::string& text) { return nb::module_::import_("json").attr("loads")(text); }

}  // namespace

void add_program_bindings(nb::module_& m) {
  nb::class_<Digests>(m, "Digests", "The canonical digests of a program, as `nrt-inspect hash` prints them.")
      .def_ro("algorithm", &Digests::algorithm, "'xxh3' or 'sha256'")
      .def_ro("structure", &Digests::structure, "graphs, signatures, meshes and groups; no weight bytes")
      .def_ro("weights", &Digests::weights, "every weight's bytes, by fqn")
      .def_ro("full", &Digests::full, "the digest of (structure, weights)")
      .def("__eq__", [](const Digests& a, const Digests& b) { return a.full == b.full && a.structure == b.structure; })
      .def("__repr__", [](const Digests& d) {
        return "Digests(structure='" + d.structure + "', weights='" + d.weights + "', full='" + d.full + "')";
      });

  nb::class_<Program>(m, "Program",
                      "A verified program (any format nrt opens). Immutable: share it between threads and Runners.")
      .def(
          "verify",
          [](const Program& p, bool deep) {
            VerifyOptions options;
            options.deep = deep;
            nb::gil_scoped_release release;
            raise_if_error(p.file->check(options));
          },
          nb::kw_only(), nb::arg("deep") = false,
          "Verify again (deep=True also checks every storage's XXH3-128 checksum, reading all weights). Raises "
          "nrt.Error naming the first defect.")
      .def(
          "hash",
          [](const Program& p, const std::string& algo, unsigned threads) {
            auto algorithm = algorithm_from_name(algo);
            if (!algorithm) throw nb::value_error("algo must be 'xxh3' or 'sha256'");
            HashOptions options;
            options.algorithm = *algorithm;
            options.threads = threads;
            ProgramDigests digests;
            {
              nb::gil_scoped_release release;
              digests = hash_program(*p.file, options);
            }
            return Digests{algo, digests.structure.to_string(), digests.weights.to_string(), digests.full.to_string()};
          },
          nb::kw_only(), nb::arg("algo") = "xxh3", nb::arg("threads") = 0,
          "The structure, weights and full digests (threads=0: one per core hashing weights).")
      .def(
          "info", [](const Program& p) { return json_loads(program_summary_json(summarize_program(p.file->program())).dump()); },
          "The summary `nrt-inspect info --json` prints, as a dict.")
      .def(
          "save",
          [](const Program& p, nb::handle path, const std::optional<std::string>& format) {
            SaveOptions options;
            options.format = format_argument(format, "format");
            const std::string target = path_argument(path, "path");
            nb::gil_scoped_release release;
            raise_if_error(save_program(*p.file, target, options));
          },
          nb::arg("path"), nb::kw_only(), nb::arg("format") = nb::none(),
          "Write the program atomically (a temporary file in the same directory, then rename); the format "
          "comes from `format` or the path's extension.")
      .def("text", &program_text, nb::kw_only(), nb::arg("graph") = nb::none(),
           "The program as `nrt-inspect print` prints it: one node per line.")
      .def(
          "print",
          [](const Program& p, const std::optional<std::string>& graph, nb::handle file) {
            nb::object out = file.is_none() ? nb::module_::import_("sys").attr("stdout") : nb::borrow(file);
            out.attr("write")(program_text(p, graph));
          },
          nb::kw_only(), nb::arg("graph") = nb::none(), nb::arg("file") = nb::none(),
          "Print text() to `file` (default sys.stdout).")
      .def_prop_ro(
          "entry_points",
          [](const Program& p) {
            nb::list names;
            const fb::Program& program = p.file->program();
            for (uint32_t g : *program.entry_points()) names.append(program.graphs()->Get(g)->name()->str());
            return names;
          },
          "The names of the graphs a Runner can run.")
      .def("__repr__", [](const Program& p) {
        const ProgramSummary s = summarize_program(p.file->program());
        uint64_t nodes = 0;
        for (const auto& g : s.graphs) nodes += g.num_nodes;
        return "<nrt.Program: " + std::to_string(s.graphs.size()) + " graph(s), " + std::to_string(nodes) +
               " node(s), " + std::to_string(s.weight_bytes) + " weight bytes>";
      });

  m.def("load", &load, nb::arg("source"), nb::kw_only(), nb::arg("verify") = true, nb::arg("format") = nb::none(),
        nb::arg("model") = nb::none(),
        "Open a program: a path (.nrt, .nrt.json, torch.export .pt2, ExportedProgram JSON; the format from its "
        "content, else its name, or `format`) or the file's bytes. nrt never hands out an unverified program: "
        "the structural and semantic checks always run (they read no weights); verify='deep' also checks "
        "every storage's checksum. `model` picks one model of a .pt2 holding several.");

  nb::class_<Diff>(m, "Diff", "The structural difference of two programs (`nrt-inspect diff`).")
      .def_prop_ro("same", [](const Diff& d) { return d.diff.same(); }, "True when the programs do not differ")
      .def("__bool__", [](const Diff& d) { return !d.diff.same(); }, "True when they differ")
      .def(
          "as_dict", [](const Diff& d) { return json_loads(program_diff_json(d.diff).dump()); },
          "The object `nrt-inspect diff --json` prints.")
      .def("__repr__", [](const Diff& d) { return std::string(d.diff.same() ? "<nrt.Diff: same>" : "<nrt.Diff: different>"); });

  m.def(
      "diff",
      [](nb::handle a, nb::handle b) {
        Program pa = program_argument(a);
        Program pb = program_argument(b);
        nb::gil_scoped_release release;
        return Diff{diff_programs(*pa.file, *pb.file)};
      },
      nb::arg("a"), nb::arg("b"),
      "Compare two programs (Programs or paths) after canonical alignment: renamed values and reordered "
      "independent nodes are no difference.");

  m.def(
      "convert",
      [](nb::handle src, nb::handle dst, const std::optional<std::string>& from_format,
         const std::optional<std::string>& to_format) {
        OpenOptions open;
        open.format = format_argument(from_format, "from_format");
        SaveOptions save;
        save.format = format_argument(to_format, "to_format");
        const std::string in = path_argument(src, "src");
        const std::string out = path_argument(dst, "dst");
        nb::gil_scoped_release release;
        raise_if_error(convert_program(in, out, open, save));
      },
      nb::arg("src"), nb::arg("dst"), nb::kw_only(), nb::arg("from_format") = nb::none(),
      nb::arg("to_format") = nb::none(),
      "Convert between .nrt, .nrt.json, .pt2 and ExportedProgram JSON (`nrt-inspect convert`): formats from "
      "content and names unless given; the output is replaced atomically, never left half-written.");

  m.def(
      "shard",
      [](const Program& program, nb::handle plan) {
        std::string text;
        if (nb::isinstance<nb::dict>(plan)) {
          text = nb::cast<std::string>(nb::module_::import_("json").attr("dumps")(plan));
        } else if (nb::isinstance<nb::str>(plan) && nb::cast<std::string>(plan).find('{') != std::string::npos) {
          text = nb::cast<std::string>(plan);
        } else {
          text = value_or_raise(read_file(path_argument(plan, "plan"), kMaxPlanBytes));
        }
        nb::gil_scoped_release release;
        auto parsed = value_or_raise(dist::parse_shard_plan(text));
        return Program{std::make_shared<const ProgramFile>(value_or_raise(dist::shard_with_plan(*program.file, parsed)))};
      },
      nb::arg("program"), nb::arg("plan"),
      "Make a DTensor program of `program` with a sharding plan (`nrt-inspect shard`): a dict, its JSON text, "
      "or the path of a plan file (docs/DISTRIBUTED.md).");
}

}  // namespace nrt::python
