#ifndef IAPCTL_CZLIB_SHIM_H
#define IAPCTL_CZLIB_SHIM_H
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stddef.h>
/* zlib's CRC-32, for the check of ledger rows written before issue 25 (format versions 1 and 2).

   Only `crc32` is used, so libz.so.1 (Debian's zlib1g, a required package) is loaded with dlopen
   the first time an old row is read, not linked: no command that never reads such a row pays for
   it, and no header package is needed (the prototype below is zlib's documented, stable one). */
#ifdef __APPLE__
#define IAPCTL_ZLIB_LIBRARY "libz.1.dylib"
#else
#define IAPCTL_ZLIB_LIBRARY "libz.so.1"
#endif

typedef unsigned long (*iapctl_zlib_crc32_fn)(unsigned long crc, const unsigned char *buf, unsigned int len);

static inline iapctl_zlib_crc32_fn *iapctl_zlib_crc32_slot(void) {
    static iapctl_zlib_crc32_fn slot;
    return &slot;
}

static inline void iapctl_zlib_fill(void) {
    void *library = dlopen(IAPCTL_ZLIB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
    *(void **)iapctl_zlib_crc32_slot() = dlsym(library, "crc32");
}

/* The CRC-32 of `len` bytes at `buf` (NULL when len is 0); *loaded is 1 when zlib was found
   (the value is meaningful only then). */
static inline unsigned long iapctl_zlib_crc32(const unsigned char *buf, size_t len, int *loaded) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_zlib_fill);
    iapctl_zlib_crc32_fn crc32 = *iapctl_zlib_crc32_slot();
    *loaded = crc32 != NULL;
    if (!crc32) return 0;
    unsigned long crc = crc32(0, NULL, 0);
    while (len > 0) {
        unsigned int chunk = len > UINT_MAX ? UINT_MAX : (unsigned int)len;
        crc = crc32(crc, buf, chunk);
        buf += chunk;
        len -= chunk;
    }
    return crc;
}
#endif
