// opreg::torch_stable: <torch/headeronly/util/Metaprogramming.h>, the part TORCH_BOX needs:
// typelists and the return / parameter types of a function type.
#pragma once

#include <tuple>
#include <type_traits>

namespace torch::headeronly::guts {

template <class... T>
struct false_t : std::false_type {};

namespace typelist {
template <class... Items>
struct typelist final {};
}  // namespace typelist

template <class Func>
struct function_traits {
  static_assert(false_t<Func>::value, "function_traits: expected a function type");
};
template <class Result, class... Args>
struct function_traits<Result(Args...)> {
  using func_type = Result(Args...);
  using return_type = Result;
  using parameter_types = typelist::typelist<Args...>;
  static constexpr auto number_of_parameters = sizeof...(Args);
};

template <class T>
struct infer_function_traits {
  using type = function_traits<std::remove_pointer_t<std::decay_t<T>>>;
};
template <class T>
using infer_function_traits_t = typename infer_function_traits<T>::type;

}  // namespace torch::headeronly::guts
