// See include/CAllocationCount.h. The wrappers only forward and count (a thread-local add): no
// locks, no I/O, no allocation of their own, so they are safe wherever glibc's own functions
// are.
#include "CAllocationCount.h"

#include <stddef.h>

// Initial-exec: the variables live in the executable's static TLS block, so reading them is
// one %fs-relative load and never calls `__tls_get_addr` (which could allocate).
static __thread int counting __attribute__((tls_model("initial-exec")));
static __thread uint64_t allocations __attribute__((tls_model("initial-exec")));

void syncsim_allocation_counting_start(void) { counting += 1; }

void syncsim_allocation_counting_stop(void) { counting -= 1; }

uint64_t syncsim_allocation_count(void) { return allocations; }

#if defined(__linux__) && defined(__GLIBC__)

#include <errno.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);

int syncsim_allocation_counting_available(void) { return 1; }

static inline void count_one(void) {
    if (counting > 0) allocations += 1;
}

void *malloc(size_t size) {
    count_one();
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    count_one();
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    count_one();
    return __libc_realloc(pointer, size);
}

void *reallocarray(void *pointer, size_t count, size_t size) {
    size_t total;
    if (__builtin_mul_overflow(count, size, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    count_one();
    return __libc_realloc(pointer, total);
}

void *memalign(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    count_one();
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **result, size_t alignment, size_t size) {
    // The checks glibc's own posix_memalign makes.
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) {
        return EINVAL;
    }
    count_one();
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL) return ENOMEM;
    *result = pointer;
    return 0;
}

void *valloc(size_t size) {
    count_one();
    return __libc_valloc(size);
}

void *pvalloc(size_t size) {
    count_one();
    return __libc_pvalloc(size);
}

#else

int syncsim_allocation_counting_available(void) { return 0; }

#endif
