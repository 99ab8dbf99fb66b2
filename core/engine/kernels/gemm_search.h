// The GEMMs of `compile fused`'s linear layers with a measured choice of cuBLAS algorithm.
//
// at::mm runs the kernel cuBLAS's heuristic picks for a shape. On the H200 that pick is up to 20 %
// slower than the best of cuBLASLt's candidates for some of the 7B's shapes (w2's weight gradient:
// 327 against 261 us in a cuBLASLt probe; docs/history/benchmarks-2026-12.md, "The GEMM algorithm,
// measured per shape"). So each shape a step meets is noted (that call is at::mm's), and between steps
// search_pending() times at::mm's call and cuBLASLt's candidates on operands of the same shape,
// layout and alignment (GPU time under load: the calls in turn, back to back, so the GPU runs at
// the clock its power limit allows in a step, not an idle GPU's boost clock; median of 5 rounds);
// later calls of the shape run the fastest
// if it beats at::mm's by at least 1 %. A candidate counts only if its result equals at::mm's bit
// for bit: the search changes speed, never the numbers a trial computes. It runs between steps,
// outside the step's clock and beside no activations; its scratch (the operands and two outputs
// of one GEMM) is not charged to the trial (Trainer::search_gemms carries the allocator's peak
// over it). A shape whose search fails (out of memory, a candidate cuBLASLt will not run) keeps
// at::mm's call.
//
// Where it does not apply the call is at::mm itself: the CPU, other dtypes, operands that are not
// row- or column-major, builds without CUDA, libtorch 2.10 or the wheel's cuBLASLt, a product that
// must itself be differentiated (a backward under create_graph), a shape first met while a CUDA
// graph is captured (the graph keeps that call), and TUNEBENCH_GEMM=cublas (the switch for
// measuring the difference).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include <ATen/ATen.h>

#include "core/engine/switches.h"

namespace tunebench::engine::gemm {

// a [M, K] x b [K, N] in `out` dtype: a's dtype, or fp32 from 16-bit operands (accumulated in fp32
// and written straight from the GEMM where the libtorch can).
at::Tensor mm(const at::Tensor& a, const at::Tensor& b, at::ScalarType out);

// at::_scaled_mm(a, b, scale_a, scale_b, out, fast_accum) for float8 a [M, K] and b [K, N] with
// per-tensor scales (one fp32 each), searched the same way against that call. Here a plan's call
// need only be as fast (within 1 %): at::_scaled_mm builds its cuBLASLt descriptors and asks the
// heuristic on every call, host time a plan does not spend. Only in CUDA builds with libtorch 2.1+.
at::Tensor scaled_mm(const at::Tensor& a, const at::Tensor& b, const at::Tensor& scale_a, const at::Tensor& scale_b,
                     at::ScalarType out, bool fast_accum);

// The switches that change the search (core/engine/switches.h): TUNEBENCH_GEMM=cublas turns it off,
// TUNEBENCH_GEMM_LOG writes each searched shape's times to stderr. Process-wide; set before the
// first GEMM (the trainer does, from the worker's switches; the kernel check from its own). Until
// then: the search on, no log.
void use_switches(const Switches& switches);

// Whether shapes met since the last search wait for one.
bool pending();
// Searches the shapes met since the last call (between steps: it synchronises with the GPU).
void search_pending();

// What the searches so far found, for the trial's log.
struct Summary {
  int shapes = 0;        // shapes searched
  int faster = 0;        // shapes where a cuBLASLt candidate beat at::mm's call
  double cublas_us = 0;  // one call of each shape with at::mm's choice, summed
  double chosen_us = 0;  // the same with the chosen algorithms
  double search_s = 0;   // wall time the searches took, between steps
  std::string disabled;  // why the search is off (empty when on)
};
Summary summary();

// One line for the log: "GEMM algorithms: 12 shapes measured, 5 faster than cuBLAS's pick ...".
std::string describe(const Summary& s);

namespace detail {
// How cuBLAS (column-major) reads a row-major-indexed matrix t [rows, cols] (the search's layout
// rule, here so the CPU tests reach it). A row-major t (stride 1 along a row) is read as its
// transpose, stored cols x rows with leading dimension stride(0): transpose false. The transpose of a
// row-major tensor (stride 1 down a column) is read as stored, rows x cols with leading dimension
// stride(1): transpose true. Empty when t is neither.
struct ColumnMajor {
  bool transpose;
  int64_t rows, cols, ld;  // of the matrix as stored, column-major
};
std::optional<ColumnMajor> column_major(const at::Tensor& t);

// Random values in a [rows, cols] tensor with layout m, offset `align` bytes from its storage's
// start when align < 256 (the allocator's CUDA blocks start 512-byte aligned, so the pointer then
// has exactly that alignment): the operand a search measures in place of one it met.
at::Tensor random_operand(int64_t rows, int64_t cols, const ColumnMajor& m, uint32_t align,
                          const at::TensorOptions& options);
}  // namespace detail

}  // namespace tunebench::engine::gemm
