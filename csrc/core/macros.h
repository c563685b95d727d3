// Portability macros shared by host C++ and CUDA code.
#pragma once

#if defined(__CUDACC__) || defined(__HIPCC__)
#define CL_HOST_DEVICE __host__ __device__
#define CL_DEVICE __device__
#else
#define CL_HOST_DEVICE
#define CL_DEVICE
#endif

#define CL_DISALLOW_COPY_AND_MOVE(T) \
  T(const T&) = delete;              \
  T& operator=(const T&) = delete;   \
  T(T&&) = delete;                   \
  T& operator=(T&&) = delete
