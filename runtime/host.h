#pragma once
// The process-wide settings a run's numeric work depends on: CPU threads and the allocator.

#include <optional>
#include <string>

#include "core/machine.h"

namespace maskprior::runtime {

/// Every core of this machine (at least 1).
using maskprior::all_cores;

/// Prepares this process for training or benchmarking on `threads` CPU threads (0 = every core)
/// and returns the count set:
/// - LibTorch's intra-op threads (which set MKL's too: the PyTorch wheel's LibTorch carries MKL),
///   and OpenBLAS's where a LibTorch calls OpenBLAS: LibTorch's setting does not reach it
///   (Debian's libtorch 1.13 linked the system `libblas.so.3`), and OpenBLAS keeps one thread per
///   core that spins between calls, so "1 thread" ran every GEMM on every core.
/// - glibc's allocator keeps freed blocks of up to 32 MiB for reuse: a training step allocates
///   and frees its activations (MBs each) every step, and above glibc's default thresholds each
///   one came as fresh pages from the kernel (page faults and zeroing, ~8% of a step's CPU time
///   at the arithmetic paper size).
int prepare_host(int threads);

/// The memory this machine can give a new allocation now (core/machine.h).
using maskprior::available_memory_bytes;

/// The BLAS's thread count in this process: OpenBLAS's where it is loaded, else MKL's (the
/// PyTorch wheel's LibTorch), else 0.
int blas_threads();

/// The BLAS in use: OpenBLAS's kernel set ("Haswell", "Cooperlake", ...; OpenBLAS picks it for
/// the CPU at load time unless OPENBLAS_CORETYPE names one), else "MKL" with MKL's version where
/// LibTorch carries MKL, else "".
std::string blas_core();

}  // namespace maskprior::runtime
