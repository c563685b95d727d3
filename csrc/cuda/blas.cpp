// Matrix products on CUDA tensors through cuBLAS: matmul (torch.matmul's shapes, batch
// dims broadcast) and addmm (beta * C + alpha * A @ B).
//
// Note [Row-major through a column-major BLAS]
// cuBLAS is column-major. A row-major [m, n] result C is the column-major n x m matrix C^T,
// and C^T = B^T A^T, so we ask cuBLAS for B^T A^T with the operands swapped. An operand
// stored row-major (unit column stride) is read as its own transpose with no flag; one
// stored column-major (unit row stride, e.g. x.t()) is read with the transpose flag; only
// other layouts are copied. Batch dims that collapse to one stride (including stride 0 for
// broadcast operands) become a strided-batched call, so broadcasting a weight over a batch
// copies nothing.
#include <cuda_runtime_api.h>

#include <climits>

#include "core/cuda_api.h"
#include "cuda/blas_lt.h"
#include "cuda/cublas_loader.h"
#include "cuda/cuda_check.h"
#include "ops/ops.h"

namespace cl {

namespace {

const char* cpp_type_name(ScalarType t) {  // the names torch's mm messages use
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "unsigned char";
    case ScalarType::Int8:
      return "signed char";
    case ScalarType::Int16:
      return "short int";
    case ScalarType::Int32:
      return "int";
    case ScalarType::Int64:
      return "long int";
    case ScalarType::Float16:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float32:
      return "float";
    case ScalarType::Float64:
      return "double";
  }
  return "?";
}

// The kernel name torch's dispatch reports for this shape of product, e.g.
// "addmm_cuda" not implemented for 'Long'.
const char* torch_kernel_name(int64_t da, int64_t db) {
  if (da == 1 && db == 1) return "dot";
  if (da >= 3 && db >= 3) return "baddbmm_cuda";
  if ((da >= 2 && db == 1) || (da == 1 && db >= 3)) return "addmv_impl_cuda";
  return "addmm_cuda";
}

void check_operands(const Tensor& a, const Tensor& b, const char* kernel) {
  check_same_device({&a, &b});
  CL_CHECK(a->is_cuda(), "cuda_matmul: expected CUDA tensors, got ", a->device().str());
  CL_CHECK(a->dtype == b->dtype,
           "expected m1 and m2 to have the same dtype, but got: ", cpp_type_name(a->dtype),
           " != ", cpp_type_name(b->dtype));
  CL_CHECK(is_floating(a->dtype), "\"", kernel, "\" not implemented for '",
           dtype_short_name(a->dtype), "'");
}

// How cuBLAS reads a row-major [rows, cols] matrix with element strides (rs, cs)
// (Note [Row-major through a column-major BLAS]).
struct Layout {
  bool ok = false;
  bool trans = false;
  int64_t ld = 0;
};

Layout layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs) {
  int64_t one = 1;
  // As stored: element (r, c) at r * ld + c, ld >= max(1, cols).
  if ((cs == 1 || cols == 1) && (rows == 1 || rs >= std::max(one, cols))) {
    return {true, false, rows == 1 ? std::max(one, cols) : rs};
  }
  // Transposed: element (r, c) at r + c * ld, ld >= max(1, rows).
  if ((rs == 1 || rows == 1) && (cols == 1 || cs >= std::max(one, rows))) {
    return {true, true, cols == 1 ? std::max(one, rows) : cs};
  }
  return {};
}

// The single stride that steps through all leading `nbatch` dims of `t`, if there is one.
bool batch_stride(const Tensor& t, size_t nbatch, int64_t* stride) {
  int64_t expect = -1;  // stride the next-outer dim must have
  *stride = 0;
  bool any = false;
  for (size_t i = nbatch; i-- > 0;) {
    int64_t size = t->sizes[i], st = t->strides[i];
    if (size == 1) continue;
    if (!any) {
      *stride = st;
      any = true;
    } else if (st != expect) {
      return false;
    }
    expect = st * size;
  }
  return true;
}

struct GemmOperand {
  Tensor t;  // keeps a copy alive when one was needed
  Layout lay;
  int64_t bstride = 0;
};

// Views `t` as batch + [rows, cols]; copies only when cuBLAS can't read it as it is.
GemmOperand prepare(Tensor t, const Shape& batch, int64_t rows, int64_t cols) {
  Shape full = batch;
  full.push_back(rows);
  full.push_back(cols);
  for (int attempt = 0; attempt < 3; ++attempt) {
    Tensor e = attempt == 2 ? contiguous(expand(t, full)) : expand(t, full);
    size_t nd = full.size();
    GemmOperand op{e, layout(rows, cols, e->strides[nd - 2], e->strides[nd - 1]), 0};
    if (op.lay.ok && batch_stride(e, batch.size(), &op.bstride)) return op;
    if (attempt == 0) t = contiguous(t);  // keep broadcast dims broadcast (stride 0)
  }
  throw Error("cuda_matmul: internal error: no cuBLAS layout for a contiguous operand");
}

int to_int(int64_t v, const char* what) {
  CL_CHECK(v <= INT_MAX, "cuda_matmul: ", what, " = ", v,
           " exceeds the 32-bit limit of the cuBLAS calls cudalite uses");
  return int(v);
}

cudaDataType cuda_type(ScalarType t) {
  switch (t) {
    case ScalarType::Float16:
      return CUDA_R_16F;
    case ScalarType::BFloat16:
      return CUDA_R_16BF;
    case ScalarType::Float32:
      return CUDA_R_32F;
    default:
      return CUDA_R_64F;
  }
}

// out (contiguous, batch + [m, n]) = alpha * a @ b + beta * out.
void gemm(const Tensor& out, const Tensor& a, const Tensor& b, const Shape& batch, double alpha,
          double beta) {
  int64_t m = a->sizes[a->dim() - 2], k = a->sizes.back(), n = b->sizes.back();
  if (out->numel() == 0) return;
  if (k == 0) {  // an empty sum: beta * out
    if (beta == 0) {
      fill_(out, Scalar(0.0));
    } else if (beta != 1) {
      binary(BinaryOp::Mul, ::cl::Operand(out), ::cl::Operand(Scalar(beta)), out);
    }
    return;
  }
  int64_t nbatch = shape_numel(batch);
  GemmOperand A = prepare(a, batch, m, k), B = prepare(b, batch, k, n);
  int dev = out->device().index;
  cuda::DeviceGuard guard(dev);
  const cuda::Cublas& lib = cuda::cublas();
  auto handle = static_cast<cublasHandle_t>(cuda::blas_handle(dev));

  ScalarType dt = out->dtype;
  const cuda::MatmulFlags& flags = cuda::matmul_flags();
  CL_CHECK(dt != ScalarType::Float32 || !flags.tf32_api_conflict, cuda::kTf32ApiConflictMessage);
  cublasComputeType_t compute = CUBLAS_COMPUTE_32F;
  if (dt == ScalarType::Float64) compute = CUBLAS_COMPUTE_64F;
  if (dt == ScalarType::Float32 && flags.allow_tf32) compute = CUBLAS_COMPUTE_32F_FAST_TF32;
  bool reduced = dt == ScalarType::Float16 ? flags.allow_fp16_reduced_precision_reduction
                                           : flags.allow_bf16_reduced_precision_reduction;
  int math = CUBLAS_DEFAULT_MATH;
  if ((dt == ScalarType::Float16 || dt == ScalarType::BFloat16) && !reduced) {
    math |= CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION;
  }
  CL_CUBLAS_CHECK(lib.set_math_mode(handle, cublasMath_t(math)), "cublasSetMathMode(handle, mode)");

  float alpha_f = float(alpha), beta_f = float(beta);
  const void* pa = dt == ScalarType::Float64 ? static_cast<const void*>(&alpha) : &alpha_f;
  const void* pb = dt == ScalarType::Float64 ? static_cast<const void*>(&beta) : &beta_f;
  cudaDataType ty = cuda_type(dt);
  cublasOperation_t op_b = B.lay.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t op_a = A.lay.trans ? CUBLAS_OP_T : CUBLAS_OP_N;
  int in = to_int(n, "n"), im = to_int(m, "m"), ik = to_int(k, "k");
  int ldb = to_int(B.lay.ld, "ld"), lda = to_int(A.lay.ld, "ld");
  if (nbatch == 1) {
    CL_CUBLAS_CHECK(
        lib.gemm_ex(handle, op_b, op_a, in, im, ik, pa, B.t->data(), ty, ldb, A.t->data(), ty, lda,
                    pb, out->data(), ty, in, compute, CUBLAS_GEMM_DEFAULT),
        "cublasGemmEx(handle, opa, opb, m, n, k, &alpha, a, type, lda, b, type, ldb, "
        "&beta, c, type, ldc, compute_type, CUBLAS_GEMM_DEFAULT)");
  } else {
    CL_CUBLAS_CHECK(
        lib.gemm_strided_batched_ex(handle, op_b, op_a, in, im, ik, pa, B.t->data(), ty, ldb,
                                    B.bstride, A.t->data(), ty, lda, A.bstride, pb, out->data(), ty,
                                    in, m * n, to_int(nbatch, "batch size"), compute,
                                    CUBLAS_GEMM_DEFAULT),
        "cublasGemmStridedBatchedEx(handle, opa, opb, m, n, k, &alpha, a, type, lda, stridea, "
        "b, type, ldb, strideb, &beta, c, type, ldc, stridec, num_batches, compute_type, "
        "CUBLAS_GEMM_DEFAULT)");
  }
  CL_CUDA_KERNEL_LAUNCH_CHECK();
}

// addmm with a bias row (a Linear layer): cuBLASLt adds the bias in the product's epilogue
// instead of a copy of the expanded bias plus beta = 1. False when it doesn't apply.
bool addmm_bias_epilogue(const Tensor& out, const Tensor& bias, const Tensor& a, const Tensor& b,
                         double alpha) {
  ScalarType dt = out->dtype;
  int64_t m = a->sizes[0], k = a->sizes[1], n = b->sizes[1];
  bool fits = dt != ScalarType::Float64 && bias->dtype == dt && bias->dim() == 1 &&
              bias->sizes[0] == n && (bias->strides[0] == 1 || n == 1) && m > 0 && n > 0 && k > 0 &&
              m <= INT_MAX && n <= INT_MAX && k <= INT_MAX;
  if (!fits) return false;
  GemmOperand A = prepare(a, {}, m, k), B = prepare(b, {}, k, n);
  if (A.lay.ld > INT_MAX || B.lay.ld > INT_MAX) return false;
  const cuda::MatmulFlags& flags = cuda::matmul_flags();
  CL_CHECK(dt != ScalarType::Float32 || !flags.tf32_api_conflict, cuda::kTf32ApiConflictMessage);
  // Note [Row-major through a column-major BLAS]: D^T (n x m) = op(B^T) op(A^T).
  cuda::LtGemm g;
  g.transa = B.lay.trans;
  g.transb = A.lay.trans;
  g.m = int(n);
  g.n = int(m);
  g.k = int(k);
  g.a = B.t->data();
  g.lda = int(B.lay.ld);
  g.b = A.t->data();
  g.ldb = int(A.lay.ld);
  g.bias = bias->data();
  g.d = out->data();
  g.ldd = int(n);
  g.type = cuda_type(dt);
  g.compute = dt == ScalarType::Float32 && flags.allow_tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                            : CUBLAS_COMPUTE_32F;
  g.allow_reduced = dt == ScalarType::Float16    ? flags.allow_fp16_reduced_precision_reduction
                    : dt == ScalarType::BFloat16 ? flags.allow_bf16_reduced_precision_reduction
                                                 : true;
  g.alpha = float(alpha);
  int dev = out->device().index;
  cuda::DeviceGuard guard(dev);
  return cuda::lt_gemm_bias(dev, g);
}

Shape leading(const Tensor& t) { return Shape(t->sizes.begin(), t->sizes.end() - 2); }

[[noreturn]] void shape_error(const Tensor& a, const Tensor& b) {
  throw Error(detail::str("mat1 and mat2 shapes cannot be multiplied (", a->sizes[a->dim() - 2],
                          "x", a->sizes.back(), " and ", b->sizes[b->dim() - 2], "x",
                          b->sizes.back(), ")"));
}

}  // namespace

Tensor cuda_matmul(const Tensor& a_in, const Tensor& b_in) {
  int64_t da = a_in->dim(), db = b_in->dim();
  CL_CHECK(da >= 1 && db >= 1, "both arguments to matmul need to be at least 1D, but they are ", da,
           "D and ", db, "D");
  check_operands(a_in, b_in, torch_kernel_name(da, db));
  // 1-D operands become a row (left) or a column (right) and leave the result again.
  Tensor a = da == 1 ? unsqueeze(a_in, 0) : a_in;
  Tensor b = db == 1 ? unsqueeze(b_in, 1) : b_in;
  if (a->sizes.back() != b->sizes[b->dim() - 2]) {
    CL_CHECK(!(da == 1 && db == 1), "inconsistent tensor size, expected tensor [", a_in->sizes[0],
             "] and src [", b_in->sizes[0], "] to have the same number of elements, but got ",
             a_in->sizes[0], " and ", b_in->sizes[0], " elements respectively");
    shape_error(a, b);
  }
  Shape batch = broadcast_shapes(leading(a), leading(b));
  int64_t m = a->sizes[a->dim() - 2], n = b->sizes.back();
  Shape out_shape = batch;
  out_shape.push_back(m);
  out_shape.push_back(n);
  Tensor out = empty(out_shape, a->dtype, a->device());
  gemm(out, a, b, batch, 1.0, 0.0);
  Shape result = batch;
  if (da > 1) result.push_back(m);
  if (db > 1) result.push_back(n);
  return view(out, result);
}

Tensor cuda_addmm(const Tensor& self, const Tensor& a, const Tensor& b, double beta, double alpha) {
  CL_CHECK(a->dim() == 2, "mat1 must be a matrix, got ", a->dim(), "-D tensor");
  CL_CHECK(b->dim() == 2, "mat2 must be a matrix, got ", b->dim(), "-D tensor");
  check_operands(a, b, "addmm_cuda");
  check_same_device({&self, &a});
  if (a->sizes[1] != b->sizes[0]) shape_error(a, b);
  Shape out_shape{a->sizes[0], b->sizes[1]};
  Tensor out = empty(out_shape, a->dtype, a->device());
  if (beta == 1 && addmm_bias_epilogue(out, self, a, b, alpha)) return out;
  // beta == 0 ignores self entirely (its NaNs too), as torch documents.
  if (beta != 0) copy_(out, expand(self, out_shape));
  gemm(out, a, b, {}, alpha, beta);
  return out;
}

}  // namespace cl
