// The extension module cudalite._C: conversion code only; the logic lives in the core.
#include "bindings/arg_parser.h"
#include "bindings/convert.h"

PYBIND11_MODULE(_C, m) {
  m.doc() = "cudalite's C++ core";
  cl::bind::bind_errors(m);
  cl::bind::bind_dtype(m);
  cl::bind::bind_device(m);
  cl::bind::bind_tensor(m);
  cl::bind::bind_ops(m);
  cl::bind::bind_nn(m);
  cl::bind::bind_methods(m);
  cl::bind::bind_arith(m);
  cl::bind::bind_creation(m);
  cl::bind::bind_numpy(m);
  cl::bind::bind_cuda(m);
  cl::bind::bind_streams(m);
  cl::bind::bind_graphs(m);
  cl::bind::bind_interop(m);
  cl::bind::bind_memory(m);
  cl::bind::bind_autograd(m);
  cl::bind::bind_arg_parser(m);
  cl::bind::bind_checked(m);
  cl::bind::bind_checksum(m);
  cl::bind::bind_parallel(m);
  cl::bind::bind_version(m);
  cl::bind::bind_nccl(m);
  cl::bind::bind_foreach(m);
}
