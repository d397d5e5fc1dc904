#ifndef CPREFETCH_H
#define CPREFETCH_H

/// Asks the CPU to bring the cache line at `address` in for reading, without waiting for it
/// (a hint: it never faults, whatever the address). Swift has no prefetch of its own.
static inline void syncsim_prefetch(const void *address) {
    __builtin_prefetch(address, 0, 3);
}

#endif
