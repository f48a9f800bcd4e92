// Built instead of register_cuda.cc when OPREG_BUILD_CUDA=OFF: the CUDA kernels of opreg's
// built-in ops are not built in this configuration, so nothing is registered for the CUDA key
// and nothing CUDA is linked. Calling an op on CUDA tensors then fails with the dispatcher's
// "no kernel for CUDA" error (and CUDA tensors cannot be created at all in such a build).
// This translation unit is intentionally empty.
