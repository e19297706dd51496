// The error codes of the torch.export importer and exporter, in one place. Each name below is the
// code an error of that kind carries (core/error.h, docs/ERRORS.md).
#pragma once

#include "core/error.h"

namespace nrt::torch_export::codes {

// The JSON does not parse, or a field has the wrong JSON type or an out-of-range number.
inline constexpr ErrorCode kJson = ErrorCode::JsonParse;
// A field the torch.export schema requires is absent.
inline constexpr ErrorCode kMissingField = ErrorCode::MissingField;
// An Argument / InputSpec / OutputSpec union names a member this version does not know.
inline constexpr ErrorCode kUnknownUnionMember = ErrorCode::UnknownArgumentKind;
// schema_version.major is not 8 (dedicated: 902 TorchSchemaVersion).
inline constexpr ErrorCode kSchemaVersion = ErrorCode::TorchSchemaVersion;
// An enum value has no row in its mapping table (dedicated: 903 UnmappedEnumValue).
inline constexpr ErrorCode kUnmappedEnumValue = ErrorCode::UnmappedEnumValue;
// A .pt2 entry the archive needs is absent (dedicated: 904 ArchiveEntryMissing).
inline constexpr ErrorCode kArchiveEntryMissing = ErrorCode::ArchiveEntryMissing;
// The zip is unreadable, inconsistent or a zip bomb (dedicated: 905 ArchiveCorrupt).
inline constexpr ErrorCode kArchiveCorrupt = ErrorCode::ArchiveCorrupt;
// A payload is a pickle nrt does not read (dedicated: 906 PickledPayload).
inline constexpr ErrorCode kPickledPayload = ErrorCode::PickledPayload;
// A weight record disagrees with its weights config (dedicated: 907 WeightsConfigMismatch).
inline constexpr ErrorCode kWeightsConfigMismatch = ErrorCode::WeightsConfigMismatch;
// A reference names a value the graph does not declare (dedicated: 908 UnknownValueName).
inline constexpr ErrorCode kUnknownValueName = ErrorCode::UnknownValueName;
// A pre-2.6 torch.export archive (dedicated: 909 LegacyTorchArchive).
inline constexpr ErrorCode kLegacyArchive = ErrorCode::LegacyTorchArchive;
// Two values, graphs, weights or groups share a name that must be unique.
inline constexpr ErrorCode kDuplicateName = ErrorCode::DuplicateName;
// The program holds something torch.export JSON cannot express (a DTensor, a JAGGED layout, ...).
inline constexpr ErrorCode kNotExpressible = ErrorCode::InvalidArgument;

}  // namespace nrt::torch_export::codes
