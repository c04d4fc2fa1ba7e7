// Copyright (c) 2026 The libmscclpp authors
// SPDX-License-Identifier: MIT

// The DLPack exchange structs (version 0.8 layout, the one `from_dlpack` of torch and cupy accept in a
// "dltensor" capsule). Declared here so that the build needs no dlpack package.

#ifndef MSCCLPP_PYTHON_DLPACK_HPP_
#define MSCCLPP_PYTHON_DLPACK_HPP_

#include <cstdint>

namespace mscclpp::python::dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kROCM = 10, kCUDAManaged = 13 };
enum TypeCode : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kBfloat = 4,
  kBool = 6,
  kFloat8E4M3fn = 10,
  kFloat8E5M2 = 12
};

struct Device {
  DeviceType deviceType;
  int32_t deviceId;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;
  uint64_t byteOffset;
};

struct ManagedTensor {
  Tensor tensor;
  void* managerCtx;
  void (*deleter)(ManagedTensor* self);
};

}  // namespace mscclpp::python::dlpack

#endif  // MSCCLPP_PYTHON_DLPACK_HPP_
