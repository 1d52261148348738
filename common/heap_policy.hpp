// The glibc heap policy of a bfhpo process that works in a loop (optimize's
// asks and training steps): freed memory stays in the heap for the next
// round instead of going back to the kernel and being faulted in again.
//
// glibc maps blocks above its mmap threshold (128 KiB at start) fresh on
// every allocation and trims the heap's top once more than its trim
// threshold (twice the mmap threshold) is free; it raises both only when a
// mapped block is freed. A TPE ask at 1000 trials frees ~0.5 MB at its end,
// so every ask trimmed it and the next faulted it in again: two thirds of
// an ask's CPU time on a virtual machine (1.4 ms against 0.45 ms,
// bench_ask_latency). On the CPU, the tracking allocator's cache hides the
// large frees that would raise the thresholds: 6-7k faults a training step
// at the small shape, 12% of its CPU. The thresholds are fixed at the
// largest mmap threshold glibc would reach by itself (32 MiB) and a trim
// threshold that holds a CPU training step's heap (256 MiB; 64 MiB left
// 3.8k faults a step at the small shape).
#pragma once

namespace bfhpo {

// Sets both thresholds, process-wide; idempotent. Memory above the trim
// threshold is still given back, and malloc_trim(0) gives back the rest.
void keep_freed_heap_for_reuse();

}  // namespace bfhpo
