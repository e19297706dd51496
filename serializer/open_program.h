// The one way in: opening a program in any format nrt reads, verified once on its way in, and
// saving one in any format it writes. What nrt-inspect, nrt-run, the session (session/) and the
// Python package open goes through here.
//
// The format comes from OpenOptions::format, else from one read of the file's head
// (serializer/program_format.h), else from its name; anything else is opened as a .nrt container
// so that its real defect (too small, bad magic) is reported. A .nrt file is opened in place
// (mapped, weights zero-copy) and verified by ProgramFile::open. Every other format goes through
// its importer, a table entry: the importer builds the program in memory, unverified, and the
// opener serializes and verifies it once, so all formats meet the same checks. serializer/ brings
// the .nrt.json importer; //serializer/torch_export registers .pt2 and torch's JSON (linking it is
// enough).
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/error.h"
#include "serializer/json_form.h"
#include "serializer/program_file.h"
#include "serializer/program_format.h"
#include "serializer/verify_options.h"

namespace nrt {

struct OpenOptions {
  std::optional<ProgramFormat> format = {};  // forced (--from); else recognised
  VerifyOptions verify = {};
  // .pt2: import only this model. torch.json: the entry graph's name (default "model").
  std::string model = {};
  // One line per import warning (unknown fields ignored, archive entries not imported, ...).
  std::function<void(const std::string&)> warn = {};
};

struct SaveOptions {
  std::optional<ProgramFormat> format = {};  // forced (--to); else the output's name decides
  // torch formats: export only this entry graph (required for torch.json when there are several).
  std::string model = {};
};

// A format's entry in the table: how a file of it becomes a program in memory (unverified), and
// how a verified program is written as it. Either may be null (the format is then read-only or
// write-only).
struct ProgramImporter {
  ProgramFormat format;
  Result<ProgramWithWeights> (*import)(const std::string& path, const OpenOptions& options,
                                       std::vector<std::string>* warnings) = nullptr;
  Status (*save)(const ProgramFile& file, const std::string& path, const SaveOptions& options) = nullptr;
};

// Adds or replaces the entry of `importer.format`. Thread-safe; meant for static initialisation.
void register_importer(const ProgramImporter& importer);
// The formats that can be opened now (.nrt always).
std::vector<ProgramFormat> openable_formats();

Result<ProgramFile> open_program(const std::string& path, const OpenOptions& options = {});

// The same for a file's bytes held in memory (nrt.load(bytes)). A .nrt container is verified in
// a copy of them; another format's importer reads a private temporary file holding them (the
// importers read paths), removed before this returns. Errors name the file "<bytes>".
Result<ProgramFile> open_program_bytes(std::span<const uint8_t> bytes, const OpenOptions& options = {});

// Serializes a program held in memory as a .nrt container and opens it verified.
Result<ProgramFile> verify_in_memory(ProgramWithWeights program, const VerifyOptions& options = {});

// Writes a verified program to `path` atomically, in SaveOptions::format or the one its name says.
Status save_program(const ProgramFile& file, const std::string& path, const SaveOptions& options = {});

// Verifies `program` and writes it (test data generators, builders).
Status save_program(ProgramWithWeights program, const std::string& path, ProgramFormat format);

// open_program, then save_program: bad input never leaves a partial or invalid output file.
Status convert_program(const std::string& in_path, const std::string& out_path, const OpenOptions& open,
                       const SaveOptions& save);

}  // namespace nrt
