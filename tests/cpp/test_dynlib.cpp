// The dlopen search shared by the CUDA loaders (csrc/cuda/dynlib.h): candidate paths, the first
// library whose entry points resolve, and the record of what was tried. libm stands for an
// NVIDIA library: it is on every glibc system.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "cuda/dynlib.h"

using namespace cl::cuda::dynlib;
using Paths = std::vector<std::string>;

TEST(Dynlib, EnvCandidates) {
  unsetenv("CUDALITE_TEST_DYNLIB");
  EXPECT_TRUE(env_candidates("CUDALITE_TEST_DYNLIB", "libx.so.1").empty());
  setenv("CUDALITE_TEST_DYNLIB", "", 1);
  EXPECT_TRUE(env_candidates("CUDALITE_TEST_DYNLIB", "libx.so.1").empty());
  // the library itself, or the folder holding it
  setenv("CUDALITE_TEST_DYNLIB", "/opt/x", 1);
  EXPECT_EQ(env_candidates("CUDALITE_TEST_DYNLIB", "libx.so.1"),
            (Paths{"/opt/x", "/opt/x/libx.so.1"}));
  unsetenv("CUDALITE_TEST_DYNLIB");
}

TEST(Dynlib, InDirs) {
  EXPECT_TRUE(in_dirs({}, "libx.so.1").empty());
  EXPECT_EQ(in_dirs({"/a/lib", "b"}, "libx.so.1"), (Paths{"/a/lib/libx.so.1", "b/libx.so.1"}));
}

TEST(Dynlib, OpensTheFirstUsableLibrary) {
  double (*cos_fn)(double) = nullptr;
  std::string path;
  std::vector<Attempt> attempts;
  void* lib = open_first(
      {"/nonexistent/libcl_none.so", "libm.so.6", "libc.so.6"},
      [&](void* h) { return resolve(h, cos_fn, "cos"); }, "lacks cos", &path, &attempts);
  ASSERT_NE(lib, nullptr);
  EXPECT_EQ(path, "libm.so.6");
  EXPECT_EQ(cos_fn(0.0), 1.0);
  ASSERT_EQ(attempts.size(), 1u);  // the later candidate is never tried
  EXPECT_EQ(attempts[0].path, "/nonexistent/libcl_none.so");
  EXPECT_FALSE(attempts[0].opened);
  EXPECT_NE(attempts[0].error.find("libcl_none.so"), std::string::npos);
  EXPECT_EQ(tried(attempts), " /nonexistent/libcl_none.so");
  dlclose(lib);
}

TEST(Dynlib, RefusedLibrariesAreClosedAndRecorded) {
  void (*fn)() = nullptr;
  std::vector<Attempt> attempts;
  void* lib = open_first(
      {"libm.so.6", "/nonexistent/libcl_none.so"},
      [&](void* h) { return resolve(h, fn, "cl_no_such_entry_point"); }, "lacks the entry points",
      nullptr, &attempts);
  EXPECT_EQ(lib, nullptr);
  EXPECT_EQ(fn, nullptr);
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_TRUE(attempts[0].opened);
  EXPECT_EQ(attempts[0].error, "lacks the entry points");
  EXPECT_FALSE(attempts[1].opened);
  // "Tried:" lists the paths that did not open; the last error is the last attempt's
  EXPECT_EQ(tried(attempts), " /nonexistent/libcl_none.so");
  EXPECT_EQ(last_error(attempts), attempts[1].error);
  EXPECT_EQ(open_first(
                {}, [](void*) { return true; }, "", nullptr, nullptr),
            nullptr);
}

TEST(Dynlib, LastError) {
  EXPECT_EQ(last_error({}), "");
  // a refusal names the library
  EXPECT_EQ(last_error({{"a.so", "a.so: cannot open", false}, {"/x/libm.so.6", "lacks X", true}}),
            "/x/libm.so.6 lacks X");
  // a failure without dlerror() text leaves the previous error
  std::vector<Attempt> attempts{{"a.so", "a.so: cannot open", false}, {"b.so", "", false}};
  EXPECT_EQ(last_error(attempts), "a.so: cannot open");
  EXPECT_EQ(tried(attempts), " a.so b.so");
}
