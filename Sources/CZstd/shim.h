#ifndef IAPCTL_CZSTD_SHIM_H
#define IAPCTL_CZSTD_SHIM_H
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
/* Zstandard (libzstd-dev installs <zstd.h>): the ledger's packed raws (issue 25).

   Like libmariadb, libzstd is loaded with dlopen the first time a ledger raw is packed or
   unpacked, not linked: `--version`, `verify` and every command that never touches the ledger
   do not pay for loading and relocating it. Its types and constants come from zstd.h; each
   function iapctl calls is a static inline wrapper over a pointer looked up in libzstd.so.1 by
   `iapctl_zstd_load` (call it first: 1 when the library and every function were found). Only
   functions of zstd's stable API are used. */
#define ZSTD_createCCtx iapctl_declared_ZSTD_createCCtx
#define ZSTD_createDCtx iapctl_declared_ZSTD_createDCtx
#define ZSTD_createCDict iapctl_declared_ZSTD_createCDict
#define ZSTD_createDDict iapctl_declared_ZSTD_createDDict
#define ZSTD_CCtx_setParameter iapctl_declared_ZSTD_CCtx_setParameter
#define ZSTD_CCtx_refCDict iapctl_declared_ZSTD_CCtx_refCDict
#define ZSTD_compress2 iapctl_declared_ZSTD_compress2
#define ZSTD_compressBound iapctl_declared_ZSTD_compressBound
#define ZSTD_decompress_usingDDict iapctl_declared_ZSTD_decompress_usingDDict
#define ZSTD_getFrameContentSize iapctl_declared_ZSTD_getFrameContentSize
#define ZSTD_isError iapctl_declared_ZSTD_isError
#define ZSTD_getErrorName iapctl_declared_ZSTD_getErrorName
#define ZSTD_versionString iapctl_declared_ZSTD_versionString
#include <zstd.h>
#undef ZSTD_createCCtx
#undef ZSTD_createDCtx
#undef ZSTD_createCDict
#undef ZSTD_createDDict
#undef ZSTD_CCtx_setParameter
#undef ZSTD_CCtx_refCDict
#undef ZSTD_compress2
#undef ZSTD_compressBound
#undef ZSTD_decompress_usingDDict
#undef ZSTD_getFrameContentSize
#undef ZSTD_isError
#undef ZSTD_getErrorName
#undef ZSTD_versionString

#ifdef __APPLE__
#define IAPCTL_ZSTD_LIBRARY "libzstd.1.dylib"
#else
#define IAPCTL_ZSTD_LIBRARY "libzstd.so.1"
#endif

struct iapctl_zstd_api {
    int loaded; /* 1 when every function was found */
    ZSTD_CCtx *(*ZSTD_createCCtx)(void);
    ZSTD_DCtx *(*ZSTD_createDCtx)(void);
    ZSTD_CDict *(*ZSTD_createCDict)(const void *, size_t, int);
    ZSTD_DDict *(*ZSTD_createDDict)(const void *, size_t);
    size_t (*ZSTD_CCtx_setParameter)(ZSTD_CCtx *, ZSTD_cParameter, int);
    size_t (*ZSTD_CCtx_refCDict)(ZSTD_CCtx *, const ZSTD_CDict *);
    size_t (*ZSTD_compress2)(ZSTD_CCtx *, void *, size_t, const void *, size_t);
    size_t (*ZSTD_compressBound)(size_t);
    size_t (*ZSTD_decompress_usingDDict)(ZSTD_DCtx *, void *, size_t, const void *, size_t, const ZSTD_DDict *);
    unsigned long long (*ZSTD_getFrameContentSize)(const void *, size_t);
    unsigned (*ZSTD_isError)(size_t);
    const char *(*ZSTD_getErrorName)(size_t);
    const char *(*ZSTD_versionString)(void);
};

/* (Each object file that includes this header may get its own copy of the table; each copy is
   filled once, under pthread_once, from the same loaded library.) */
static inline struct iapctl_zstd_api *iapctl_zstd_table(void) {
    static struct iapctl_zstd_api table;
    return &table;
}

static inline void iapctl_zstd_fill(void) {
    struct iapctl_zstd_api *api = iapctl_zstd_table();
    void *library = dlopen(IAPCTL_ZSTD_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define IAPCTL_ZSTD_FIND(name) \
    if (!(*(void **)&api->name = dlsym(library, #name))) return;
    IAPCTL_ZSTD_FIND(ZSTD_createCCtx)
    IAPCTL_ZSTD_FIND(ZSTD_createDCtx)
    IAPCTL_ZSTD_FIND(ZSTD_createCDict)
    IAPCTL_ZSTD_FIND(ZSTD_createDDict)
    IAPCTL_ZSTD_FIND(ZSTD_CCtx_setParameter)
    IAPCTL_ZSTD_FIND(ZSTD_CCtx_refCDict)
    IAPCTL_ZSTD_FIND(ZSTD_compress2)
    IAPCTL_ZSTD_FIND(ZSTD_compressBound)
    IAPCTL_ZSTD_FIND(ZSTD_decompress_usingDDict)
    IAPCTL_ZSTD_FIND(ZSTD_getFrameContentSize)
    IAPCTL_ZSTD_FIND(ZSTD_isError)
    IAPCTL_ZSTD_FIND(ZSTD_getErrorName)
    IAPCTL_ZSTD_FIND(ZSTD_versionString)
#undef IAPCTL_ZSTD_FIND
    api->loaded = 1;
}

/* Loads the library once; 1 when it and every function were found. */
static inline int iapctl_zstd_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_zstd_fill);
    return iapctl_zstd_table()->loaded;
}

static inline struct iapctl_zstd_api *iapctl_zstd_api(void) {
    iapctl_zstd_load();
    return iapctl_zstd_table();
}

static inline ZSTD_CCtx *ZSTD_createCCtx(void) { return iapctl_zstd_api()->ZSTD_createCCtx(); }
static inline ZSTD_DCtx *ZSTD_createDCtx(void) { return iapctl_zstd_api()->ZSTD_createDCtx(); }
static inline ZSTD_CDict *ZSTD_createCDict(const void *a0, size_t a1, int a2) { return iapctl_zstd_api()->ZSTD_createCDict(a0, a1, a2); }
static inline ZSTD_DDict *ZSTD_createDDict(const void *a0, size_t a1) { return iapctl_zstd_api()->ZSTD_createDDict(a0, a1); }
static inline size_t ZSTD_CCtx_setParameter(ZSTD_CCtx *a0, ZSTD_cParameter a1, int a2) { return iapctl_zstd_api()->ZSTD_CCtx_setParameter(a0, a1, a2); }
static inline size_t ZSTD_CCtx_refCDict(ZSTD_CCtx *a0, const ZSTD_CDict *a1) { return iapctl_zstd_api()->ZSTD_CCtx_refCDict(a0, a1); }
static inline size_t ZSTD_compress2(ZSTD_CCtx *a0, void *a1, size_t a2, const void *a3, size_t a4) { return iapctl_zstd_api()->ZSTD_compress2(a0, a1, a2, a3, a4); }
static inline size_t ZSTD_compressBound(size_t a0) { return iapctl_zstd_api()->ZSTD_compressBound(a0); }
static inline size_t ZSTD_decompress_usingDDict(ZSTD_DCtx *a0, void *a1, size_t a2, const void *a3, size_t a4, const ZSTD_DDict *a5) { return iapctl_zstd_api()->ZSTD_decompress_usingDDict(a0, a1, a2, a3, a4, a5); }
static inline unsigned long long ZSTD_getFrameContentSize(const void *a0, size_t a1) { return iapctl_zstd_api()->ZSTD_getFrameContentSize(a0, a1); }
static inline unsigned ZSTD_isError(size_t a0) { return iapctl_zstd_api()->ZSTD_isError(a0); }
static inline const char *ZSTD_getErrorName(size_t a0) { return iapctl_zstd_api()->ZSTD_getErrorName(a0); }
static inline const char *ZSTD_versionString(void) { return iapctl_zstd_api()->ZSTD_versionString(); }

/* ZSTD_CONTENTSIZE_UNKNOWN / _ERROR are macro expressions Swift does not import. */
static inline unsigned long long iapctl_zstd_contentsize_unknown(void) { return ZSTD_CONTENTSIZE_UNKNOWN; }
static inline unsigned long long iapctl_zstd_contentsize_error(void) { return ZSTD_CONTENTSIZE_ERROR; }
#endif
