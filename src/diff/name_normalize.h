// Kernel name normalization for diff: turns the demangled name one tool prints (nsys keeps the full
// demangled name, PyTorch's Kineto prints its own demangling) into a key that is the same for the
// same kernel across tools. Pure string functions; rules in docs/analyses/diff.md, "Matching".
#pragma once

#include <string>
#include <string_view>

namespace sightline {

// The matching key of a kernel name. It keeps the qualified name and template arguments (so two
// instantiations stay apart) and drops what differs between demanglers:
//   - function parameter lists, including those of enclosing functions and lambdas;
//   - the words void, const, volatile, struct, class, enum, typename;
//   - casts on non-type template arguments: "(int)128" -> "128", "(bool)1" -> "true";
//   - integer literal suffixes: "2ul" -> "2";
//   - spellings: "<unnamed>" and "(anonymous namespace)" -> "anon", "[lambda(int) (instance 1)]"
//     and "{lambda(int)#1}" -> "{lambda#1}", "operator ()" -> "operator()";
//   - all whitespace.
// "void at::native::vectorized_elementwise_kernel<(int)4, at::native::FillFunctor<bool>,
// std::array<char *, (unsigned long)1>>(int, T2, T3)" and the Kineto spelling "void
// at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<bool>, std::array<char*,
// 1ul> >(int, at::native::FillFunctor<bool>, std::array<char*, 1ul>)" both give
// "at::native::vectorized_elementwise_kernel<4,at::native::FillFunctor<bool>,std::array<char*,1>>".
std::string NormalizeKernelName(std::string_view name);

// A normalized key without its template argument lists
// ("at::native::vectorized_elementwise_kernel"); the diff's second, looser matching pass uses it.
std::string KernelBaseKey(std::string_view normalized_key);

// A normalized key without namespace qualifiers, for people: "at::native::vectorized_elementwise_
// kernel<4,at::native::FillFunctor<bool>,std::array<char*,1>>" ->
// "vectorized_elementwise_kernel<4,FillFunctor<bool>,array<char*,1>>". Unlike the short name it
// keeps what tells instantiations apart.
std::string KernelDisplayName(std::string_view normalized_key);

}  // namespace sightline
