// cuBLASLt's bias epilogue for addmm (blas_lt.h).
//
// The library is opened on first use. A plan (descriptors, layouts and the algorithm the
// heuristic picks) is made once per problem shape and alignment and kept: the heuristic
// costs tens of microseconds, more than a small Linear layer's product. Plans are used under
// a lock because the bias pointer is set on the shared descriptor for each call.
#include "cuda/blas_lt.h"

#include <cublasLt.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <tuple>

#include "core/cuda_api.h"
#include "cuda/cublas_loader.h"
#include "cuda/dynlib.h"
#include "cuda/graphs.h"
#include "ops/ops.h"

namespace cl::cuda {

namespace {

struct Lt {
  cublasStatus_t (*create)(cublasLtHandle_t*) = nullptr;
  cublasStatus_t (*desc_create)(cublasLtMatmulDesc_t*, cublasComputeType_t,
                                cudaDataType_t) = nullptr;
  cublasStatus_t (*desc_set)(cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void*,
                             size_t) = nullptr;
  cublasStatus_t (*layout_create)(cublasLtMatrixLayout_t*, cudaDataType, uint64_t, uint64_t,
                                  int64_t) = nullptr;
  cublasStatus_t (*pref_create)(cublasLtMatmulPreference_t*) = nullptr;
  cublasStatus_t (*pref_set)(cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t,
                             const void*, size_t) = nullptr;
  cublasStatus_t (*pref_destroy)(cublasLtMatmulPreference_t) = nullptr;
  cublasStatus_t (*heuristic)(cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatrixLayout_t,
                              cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,
                              cublasLtMatmulHeuristicResult_t*, int*) = nullptr;
  cublasStatus_t (*matmul)(cublasLtHandle_t, cublasLtMatmulDesc_t, const void*, const void*,
                           cublasLtMatrixLayout_t, const void*, cublasLtMatrixLayout_t, const void*,
                           const void*, cublasLtMatrixLayout_t, void*, cublasLtMatrixLayout_t,
                           const cublasLtMatmulAlgo_t*, void*, size_t, cudaStream_t) = nullptr;
  cublasLtHandle_t handle = nullptr;
};

// cuBLAS links cuBLASLt, so once cuBLAS is loaded the library is found by its soname or
// next to cuBLAS.
const Lt* load_lt() {
  std::string cublas_path = cublas().path;
  std::string dir = cublas_path.find('/') == std::string::npos
                        ? std::string()
                        : cublas_path.substr(0, cublas_path.rfind('/') + 1);
  std::vector<std::string> candidates;
  for (const char* name : {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so"}) {
    candidates.push_back(dir + name);
    candidates.push_back(name);
  }
  auto* lt = new Lt;
  auto accept = [lt](void* lib) {
    using dynlib::resolve;
    return resolve(lib, lt->create, "cublasLtCreate") &&
           resolve(lib, lt->desc_create, "cublasLtMatmulDescCreate") &&
           resolve(lib, lt->desc_set, "cublasLtMatmulDescSetAttribute") &&
           resolve(lib, lt->layout_create, "cublasLtMatrixLayoutCreate") &&
           resolve(lib, lt->pref_create, "cublasLtMatmulPreferenceCreate") &&
           resolve(lib, lt->pref_set, "cublasLtMatmulPreferenceSetAttribute") &&
           resolve(lib, lt->pref_destroy, "cublasLtMatmulPreferenceDestroy") &&
           resolve(lib, lt->heuristic, "cublasLtMatmulAlgoGetHeuristic") &&
           resolve(lib, lt->matmul, "cublasLtMatmul") &&
           lt->create(&lt->handle) == CUBLAS_STATUS_SUCCESS;
  };
  if (dynlib::open_first(candidates, accept, "", nullptr, nullptr)) return lt;
  delete lt;
  return nullptr;
}

const Lt* lt() {
  // null: no usable cuBLASLt, addmm takes the cuBLAS path. Loading may happen inside a CUDA
  // graph capture (Note [Capturing CUDA graphs]).
  static const Lt* lib = [] {
    RelaxedCaptureGuard relaxed;
    return load_lt();
  }();
  return lib;
}

constexpr size_t kWorkspace = size_t(4) << 20;

int alignment(const void* p) {
  auto v = reinterpret_cast<uintptr_t>(p);
  int a = 16;
  while (a > 1 && v % a) a /= 2;
  return a;
}

using Key = std::tuple<int, bool, bool, int, int, int, int, int, int, int, int, int, bool>;

struct Plan {
  bool ok = false;
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t la = nullptr, lb = nullptr, ld = nullptr;
  cublasLtMatmulAlgo_t algo{};
};

// Descriptors and layouts of a plan are kept for the life of the process, like cuBLAS
// handles (blas_handle.cpp).
Plan make_plan(const Lt& L, const LtGemm& g, int align_min) {
  Plan p;
  if (L.desc_create(&p.desc, g.compute, CUDA_R_32F) != CUBLAS_STATUS_SUCCESS) return p;
  cublasOperation_t ta = g.transa ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t tb = g.transb ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epi = CUBLASLT_EPILOGUE_BIAS;
  bool ok = L.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof(ta)) == 0 &&
            L.desc_set(p.desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof(tb)) == 0 &&
            L.desc_set(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE, &epi, sizeof(epi)) == 0;
  // op(A) is m x k, op(B) is k x n; the layouts describe the stored matrices.
  ok = ok &&
       L.layout_create(&p.la, g.type, g.transa ? g.k : g.m, g.transa ? g.m : g.k, g.lda) == 0 &&
       L.layout_create(&p.lb, g.type, g.transb ? g.n : g.k, g.transb ? g.k : g.n, g.ldb) == 0 &&
       L.layout_create(&p.ld, g.type, g.m, g.n, g.ldd) == 0;
  if (!ok) return p;
  cublasLtMatmulPreference_t pref = nullptr;
  if (L.pref_create(&pref) != CUBLAS_STATUS_SUCCESS) return p;
  size_t ws = kWorkspace;
  uint32_t al = uint32_t(align_min);
  L.pref_set(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws));
  for (auto attr :
       {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES,
        CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES}) {
    L.pref_set(pref, attr, &al, sizeof(al));
  }
  if (!g.allow_reduced) {
    uint32_t scheme = CUBLASLT_REDUCTION_SCHEME_NONE;
    L.pref_set(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK, &scheme, sizeof(scheme));
  }
  cublasLtMatmulHeuristicResult_t result{};
  int count = 0;
  cublasStatus_t st =
      L.heuristic(L.handle, p.desc, p.la, p.lb, p.ld, p.ld, pref, 1, &result, &count);
  L.pref_destroy(pref);
  if (st != CUBLAS_STATUS_SUCCESS || count == 0) return p;
  p.algo = result.algo;
  p.ok = true;
  return p;
}

}  // namespace

bool lt_gemm_bias(int device, const LtGemm& g) {
  const Lt* L = lt();
  if (!L) return false;
  int align_min = std::min({alignment(g.a), alignment(g.b), alignment(g.d), alignment(g.bias)});
  Key key{
      device,         g.transa,  g.transb,       g.m, g.n, g.k, g.lda, g.ldb, g.ldd, int(g.type),
      int(g.compute), align_min, g.allow_reduced};
  static std::mutex mu;
  static std::map<Key, Plan> plans;
  // The workspace comes from the caching allocator, outside the lock.
  Tensor ws = empty({int64_t(kWorkspace)}, ScalarType::UInt8, Device(DeviceType::CUDA, device));
  auto stream = static_cast<cudaStream_t>(current_stream(device));
  std::lock_guard<std::mutex> lock(mu);
  auto it = plans.find(key);
  if (it == plans.end()) it = plans.emplace(key, make_plan(*L, g, align_min)).first;
  Plan& p = it->second;
  if (!p.ok) return false;
  const void* bias = g.bias;
  if (L->desc_set(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias)) != 0) {
    return false;
  }
  float beta = 0.0f;
  CL_CUBLAS_CHECK(L->matmul(L->handle, p.desc, &g.alpha, g.a, p.la, g.b, p.lb, &beta, g.d, p.ld,
                            g.d, p.ld, &p.algo, ws->data(), kWorkspace, stream),
                  "cublasLtMatmul with epilogue bias");
  return true;
}

}  // namespace cl::cuda
