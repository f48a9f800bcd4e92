// opreg::torch_compat: libtorch's at::vec functional helpers (ATen/cpu/vec/functional.h) over
// the portable Vectorized of vec.h: reductions of a vector or an array, and element-wise maps
// of one to four arrays through a vector function. Same semantics as libtorch's portable form:
// a reduction combines whole vectors first, then the lanes left to right.
//
// Errors: none. Thread safety: pure functions of their arguments.
#pragma once

#include <cstdint>

#include "opreg/torch_compat/vec.h"

namespace at::vec {

// The lanes of `acc` (the first `size` of them) combined with vec_fun, lane 0 first.
template <typename scalar_t, typename Op>
scalar_t vec_reduce_all(const Op& vec_fun, Vectorized<scalar_t> acc_vec,
                        int64_t size = Vectorized<scalar_t>::size()) {
  using Vec = Vectorized<scalar_t>;
  scalar_t acc_arr[Vec::size()];
  acc_vec.store(acc_arr);
  for (int64_t i = 1; i < size; ++i) {
    scalar_t next_arr[Vec::size()] = {};
    next_arr[0] = acc_arr[i];
    Vec acc_vec_next = Vec::loadu(next_arr);
    acc_vec = vec_fun(acc_vec, acc_vec_next);  // lvalues: vec_fun may take non-const refs
  }
  acc_vec.store(acc_arr);
  return acc_arr[0];
}

template <typename scalar_t, typename Op>
scalar_t reduce_all(const Op& vec_fun, const scalar_t* data, int64_t size) {
  using Vec = Vectorized<scalar_t>;
  if (size < Vec::size()) return vec_reduce_all(vec_fun, Vec::loadu(data, size), size);
  int64_t d = Vec::size();
  Vec acc = Vec::loadu(data);  // (the reads below are lvalues: vec_fun may take non-const refs)
  for (; d < size - (size % Vec::size()); d += Vec::size()) {
    Vec data_vec = Vec::loadu(data + d);
    acc = vec_fun(acc, data_vec);
  }
  if (size - d > 0) {
    Vec data_vec = Vec::loadu(data + d, size - d);
    acc = Vec::set(acc, vec_fun(acc, data_vec), size - d);
  }
  return vec_reduce_all(vec_fun, acc);
}

// Two reductions of the same array in one pass.
template <typename scalar_t, typename Op1, typename Op2>
std::pair<scalar_t, scalar_t> reduce2_all(const Op1& vec_fun1, const Op2& vec_fun2,
                                          const scalar_t* data, int64_t size) {
  return {reduce_all(vec_fun1, data, size), reduce_all(vec_fun2, data, size)};
}

// reduce_all of map_fun applied to each vector of `data`.
template <typename scalar_t, typename MapOp, typename ReduceOp>
scalar_t map_reduce_all(const MapOp& map_fun, const ReduceOp& red_fun, const scalar_t* data,
                        int64_t size) {
  using Vec = Vectorized<scalar_t>;
  if (size < Vec::size()) return vec_reduce_all(red_fun, map_fun(Vec::loadu(data, size)), size);
  int64_t d = Vec::size();
  Vec acc = map_fun(Vec::loadu(data));
  for (; d < size - (size % Vec::size()); d += Vec::size()) {
    Vec data_vec = Vec::loadu(data + d);
    Vec mapped = map_fun(data_vec);
    acc = red_fun(acc, mapped);
  }
  if (size - d > 0) {
    Vec data_vec = Vec::loadu(data + d, size - d);
    Vec mapped = map_fun(data_vec);
    acc = Vec::set(acc, red_fun(acc, mapped), size - d);
  }
  return vec_reduce_all(red_fun, acc);
}

// output[i] = vec_fun(input[i]), a vector at a time (the tail through a partial vector).
template <typename scalar_t, typename Op>
void map(const Op& vec_fun, scalar_t* output_data, const scalar_t* input_data, int64_t size) {
  using Vec = Vectorized<scalar_t>;
  int64_t d = 0;
  for (; d < size - (size % Vec::size()); d += Vec::size()) {
    vec_fun(Vec::loadu(input_data + d)).store(output_data + d);
  }
  if (size - d > 0) {
    vec_fun(Vec::loadu(input_data + d, size - d)).store(output_data + d, size - d);
  }
}

template <typename scalar_t, typename Op>
void map2(const Op& vec_fun, scalar_t* output_data, const scalar_t* input_data,
          const scalar_t* input_data2, int64_t size) {
  using Vec = Vectorized<scalar_t>;
  int64_t d = 0;
  for (; d < size - (size % Vec::size()); d += Vec::size()) {
    vec_fun(Vec::loadu(input_data + d), Vec::loadu(input_data2 + d)).store(output_data + d);
  }
  if (size - d > 0) {
    vec_fun(Vec::loadu(input_data + d, size - d), Vec::loadu(input_data2 + d, size - d))
        .store(output_data + d, size - d);
  }
}

template <typename scalar_t, typename Op>
void map3(const Op& vec_fun, scalar_t* output_data, const scalar_t* input_data1,
          const scalar_t* input_data2, const scalar_t* input_data3, int64_t size) {
  using Vec = Vectorized<scalar_t>;
  int64_t d = 0;
  for (; d < size - (size % Vec::size()); d += Vec::size()) {
    vec_fun(Vec::loadu(input_data1 + d), Vec::loadu(input_data2 + d), Vec::loadu(input_data3 + d))
        .store(output_data + d);
  }
  if (size - d > 0) {
    vec_fun(Vec::loadu(input_data1 + d, size - d), Vec::loadu(input_data2 + d, size - d),
            Vec::loadu(input_data3 + d, size - d))
        .store(output_data + d, size - d);
  }
}

}  // namespace at::vec
