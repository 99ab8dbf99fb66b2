// Stand-in for the header a CUDA build of libtorch generates (c10/cuda/impl/cuda_cmake_macros.h.in)
// and a CPU libtorch such as Debian's does not ship. Only tests/cuda/cuda_paths_syntax_test.sh
// puts it on an include path, to parse the engine's CUDA paths against those headers.
#pragma once
#define C10_CUDA_BUILD_SHARED_LIBS
