#include "serializer/torch_export/pt2_archive.h"

#include <zip.h>

#include <algorithm>
#include <cstring>
#include <unordered_map>

#include "serializer/regular_file.h"
#include "serializer/torch_export/torch_error_codes.h"

namespace nrt::torch_export {
namespace {

// Deflate cannot expand by more than about 1032:1; anything claiming more is a zip bomb.
constexpr uint64_t kMaxDeflateRatio = 1032;
constexpr uint16_t kPaddingFieldId = 0x4246;  // "FB" read little-endian, as PyTorch writes it
constexpr uint16_t kDosDate1980 = 0x21;       // 1980-01-01, the DOS epoch: no wall-clock time in output
constexpr size_t kTextPadding = 64;           // >= simdjson::SIMDJSON_PADDING

Error corrupt(const std::string& what) { return make_error(codes::kArchiveCorrupt, what); }

std::string zip_error_text(int code) {
  zip_error_t error;
  zip_error_init_with_code(&error, code);
  std::string text = zip_error_strerror(&error);
  zip_error_fini(&error);
  return text;
}

uint32_t le32(const uint8_t* p) { return p[0] | (p[1] << 8) | (p[2] << 16) | (static_cast<uint32_t>(p[3]) << 24); }
uint16_t le16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }
uint64_t le64(const uint8_t* p) { return le32(p) | (static_cast<uint64_t>(le32(p + 4)) << 32); }

// Why an entry name cannot be trusted as a path below the root, or an empty string: an empty
// name, an absolute one, a drive letter or backslash (Windows paths), an empty, "." or ".."
// component (which would leave the root once joined).
std::string unsafe_name_reason(const std::string& name) {
  if (name.empty()) return "has an empty name";
  if (name.front() == '/') return "has an absolute name (a .pt2 keeps everything under one root folder)";
  if (name.find('\\') != std::string::npos || (name.size() >= 2 && name[1] == ':')) return "is a Windows path";
  size_t start = 0;
  while (start < name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string::npos) end = name.size();
    const std::string_view part(name.data() + start, end - start);
    const bool last = end == name.size() || end + 1 == name.size();
    if (part == ".." || part == ".") return "has a '" + std::string(part) + "' component";
    if (part.empty() && !last) return "has an empty path component";
    start = end + 1;
  }
  return "";
}

}  // namespace

struct Pt2Reader::State {
  zip_t* archive = nullptr;
  std::vector<uint8_t> bytes;  // the archive when it came from memory (libzip reads it in place)
  uint64_t archive_size = 0;
  std::unordered_map<std::string, zip_uint64_t> index;  // name below the root -> entry
  std::unordered_map<std::string, zip_uint64_t> sizes;

  ~State() {
    if (archive != nullptr) zip_discard(archive);
  }
};

Pt2Reader::Pt2Reader(std::unique_ptr<State> state) : state_(std::move(state)) {}
Pt2Reader::Pt2Reader(Pt2Reader&&) noexcept = default;
Pt2Reader& Pt2Reader::operator=(Pt2Reader&&) noexcept = default;
Pt2Reader::~Pt2Reader() = default;

Result<Pt2Reader> Pt2Reader::open(const std::string& path) {
  NRT_TRY(file, open_regular_file(path));
  int error = 0;
  auto state = std::make_unique<State>();
  state->archive_size = file->size;
  state->archive = zip_fdopen(file->fd.get(), ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (state->archive == nullptr) {
    if (error == ZIP_ER_OPEN || error == ZIP_ER_READ || error == ZIP_ER_NOENT) {
      return make_error(ErrorCode::IoOpen, "cannot open '" + path + "': " + zip_error_text(error));
    }
    return corrupt("'" + path + "' is not a readable zip archive: " + zip_error_text(error));
  }
  file->fd.release();  // the archive owns the descriptor now
  return index(std::move(state));
}

Result<Pt2Reader> Pt2Reader::from_bytes(std::vector<uint8_t> bytes) {
  auto state = std::make_unique<State>();
  state->bytes = std::move(bytes);
  state->archive_size = state->bytes.size();
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* source = zip_source_buffer_create(state->bytes.data(), state->bytes.size(), 0, &error);
  if (source == nullptr) {
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    return corrupt("cannot read the archive: " + text);
  }
  state->archive = zip_open_from_source(source, ZIP_RDONLY | ZIP_CHECKCONS, &error);
  if (state->archive == nullptr) {
    zip_source_free(source);
    const std::string text = zip_error_strerror(&error);
    zip_error_fini(&error);
    return corrupt("not a readable zip archive: " + text);
  }
  zip_error_fini(&error);
  return index(std::move(state));
}

Result<Pt2Reader> Pt2Reader::index(std::unique_ptr<State> state) {
  const zip_int64_t count = zip_get_num_entries(state->archive, 0);
  if (count <= 0) return corrupt("the archive holds no entries");
  Pt2Reader reader(nullptr);
  uint64_t total_compressed = 0;
  for (zip_int64_t i = 0; i < count; ++i) {
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(state->archive, static_cast<zip_uint64_t>(i), 0, &st) != 0 || !(st.valid & ZIP_STAT_NAME) ||
        !(st.valid & ZIP_STAT_SIZE) || !(st.valid & ZIP_STAT_COMP_SIZE) || !(st.valid & ZIP_STAT_COMP_METHOD)) {
      return corrupt("entry " + std::to_string(i) + " has no readable directory record");
    }
    const std::string name = st.name;
    if ((st.valid & ZIP_STAT_ENCRYPTION_METHOD) && st.encryption_method != ZIP_EM_NONE) {
      return corrupt("entry '" + name + "' is encrypted");
    }
    if (st.comp_size > state->archive_size || total_compressed + st.comp_size > state->archive_size) {
      return corrupt("entry '" + name + "' declares " + std::to_string(st.comp_size) +
                     " stored bytes, more than the archive's " + std::to_string(state->archive_size));
    }
    total_compressed += st.comp_size;
    if (st.comp_method == ZIP_CM_STORE) {
      if (st.size != st.comp_size) {
        return corrupt("stored entry '" + name + "' declares " + std::to_string(st.size) + " bytes but holds " +
                       std::to_string(st.comp_size));
      }
    } else if (st.size / kMaxDeflateRatio > st.comp_size + 1) {
      return corrupt("entry '" + name + "' declares " + std::to_string(st.size) + " bytes from " +
                     std::to_string(st.comp_size) + " compressed bytes (a zip bomb)");
    }
    if (const std::string why = unsafe_name_reason(name); !why.empty()) {
      return corrupt("entry " + std::to_string(i) + " '" + name + "' " + why);
    }
    reader.raw_names_.push_back(name);
    if (i == 0) {
      const size_t slash = name.find('/');
      if (slash != std::string::npos && slash > 0) reader.root_ = name.substr(0, slash);
    }
    if (reader.root_.empty()) continue;  // import reports an archive without a root folder
    if (name.compare(0, reader.root_.size() + 1, reader.root_ + "/") != 0) {
      return corrupt("entry '" + name + "' lies outside the archive's root folder '" + reader.root_ +
                     "/' (taken from the first entry); a .pt2 keeps everything under one root folder");
    }
    std::string below = name.substr(reader.root_.size() + 1);
    if (below.empty() || below.back() == '/') continue;  // a folder entry holds no data
    if (!state->index.emplace(below, static_cast<zip_uint64_t>(i)).second) {
      return corrupt("entry '" + name + "' appears twice");
    }
    state->sizes.emplace(below, st.size);
    reader.names_.push_back(std::move(below));
  }
  reader.state_ = std::move(state);
  return reader;
}

bool Pt2Reader::has(std::string_view name) const { return state_->index.count(std::string(name)) > 0; }

Result<uint64_t> Pt2Reader::size(std::string_view name) const {
  auto it = state_->sizes.find(std::string(name));
  if (it == state_->sizes.end()) {
    return make_error(codes::kArchiveEntryMissing, "the archive has no entry '" + root_ + "/" + std::string(name) + "'");
  }
  return it->second;
}

Result<std::vector<uint8_t>> Pt2Reader::read(std::string_view name, uint64_t max_bytes) const {
  NRT_TRY(size, this->size(name));
  if (*size > max_bytes) {
    return corrupt("entry '" + root_ + "/" + std::string(name) + "' holds " + std::to_string(*size) +
                   " bytes, more than the " + std::to_string(max_bytes) + " allowed for it");
  }
  return read_bytes(name, *size);
}

Result<std::vector<uint8_t>> Pt2Reader::read_prefix(std::string_view name, uint64_t count) const {
  NRT_TRY(size, this->size(name));
  return read_bytes(name, std::min(count, *size));
}

Result<std::vector<uint8_t>> Pt2Reader::read_bytes(std::string_view name, uint64_t count) const {
  const std::string full = root_ + "/" + std::string(name);
  const zip_uint64_t entry = state_->index.at(std::string(name));
  const uint64_t size = state_->sizes.at(std::string(name));
  zip_file_t* file = zip_fopen_index(state_->archive, entry, 0);
  if (file == nullptr) return corrupt("cannot open entry '" + full + "': " + zip_strerror(state_->archive));
  std::vector<uint8_t> bytes(count);
  uint64_t done = 0;
  std::string failure;
  while (done < count) {
    const zip_int64_t n = zip_fread(file, bytes.data() + done, count - done);
    if (n <= 0) {
      failure = n < 0 ? zip_file_strerror(file) : "it ends after " + std::to_string(done) + " bytes";
      break;
    }
    done += static_cast<uint64_t>(n);
  }
  if (failure.empty() && count == size) {
    uint8_t extra = 0;
    const zip_int64_t n = zip_fread(file, &extra, 1);  // reaching the end checks the CRC
    if (n != 0) failure = n < 0 ? zip_file_strerror(file) : "it holds more bytes than it declares";
  }
  zip_fclose(file);
  if (!failure.empty()) return corrupt("entry '" + full + "' cannot be read: " + failure);
  return bytes;
}

Result<std::string> Pt2Reader::read_text(std::string_view name, uint64_t max_bytes) const {
  NRT_TRY(bytes, read(name, max_bytes));
  std::string text;
  text.reserve(bytes->size() + kTextPadding);  // lets simdjson parse it in place
  text.assign(bytes->begin(), bytes->end());
  return text;
}

Result<std::vector<uint8_t>> write_pt2_archive(const std::string& root, std::span<const Pt2Entry> entries) {
  zip_error_t error;
  zip_error_init(&error);
  zip_source_t* sink = zip_source_buffer_create(nullptr, 0, 0, &error);
  if (sink == nullptr) {
    zip_error_fini(&error);
    return make_error(ErrorCode::IoWrite, "cannot create an in-memory archive");
  }
  zip_t* archive = zip_open_from_source(sink, ZIP_TRUNCATE, &error);
  zip_error_fini(&error);
  if (archive == nullptr) {
    zip_source_free(sink);
    return make_error(ErrorCode::IoWrite, "cannot create an in-memory archive");
  }
  zip_source_keep(sink);  // the bytes stay readable after zip_close
  auto fail = [&](const std::string& what) -> Error {
    std::string text = what + ": " + zip_strerror(archive);
    zip_discard(archive);
    zip_source_free(sink);
    return make_error(ErrorCode::IoWrite, text);
  };

  // Local header: 30 bytes + name + extra fields (our padding field: 4 + padding bytes).
  uint64_t offset = 0;
  const std::vector<uint8_t> padding(kPt2RecordAlignment, 'Z');
  for (const Pt2Entry& entry : entries) {
    const std::string name = root + "/" + entry.name;
    zip_source_t* data = zip_source_buffer(archive, entry.bytes.data(), entry.bytes.size(), 0);
    if (data == nullptr) return fail("cannot add '" + name + "'");
    const zip_int64_t index = zip_file_add(archive, name.c_str(), data, ZIP_FL_ENC_UTF_8);
    if (index < 0) {
      zip_source_free(data);
      return fail("cannot add '" + name + "'");
    }
    const auto i = static_cast<zip_uint64_t>(index);
    uint64_t start = offset + 30 + name.size() + 4;
    if (entry.bytes.size() >= 0xFFFFFFFFu) start += 20;  // libzip's zip64 local extra field
    const auto pad = static_cast<uint16_t>((kPt2RecordAlignment - start % kPt2RecordAlignment) % kPt2RecordAlignment);
    if (zip_set_file_compression(archive, i, ZIP_CM_STORE, 0) != 0 ||
        zip_file_set_dostime(archive, i, 0, kDosDate1980, 0) != 0 ||
        zip_file_extra_field_set(archive, i, kPaddingFieldId, ZIP_EXTRA_FIELD_NEW, padding.data(), pad,
                                 ZIP_FL_LOCAL) != 0) {
      return fail("cannot lay out '" + name + "'");
    }
    offset = start + pad + entry.bytes.size();
  }
  if (zip_close(archive) != 0) return fail("cannot finish the archive");

  std::vector<uint8_t> bytes;
  zip_stat_t st;
  zip_stat_init(&st);
  const bool ok = zip_source_open(sink) == 0;
  if (ok && zip_source_stat(sink, &st) == 0 && (st.valid & ZIP_STAT_SIZE)) {
    bytes.resize(st.size);
    if (zip_source_read(sink, bytes.data(), st.size) != static_cast<zip_int64_t>(st.size)) bytes.clear();
  }
  if (ok) zip_source_close(sink);
  zip_source_free(sink);
  if (bytes.empty()) return make_error(ErrorCode::IoWrite, "cannot read back the in-memory archive");
  if (Status s = check_record_alignment(bytes); !s) {
    return make_error(ErrorCode::IoWrite, "the archive came out misaligned: " + s.error().message);
  }
  return bytes;
}

Status check_record_alignment(std::span<const uint8_t> zip) {
  // End of central directory: the last "PK\5\6" within the final 64 KiB + 22 bytes.
  if (zip.size() < 22) return corrupt("too small for a zip archive");
  size_t eocd = zip.size() - 22;
  const size_t lowest = zip.size() > 65557 ? zip.size() - 65557 : 0;
  while (le32(zip.data() + eocd) != 0x06054b50) {
    if (eocd == lowest) return corrupt("no end-of-central-directory record");
    --eocd;
  }
  uint64_t entries = le16(zip.data() + eocd + 10);
  uint64_t cd = le32(zip.data() + eocd + 16);
  if ((entries == 0xFFFF || cd == 0xFFFFFFFF) && eocd >= 20 && le32(zip.data() + eocd - 20) == 0x07064b50) {
    const uint64_t z64 = le64(zip.data() + eocd - 20 + 8);
    if (z64 > zip.size() || zip.size() - z64 < 56 || le32(zip.data() + z64) != 0x06064b50) {
      return corrupt("bad zip64 end-of-central-directory record");
    }
    entries = le64(zip.data() + z64 + 32);
    cd = le64(zip.data() + z64 + 48);
  }
  for (uint64_t e = 0; e < entries; ++e) {
    if (cd > zip.size() || zip.size() - cd < 46 || le32(zip.data() + cd) != 0x02014b50) {
      return corrupt("central directory entry " + std::to_string(e) + " is out of bounds");
    }
    const uint8_t* h = zip.data() + cd;
    const uint16_t method = le16(h + 10), name_len = le16(h + 28), extra_len = le16(h + 30), comment_len = le16(h + 32);
    uint64_t local = le32(h + 42);
    const uint32_t size32 = le32(h + 24), comp32 = le32(h + 20);
    if (zip.size() - cd < 46u + name_len + extra_len + comment_len) return corrupt("central directory truncated");
    const std::string name(reinterpret_cast<const char*>(h + 46), name_len);
    // Zip64 extra field (id 1): the 64-bit values of the fields that read 0xFFFFFFFF, in order.
    for (size_t x = 0; x + 4 <= extra_len;) {
      const uint8_t* f = h + 46 + name_len + x;
      const uint16_t id = le16(f), len = le16(f + 2);
      if (x + 4 + len > extra_len) break;
      if (id == 1) {
        size_t at = 4;
        for (const uint32_t field : {size32, comp32}) {
          if (field == 0xFFFFFFFF) at += 8;
        }
        if (local == 0xFFFFFFFF && at + 8 <= 4u + len) local = le64(f + at);
      }
      x += 4 + len;
    }
    if (method != ZIP_CM_STORE) return corrupt("entry '" + name + "' is compressed");
    if (local > zip.size() || zip.size() - local < 30 || le32(zip.data() + local) != 0x04034b50) {
      return corrupt("entry '" + name + "' has no local header");
    }
    const uint64_t data = local + 30 + le16(zip.data() + local + 26) + le16(zip.data() + local + 28);
    if (data % kPt2RecordAlignment != 0) {
      return corrupt("entry '" + name + "' data starts at byte " + std::to_string(data) + ", not a multiple of " +
                     std::to_string(kPt2RecordAlignment));
    }
    cd += 46u + name_len + extra_len + comment_len;
  }
  return {};
}

}  // namespace nrt::torch_export
