// glibc's malloc.h, which the Glibc module Swift imports leaves out: the one function Archivist
// uses, behind a static inline function (0 where the C library has no malloc_trim).
#ifndef ARCHIVIST_CMALLOC_SHIM_H
#define ARCHIVIST_CMALLOC_SHIM_H

#if defined(__GLIBC__) || defined(__linux__)
#include <malloc.h>
#endif

static inline int archivist_malloc_trim(void) {
#if defined(__GLIBC__)
    return malloc_trim(0);
#else
    return 0;
#endif
}

#endif
