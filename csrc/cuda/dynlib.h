// Opening the optional NVIDIA libraries with dlopen: cuBLAS (blas_handle.cpp), cuBLASLt
// (blas_lt.cpp), NVML (nvml.cpp), NCCL (nccl.cpp) and cuDNN (cudnn_handle.cpp). None of them is
// linked, so that `import cudalite` works wherever they are missing; each loader lists the
// paths to try, in order, and opens the first one that has the entry points it needs.
//
// Where the paths come from: an environment variable naming the library or its folder
// (CUDALITE_CUDNN_PATH here; CUDALITE_NCCL_PATH is read by the Python layer), the lib folders of
// pip's nvidia-* wheels next to the Python packages (found by cudalite/cuda/_dynlib.py and
// handed down), and the bare sonames, which the dynamic loader looks up in its own search path
// (LD_LIBRARY_PATH, the ld.so cache).
#pragma once

#include <dlfcn.h>

#include <functional>
#include <string>
#include <vector>

namespace cl::cuda::dynlib {

// One path that was tried and not used.
struct Attempt {
  std::string path;
  std::string error;    // dlerror()'s text, or why an opened library was not used
  bool opened = false;  // dlopen succeeded, but `accept` refused the library
};

// The library named by environment variable `var` (unset or empty: none): the value itself,
// then `file` in it, for a value that names the library or the folder holding it.
std::vector<std::string> env_candidates(const char* var, const std::string& file);

// `file` in each of `dirs`.
std::vector<std::string> in_dirs(const std::vector<std::string>& dirs, const std::string& file);

// Opens the candidates in order until `accept(handle)` (which resolves the entry points the
// caller needs) returns true, and returns that handle and its path; a library it refuses is
// closed again, with `refused` as the reason. Returns null when none was usable; `attempts`
// (may be null) then says what happened to each path.
void* open_first(const std::vector<std::string>& candidates,
                 const std::function<bool(void*)>& accept, const std::string& refused,
                 std::string* path, std::vector<Attempt>* attempts);

// The paths that could not be opened, separated by spaces (" a b"), and the error of the last
// attempt: the "Tried: ... Last error: ..." of the cuBLAS and cuDNN messages.
std::string tried(const std::vector<Attempt>& attempts);
std::string last_error(const std::vector<Attempt>& attempts);

// Sets `fn` to the entry point `name` of `lib`; whether it exists.
template <class Fn>
bool resolve(void* lib, Fn& fn, const char* name) {
  fn = reinterpret_cast<Fn>(dlsym(lib, name));
  return fn != nullptr;
}

}  // namespace cl::cuda::dynlib
