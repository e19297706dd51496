#include "executor/cuda/cublaslt_library.h"

#include <dlfcn.h>

#include <memory>
#include <vector>

namespace nrt::exec::cuda {
namespace {

// Each entry point's name and where its address goes.
template <typename F>
void resolve(void* library, const char* name, F& slot, std::vector<std::string>& missing) {
  slot = reinterpret_cast<F>(dlsym(library, name));
  if (slot == nullptr) missing.emplace_back(name);
}

// The table of the library `file` opened as `library`, or why it cannot serve (closing it then).
Result<const CublasLt*> table_of(void* library, const std::string& file) {
  auto table = std::make_unique<CublasLt>();
  std::vector<std::string> missing;
  resolve(library, "cublasLtGetVersion", table->get_version, missing);
  resolve(library, "cublasLtGetStatusName", table->get_status_name, missing);
  resolve(library, "cublasLtGetStatusString", table->get_status_string, missing);
  resolve(library, "cublasLtCreate", table->create, missing);
  resolve(library, "cublasLtMatmul", table->matmul, missing);
  resolve(library, "cublasLtMatmulAlgoGetHeuristic", table->matmul_algo_get_heuristic, missing);
  resolve(library, "cublasLtMatmulDescCreate", table->matmul_desc_create, missing);
  resolve(library, "cublasLtMatmulDescDestroy", table->matmul_desc_destroy, missing);
  resolve(library, "cublasLtMatmulDescSetAttribute", table->matmul_desc_set_attribute, missing);
  resolve(library, "cublasLtMatmulPreferenceCreate", table->matmul_preference_create, missing);
  resolve(library, "cublasLtMatmulPreferenceDestroy", table->matmul_preference_destroy, missing);
  resolve(library, "cublasLtMatmulPreferenceSetAttribute", table->matmul_preference_set_attribute, missing);
  resolve(library, "cublasLtMatrixLayoutCreate", table->matrix_layout_create, missing);
  resolve(library, "cublasLtMatrixLayoutDestroy", table->matrix_layout_destroy, missing);
  resolve(library, "cublasLtMatrixLayoutSetAttribute", table->matrix_layout_set_attribute, missing);
  if (!missing.empty()) {
    std::string names;
    for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
    dlclose(library);
    return make_error(ErrorCode::DeviceUnavailable, "'" + file + "' lacks " + names);
  }
  // The structs and enums nrt passes are those of the headers' major version (major * 10000 + ...).
  const size_t version = table->get_version();
  if (version / 10000 != CUBLAS_VER_MAJOR) {
    dlclose(library);
    return make_error(ErrorCode::DeviceUnavailable, "'" + file + "' is version " + std::to_string(version) +
                                                        ", not of major version " + std::to_string(CUBLAS_VER_MAJOR));
  }
  return table.release();  // kept for the process, as the library is
}

}  // namespace

Result<const CublasLt*> open_cublaslt(const std::vector<std::string>& candidates) {
  std::string reasons;
  for (const std::string& candidate : candidates) {
    // RTLD_LOCAL: its symbols are reached through the table only. A process that already has the
    // library (torch's, in a Python process) gets that one back; its major version is checked.
    void* library = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    std::string reason;
    if (library == nullptr) {
      const char* error = dlerror();
      reason = error != nullptr ? error : "'" + candidate + "' cannot be opened";
    } else {
      auto table = table_of(library, candidate);
      if (table) return table;
      reason = table.error().message;
    }
    reasons += (reasons.empty() ? "" : "; ") + reason;
  }
  if (reasons.empty()) reasons = "no file to try";
  return make_error(ErrorCode::DeviceUnavailable, "cannot load cuBLASLt: " + reasons);
}

std::string cublaslt_file_name() { return "libcublasLt.so." + std::to_string(CUBLAS_VER_MAJOR); }

Result<const CublasLt*> cublaslt() {
  // The usual search first, then the toolkit the build used, where that search (which a test's own
  // library does not extend with the executable's run path) does not look.
  static const Result<const CublasLt*> opened = open_cublaslt({cublaslt_file_name(),
#ifdef NRT_CUDA_LIBRARY_DIR
                                                               std::string(NRT_CUDA_LIBRARY_DIR) + "/" + cublaslt_file_name()
#endif
  });
  return opened;
}

}  // namespace nrt::exec::cuda
