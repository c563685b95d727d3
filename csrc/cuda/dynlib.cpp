// The shared dlopen search of the optional NVIDIA libraries (cuda/dynlib.h).
#include "cuda/dynlib.h"

#include <cstdlib>

namespace cl::cuda::dynlib {

std::vector<std::string> env_candidates(const char* var, const std::string& file) {
  const char* env = std::getenv(var);
  if (!env || !*env) return {};
  std::string p = env;
  return {p, p + "/" + file};
}

std::vector<std::string> in_dirs(const std::vector<std::string>& dirs, const std::string& file) {
  std::vector<std::string> r;
  r.reserve(dirs.size());
  for (const std::string& d : dirs) r.push_back(d + "/" + file);
  return r;
}

void* open_first(const std::vector<std::string>& candidates,
                 const std::function<bool(void*)>& accept, const std::string& refused,
                 std::string* path, std::vector<Attempt>* attempts) {
  for (const std::string& p : candidates) {
    void* lib = dlopen(p.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      const char* e = dlerror();
      if (attempts) attempts->push_back({p, e ? e : "", false});
      continue;
    }
    if (!accept(lib)) {
      if (attempts) attempts->push_back({p, refused, true});
      dlclose(lib);
      continue;
    }
    if (path) *path = p;
    return lib;
  }
  return nullptr;
}

std::string tried(const std::vector<Attempt>& attempts) {
  std::string r;
  for (const Attempt& a : attempts)
    if (!a.opened) r += " " + a.path;
  return r;
}

std::string last_error(const std::vector<Attempt>& attempts) {
  // a dlopen failure without a dlerror() text leaves the previous error standing
  std::string r;
  for (const Attempt& a : attempts)
    if (!a.error.empty()) r = a.opened ? a.path + " " + a.error : a.error;
  return r;
}

}  // namespace cl::cuda::dynlib
