#ifndef IAPCTL_CSQLITE_SHIM_H
#define IAPCTL_CSQLITE_SHIM_H
#include <dlfcn.h>
#include <pthread.h>
/* SQLite (libsqlite3-dev installs <sqlite3.h>; at run time only libsqlite3.so.0, Debian's libsqlite3-0).

   Like libmariadb and libzstd, libsqlite3 is loaded with dlopen when the first SQLite database is
   opened, not linked: `--version`, `verify` and the MySQL/MariaDB runs do not pay for loading and
   relocating it (issue 25, BENCHMARKS.md). Its types and constants come from sqlite3.h; each
   function iapctl calls is a static inline wrapper, under the library's own name, over a pointer
   looked up in libsqlite3.so.0 by `iapctl_sqlite_load` (call it first: 1 when the library and every
   function were found). The header's own declarations are renamed away (iapctl_declared_…) so the
   wrappers can take their names. */
#define sqlite3_open_v2 iapctl_declared_sqlite3_open_v2
#define sqlite3_close_v2 iapctl_declared_sqlite3_close_v2
#define sqlite3_extended_result_codes iapctl_declared_sqlite3_extended_result_codes
#define sqlite3_busy_timeout iapctl_declared_sqlite3_busy_timeout
#define sqlite3_exec iapctl_declared_sqlite3_exec
#define sqlite3_free iapctl_declared_sqlite3_free
#define sqlite3_errstr iapctl_declared_sqlite3_errstr
#define sqlite3_errmsg iapctl_declared_sqlite3_errmsg
#define sqlite3_errcode iapctl_declared_sqlite3_errcode
#define sqlite3_last_insert_rowid iapctl_declared_sqlite3_last_insert_rowid
#define sqlite3_changes iapctl_declared_sqlite3_changes
#define sqlite3_get_autocommit iapctl_declared_sqlite3_get_autocommit
#define sqlite3_prepare_v3 iapctl_declared_sqlite3_prepare_v3
#define sqlite3_finalize iapctl_declared_sqlite3_finalize
#define sqlite3_bind_null iapctl_declared_sqlite3_bind_null
#define sqlite3_bind_text iapctl_declared_sqlite3_bind_text
#define sqlite3_bind_blob iapctl_declared_sqlite3_bind_blob
#define sqlite3_bind_zeroblob iapctl_declared_sqlite3_bind_zeroblob
#define sqlite3_bind_int64 iapctl_declared_sqlite3_bind_int64
#define sqlite3_step iapctl_declared_sqlite3_step
#define sqlite3_reset iapctl_declared_sqlite3_reset
#define sqlite3_clear_bindings iapctl_declared_sqlite3_clear_bindings
#define sqlite3_column_count iapctl_declared_sqlite3_column_count
#define sqlite3_column_type iapctl_declared_sqlite3_column_type
#define sqlite3_column_text iapctl_declared_sqlite3_column_text
#define sqlite3_column_blob iapctl_declared_sqlite3_column_blob
#define sqlite3_column_bytes iapctl_declared_sqlite3_column_bytes
#define sqlite3_column_int64 iapctl_declared_sqlite3_column_int64
#define sqlite3_column_name iapctl_declared_sqlite3_column_name
#define sqlite3_create_function_v2 iapctl_declared_sqlite3_create_function_v2
#define sqlite3_result_error iapctl_declared_sqlite3_result_error
#define sqlite3_result_text iapctl_declared_sqlite3_result_text
#define sqlite3_value_text iapctl_declared_sqlite3_value_text
#define sqlite3_value_bytes iapctl_declared_sqlite3_value_bytes
#define sqlite3_value_int64 iapctl_declared_sqlite3_value_int64
#include <sqlite3.h>
#undef sqlite3_open_v2
#undef sqlite3_close_v2
#undef sqlite3_extended_result_codes
#undef sqlite3_busy_timeout
#undef sqlite3_exec
#undef sqlite3_free
#undef sqlite3_errstr
#undef sqlite3_errmsg
#undef sqlite3_errcode
#undef sqlite3_last_insert_rowid
#undef sqlite3_changes
#undef sqlite3_get_autocommit
#undef sqlite3_prepare_v3
#undef sqlite3_finalize
#undef sqlite3_bind_null
#undef sqlite3_bind_text
#undef sqlite3_bind_blob
#undef sqlite3_bind_zeroblob
#undef sqlite3_bind_int64
#undef sqlite3_step
#undef sqlite3_reset
#undef sqlite3_clear_bindings
#undef sqlite3_column_count
#undef sqlite3_column_type
#undef sqlite3_column_text
#undef sqlite3_column_blob
#undef sqlite3_column_bytes
#undef sqlite3_column_int64
#undef sqlite3_column_name
#undef sqlite3_create_function_v2
#undef sqlite3_result_error
#undef sqlite3_result_text
#undef sqlite3_value_text
#undef sqlite3_value_bytes
#undef sqlite3_value_int64

#ifdef __APPLE__
#define IAPCTL_SQLITE_LIBRARY "libsqlite3.0.dylib"
#else
#define IAPCTL_SQLITE_LIBRARY "libsqlite3.so.0"
#endif

/* Statement journals up to this size stay in memory (see iapctl_sqlite_fill). */
#define IAPCTL_SQLITE_STMTJRNL_SPILL (8 << 20)

/* The functions looked up. (Each object file that includes this header may get its own copy of
   the table below; each copy is filled once, under pthread_once, from the same loaded library.) */
struct iapctl_sqlite_api {
    int loaded; /* 1 when every function was found */
    int (*sqlite3_open_v2)(const char *a0, sqlite3 **a1, int a2, const char *a3);
    int (*sqlite3_close_v2)(sqlite3 *a0);
    int (*sqlite3_extended_result_codes)(sqlite3 *a0, int a1);
    int (*sqlite3_busy_timeout)(sqlite3 *a0, int a1);
    int (*sqlite3_exec)(sqlite3 *a0, const char *a1, int (*a2)(void *, int, char **, char **), void *a3, char **a4);
    void (*sqlite3_free)(void *a0);
    const char *(*sqlite3_errstr)(int a0);
    const char *(*sqlite3_errmsg)(sqlite3 *a0);
    int (*sqlite3_errcode)(sqlite3 *a0);
    sqlite3_int64 (*sqlite3_last_insert_rowid)(sqlite3 *a0);
    int (*sqlite3_changes)(sqlite3 *a0);
    int (*sqlite3_get_autocommit)(sqlite3 *a0);
    int (*sqlite3_prepare_v3)(sqlite3 *a0, const char *a1, int a2, unsigned int a3, sqlite3_stmt **a4, const char **a5);
    int (*sqlite3_finalize)(sqlite3_stmt *a0);
    int (*sqlite3_bind_null)(sqlite3_stmt *a0, int a1);
    int (*sqlite3_bind_text)(sqlite3_stmt *a0, int a1, const char *a2, int a3, void (*a4)(void *));
    int (*sqlite3_bind_blob)(sqlite3_stmt *a0, int a1, const void *a2, int a3, void (*a4)(void *));
    int (*sqlite3_bind_zeroblob)(sqlite3_stmt *a0, int a1, int a2);
    int (*sqlite3_bind_int64)(sqlite3_stmt *a0, int a1, sqlite3_int64 a2);
    int (*sqlite3_step)(sqlite3_stmt *a0);
    int (*sqlite3_reset)(sqlite3_stmt *a0);
    int (*sqlite3_clear_bindings)(sqlite3_stmt *a0);
    int (*sqlite3_column_count)(sqlite3_stmt *a0);
    int (*sqlite3_column_type)(sqlite3_stmt *a0, int a1);
    const unsigned char *(*sqlite3_column_text)(sqlite3_stmt *a0, int a1);
    const void *(*sqlite3_column_blob)(sqlite3_stmt *a0, int a1);
    int (*sqlite3_column_bytes)(sqlite3_stmt *a0, int a1);
    sqlite3_int64 (*sqlite3_column_int64)(sqlite3_stmt *a0, int a1);
    const char *(*sqlite3_column_name)(sqlite3_stmt *a0, int a1);
    int (*sqlite3_create_function_v2)(sqlite3 *a0, const char *a1, int a2, int a3, void *a4, void (*a5)(sqlite3_context *, int, sqlite3_value **), void (*a6)(sqlite3_context *, int, sqlite3_value **), void (*a7)(sqlite3_context *), void (*a8)(void *));
    void (*sqlite3_result_error)(sqlite3_context *a0, const char *a1, int a2);
    void (*sqlite3_result_text)(sqlite3_context *a0, const char *a1, int a2, void (*a3)(void *));
    const unsigned char *(*sqlite3_value_text)(sqlite3_value *a0);
    int (*sqlite3_value_bytes)(sqlite3_value *a0);
    sqlite3_int64 (*sqlite3_value_int64)(sqlite3_value *a0);
};

static inline struct iapctl_sqlite_api *iapctl_sqlite_table(void) {
    static struct iapctl_sqlite_api table;
    return &table;
}

static inline void iapctl_sqlite_fill(void) {
    struct iapctl_sqlite_api *api = iapctl_sqlite_table();
    void *library = dlopen(IAPCTL_SQLITE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define IAPCTL_SQLITE_FIND(name) \
    if (!(*(void **)&api->name = dlsym(library, #name))) return;
    IAPCTL_SQLITE_FIND(sqlite3_open_v2)
    IAPCTL_SQLITE_FIND(sqlite3_close_v2)
    IAPCTL_SQLITE_FIND(sqlite3_extended_result_codes)
    IAPCTL_SQLITE_FIND(sqlite3_busy_timeout)
    IAPCTL_SQLITE_FIND(sqlite3_exec)
    IAPCTL_SQLITE_FIND(sqlite3_free)
    IAPCTL_SQLITE_FIND(sqlite3_errstr)
    IAPCTL_SQLITE_FIND(sqlite3_errmsg)
    IAPCTL_SQLITE_FIND(sqlite3_errcode)
    IAPCTL_SQLITE_FIND(sqlite3_last_insert_rowid)
    IAPCTL_SQLITE_FIND(sqlite3_changes)
    IAPCTL_SQLITE_FIND(sqlite3_get_autocommit)
    IAPCTL_SQLITE_FIND(sqlite3_prepare_v3)
    IAPCTL_SQLITE_FIND(sqlite3_finalize)
    IAPCTL_SQLITE_FIND(sqlite3_bind_null)
    IAPCTL_SQLITE_FIND(sqlite3_bind_text)
    IAPCTL_SQLITE_FIND(sqlite3_bind_blob)
    IAPCTL_SQLITE_FIND(sqlite3_bind_zeroblob)
    IAPCTL_SQLITE_FIND(sqlite3_bind_int64)
    IAPCTL_SQLITE_FIND(sqlite3_step)
    IAPCTL_SQLITE_FIND(sqlite3_reset)
    IAPCTL_SQLITE_FIND(sqlite3_clear_bindings)
    IAPCTL_SQLITE_FIND(sqlite3_column_count)
    IAPCTL_SQLITE_FIND(sqlite3_column_type)
    IAPCTL_SQLITE_FIND(sqlite3_column_text)
    IAPCTL_SQLITE_FIND(sqlite3_column_blob)
    IAPCTL_SQLITE_FIND(sqlite3_column_bytes)
    IAPCTL_SQLITE_FIND(sqlite3_column_int64)
    IAPCTL_SQLITE_FIND(sqlite3_column_name)
    IAPCTL_SQLITE_FIND(sqlite3_create_function_v2)
    IAPCTL_SQLITE_FIND(sqlite3_result_error)
    IAPCTL_SQLITE_FIND(sqlite3_result_text)
    IAPCTL_SQLITE_FIND(sqlite3_value_text)
    IAPCTL_SQLITE_FIND(sqlite3_value_bytes)
    IAPCTL_SQLITE_FIND(sqlite3_value_int64)
#undef IAPCTL_SQLITE_FIND
    /* A statement journal (the pages a savepoint may have to put back: `notify` keeps one
       savepoint per item) stays in memory up to IAPCTL_SQLITE_STMTJRNL_SPILL bytes instead of
       SQLite's 64 KiB: an item touches about 260 KB of pages, and a spilled journal is a temporary
       file written page by page (tens of pwrite calls per notification) and never truncated until
       COMMIT (issue 25, engine+store CPU). Crash safety does not depend on it (the WAL does), only
       rolling back to a savepoint, which reads it back the same from memory. Process-wide, and only
       possible before SQLite initializes (the first open, right after this). */
    {
        int (*config)(int, ...) = (int (*)(int, ...))dlsym(library, "sqlite3_config");
        if (config) config(SQLITE_CONFIG_STMTJRNL_SPILL, IAPCTL_SQLITE_STMTJRNL_SPILL);
    }
    api->loaded = 1;
}

/* Loads the library once; 1 when it and every function were found. */
static inline int iapctl_sqlite_load(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_sqlite_fill);
    return iapctl_sqlite_table()->loaded;
}

static inline struct iapctl_sqlite_api *iapctl_sqlite_api(void) {
    iapctl_sqlite_load();
    return iapctl_sqlite_table();
}

static inline int sqlite3_open_v2(const char *a0, sqlite3 **a1, int a2, const char *a3) { return iapctl_sqlite_api()->sqlite3_open_v2(a0, a1, a2, a3); }
static inline int sqlite3_close_v2(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_close_v2(a0); }
static inline int sqlite3_extended_result_codes(sqlite3 *a0, int a1) { return iapctl_sqlite_api()->sqlite3_extended_result_codes(a0, a1); }
static inline int sqlite3_busy_timeout(sqlite3 *a0, int a1) { return iapctl_sqlite_api()->sqlite3_busy_timeout(a0, a1); }
static inline int sqlite3_exec(sqlite3 *a0, const char *a1, int (*a2)(void *, int, char **, char **), void *a3, char **a4) { return iapctl_sqlite_api()->sqlite3_exec(a0, a1, a2, a3, a4); }
static inline void sqlite3_free(void *a0) { iapctl_sqlite_api()->sqlite3_free(a0); }
static inline const char *sqlite3_errstr(int a0) { return iapctl_sqlite_api()->sqlite3_errstr(a0); }
static inline const char *sqlite3_errmsg(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_errmsg(a0); }
static inline int sqlite3_errcode(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_errcode(a0); }
static inline sqlite3_int64 sqlite3_last_insert_rowid(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_last_insert_rowid(a0); }
static inline int sqlite3_changes(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_changes(a0); }
static inline int sqlite3_get_autocommit(sqlite3 *a0) { return iapctl_sqlite_api()->sqlite3_get_autocommit(a0); }
static inline int sqlite3_prepare_v3(sqlite3 *a0, const char *a1, int a2, unsigned int a3, sqlite3_stmt **a4, const char **a5) { return iapctl_sqlite_api()->sqlite3_prepare_v3(a0, a1, a2, a3, a4, a5); }
static inline int sqlite3_finalize(sqlite3_stmt *a0) { return iapctl_sqlite_api()->sqlite3_finalize(a0); }
static inline int sqlite3_bind_null(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_bind_null(a0, a1); }
static inline int sqlite3_bind_text(sqlite3_stmt *a0, int a1, const char *a2, int a3, void (*a4)(void *)) { return iapctl_sqlite_api()->sqlite3_bind_text(a0, a1, a2, a3, a4); }
static inline int sqlite3_bind_blob(sqlite3_stmt *a0, int a1, const void *a2, int a3, void (*a4)(void *)) { return iapctl_sqlite_api()->sqlite3_bind_blob(a0, a1, a2, a3, a4); }
static inline int sqlite3_bind_zeroblob(sqlite3_stmt *a0, int a1, int a2) { return iapctl_sqlite_api()->sqlite3_bind_zeroblob(a0, a1, a2); }
static inline int sqlite3_bind_int64(sqlite3_stmt *a0, int a1, sqlite3_int64 a2) { return iapctl_sqlite_api()->sqlite3_bind_int64(a0, a1, a2); }
static inline int sqlite3_step(sqlite3_stmt *a0) { return iapctl_sqlite_api()->sqlite3_step(a0); }
static inline int sqlite3_reset(sqlite3_stmt *a0) { return iapctl_sqlite_api()->sqlite3_reset(a0); }
static inline int sqlite3_clear_bindings(sqlite3_stmt *a0) { return iapctl_sqlite_api()->sqlite3_clear_bindings(a0); }
static inline int sqlite3_column_count(sqlite3_stmt *a0) { return iapctl_sqlite_api()->sqlite3_column_count(a0); }
static inline int sqlite3_column_type(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_type(a0, a1); }
static inline const unsigned char *sqlite3_column_text(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_text(a0, a1); }
static inline const void *sqlite3_column_blob(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_blob(a0, a1); }
static inline int sqlite3_column_bytes(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_bytes(a0, a1); }
static inline sqlite3_int64 sqlite3_column_int64(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_int64(a0, a1); }
static inline const char *sqlite3_column_name(sqlite3_stmt *a0, int a1) { return iapctl_sqlite_api()->sqlite3_column_name(a0, a1); }
static inline int sqlite3_create_function_v2(sqlite3 *a0, const char *a1, int a2, int a3, void *a4, void (*a5)(sqlite3_context *, int, sqlite3_value **), void (*a6)(sqlite3_context *, int, sqlite3_value **), void (*a7)(sqlite3_context *), void (*a8)(void *)) { return iapctl_sqlite_api()->sqlite3_create_function_v2(a0, a1, a2, a3, a4, a5, a6, a7, a8); }
static inline void sqlite3_result_error(sqlite3_context *a0, const char *a1, int a2) { iapctl_sqlite_api()->sqlite3_result_error(a0, a1, a2); }
static inline void sqlite3_result_text(sqlite3_context *a0, const char *a1, int a2, void (*a3)(void *)) { iapctl_sqlite_api()->sqlite3_result_text(a0, a1, a2, a3); }
static inline const unsigned char *sqlite3_value_text(sqlite3_value *a0) { return iapctl_sqlite_api()->sqlite3_value_text(a0); }
static inline int sqlite3_value_bytes(sqlite3_value *a0) { return iapctl_sqlite_api()->sqlite3_value_bytes(a0); }
static inline sqlite3_int64 sqlite3_value_int64(sqlite3_value *a0) { return iapctl_sqlite_api()->sqlite3_value_int64(a0); }

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type iapctl_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Extended result codes are macro expressions Swift does not import.
static inline int iapctl_sqlite_constraint_unique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int iapctl_sqlite_constraint_primarykey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
#endif
