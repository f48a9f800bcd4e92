// The layout check shared by from_blob() and RecycledTensors::FromBlob(): one place decides
// which foreign layouts opreg can view and how their errors read.
#pragma once

#include <cstddef>
#include <cstdint>

#include "opreg/core/tensor.h"

namespace opreg {

struct BlobLayout {
  int64_t numel;
  size_t nbytes;  // the bytes the sizes and strides reach from the first element
};

// Validates a strided layout over `data` (sizes and strides of one length, none negative, no
// overflow, data non-null unless nothing is reached or the device is meta); throws opreg::Error
// (kValue) naming from_blob() otherwise.
BlobLayout CheckBlobLayout(void* data, IntArrayRef sizes, IntArrayRef strides, DType dtype,
                           Device device);

}  // namespace opreg
