// Counts heap allocations, for `syncsim bench merge` (allocations per merged instruction).
// On glibc, this target defines malloc, calloc, realloc, reallocarray, memalign,
// posix_memalign, aligned_alloc, valloc and pvalloc: each forwards to glibc's own allocator
// (`__libc_malloc` and friends) and, while the calling thread has counting on, adds one to
// that thread's counter. Per thread, so that a merge's count is its own even while other
// threads allocate (parallel tests). `free` is not wrapped. Elsewhere nothing is interposed
// and `syncsim_allocation_counting_available` returns 0.
#ifndef SYNCSIM_CALLOCATIONCOUNT_H
#define SYNCSIM_CALLOCATIONCOUNT_H

#include <stdint.h>

/// 1 where allocations are counted (glibc), else 0.
int syncsim_allocation_counting_available(void);

/// Starts counting on the calling thread (nestable: counting stays on until every start has
/// its stop).
void syncsim_allocation_counting_start(void);

/// Ends one `syncsim_allocation_counting_start` of the calling thread.
void syncsim_allocation_counting_stop(void);

/// Allocations the calling thread made so far while it had counting on.
uint64_t syncsim_allocation_count(void);

#endif
