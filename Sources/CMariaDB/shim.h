#ifndef IAPCTL_CMARIADB_SHIM_H
#define IAPCTL_CMARIADB_SHIM_H
#include <dlfcn.h>
#include <pthread.h>
/* MariaDB Connector/C (libmariadb-dev) installs <mysql.h> under /usr/include/mariadb.

   libmariadb (and the libssl it brings) is loaded with dlopen when the first MySQL/MariaDB
   connection is made, not linked: its relocation was ~0.6 ms of every iapctl start, also for
   SQLite and `--version`. Its types and constants come from mysql.h; each function iapctl calls
   is a static inline wrapper, under the library's own name, over a pointer looked up in
   libmariadb.so.3 by `iapctl_mysql_library_init` (called once, before any other). The header's
   own declarations are renamed away (iapctl_declared_…) so the wrappers can take their names. */
#define mysql_close iapctl_declared_mysql_close
#define mysql_errno iapctl_declared_mysql_errno
#define mysql_error iapctl_declared_mysql_error
#define mysql_fetch_fields iapctl_declared_mysql_fetch_fields
#define mysql_field_count iapctl_declared_mysql_field_count
#define mysql_free_result iapctl_declared_mysql_free_result
#define mysql_get_server_info iapctl_declared_mysql_get_server_info
#define mysql_init iapctl_declared_mysql_init
#define mysql_options iapctl_declared_mysql_options
#define mysql_real_connect iapctl_declared_mysql_real_connect
#define mysql_real_query iapctl_declared_mysql_real_query
#define mysql_select_db iapctl_declared_mysql_select_db
#define mysql_sqlstate iapctl_declared_mysql_sqlstate
#define mysql_stmt_affected_rows iapctl_declared_mysql_stmt_affected_rows
#define mysql_stmt_bind_param iapctl_declared_mysql_stmt_bind_param
#define mysql_stmt_bind_result iapctl_declared_mysql_stmt_bind_result
#define mysql_stmt_close iapctl_declared_mysql_stmt_close
#define mysql_stmt_errno iapctl_declared_mysql_stmt_errno
#define mysql_stmt_error iapctl_declared_mysql_stmt_error
#define mysql_stmt_execute iapctl_declared_mysql_stmt_execute
#define mysql_stmt_fetch iapctl_declared_mysql_stmt_fetch
#define mysql_stmt_fetch_column iapctl_declared_mysql_stmt_fetch_column
#define mysql_stmt_field_count iapctl_declared_mysql_stmt_field_count
#define mysql_stmt_free_result iapctl_declared_mysql_stmt_free_result
#define mysql_stmt_init iapctl_declared_mysql_stmt_init
#define mysql_stmt_insert_id iapctl_declared_mysql_stmt_insert_id
#define mysql_stmt_param_count iapctl_declared_mysql_stmt_param_count
#define mysql_stmt_prepare iapctl_declared_mysql_stmt_prepare
#define mysql_stmt_result_metadata iapctl_declared_mysql_stmt_result_metadata
#define mysql_stmt_sqlstate iapctl_declared_mysql_stmt_sqlstate
#define mysql_stmt_store_result iapctl_declared_mysql_stmt_store_result
#define mysql_store_result iapctl_declared_mysql_store_result
#define mysql_fetch_row iapctl_declared_mysql_fetch_row
#define mysql_server_init iapctl_declared_mysql_server_init
#include <mariadb/mysql.h>
#include <mariadb/mysqld_error.h>
#include <mariadb/errmsg.h>
#undef mysql_close
#undef mysql_errno
#undef mysql_error
#undef mysql_fetch_fields
#undef mysql_field_count
#undef mysql_free_result
#undef mysql_get_server_info
#undef mysql_init
#undef mysql_options
#undef mysql_real_connect
#undef mysql_real_query
#undef mysql_select_db
#undef mysql_sqlstate
#undef mysql_stmt_affected_rows
#undef mysql_stmt_bind_param
#undef mysql_stmt_bind_result
#undef mysql_stmt_close
#undef mysql_stmt_errno
#undef mysql_stmt_error
#undef mysql_stmt_execute
#undef mysql_stmt_fetch
#undef mysql_stmt_fetch_column
#undef mysql_stmt_field_count
#undef mysql_stmt_free_result
#undef mysql_stmt_init
#undef mysql_stmt_insert_id
#undef mysql_stmt_param_count
#undef mysql_stmt_prepare
#undef mysql_stmt_result_metadata
#undef mysql_stmt_sqlstate
#undef mysql_stmt_store_result
#undef mysql_store_result
#undef mysql_fetch_row
#undef mysql_server_init

#ifdef __APPLE__
#define IAPCTL_MARIADB_LIBRARY "libmariadb.3.dylib"
#else
#define IAPCTL_MARIADB_LIBRARY "libmariadb.so.3"
#endif

/* The functions looked up. (Each object file that includes this header may get its own copy of
   the table below; each copy is filled once, under pthread_once, from the same loaded library.) */
struct iapctl_mariadb_api {
    int loaded; /* 1 when every function was found */
    void (*mysql_close)(MYSQL *);
    unsigned int (*mysql_errno)(MYSQL *);
    const char * (*mysql_error)(MYSQL *);
    MYSQL_FIELD * (*mysql_fetch_fields)(MYSQL_RES *);
    unsigned int (*mysql_field_count)(MYSQL *);
    void (*mysql_free_result)(MYSQL_RES *);
    char * (*mysql_get_server_info)(MYSQL *);
    MYSQL * (*mysql_init)(MYSQL *);
    int (*mysql_options)(MYSQL *, enum mysql_option, const void *);
    MYSQL * (*mysql_real_connect)(MYSQL *, const char *, const char *, const char *, const char *, unsigned int, const char *, unsigned long);
    int (*mysql_real_query)(MYSQL *, const char *, unsigned long);
    int (*mysql_select_db)(MYSQL *, const char *);
    const char * (*mysql_sqlstate)(MYSQL *);
    unsigned long long (*mysql_stmt_affected_rows)(MYSQL_STMT *);
    my_bool (*mysql_stmt_bind_param)(MYSQL_STMT *, MYSQL_BIND *);
    my_bool (*mysql_stmt_bind_result)(MYSQL_STMT *, MYSQL_BIND *);
    my_bool (*mysql_stmt_close)(MYSQL_STMT *);
    unsigned int (*mysql_stmt_errno)(MYSQL_STMT *);
    const char * (*mysql_stmt_error)(MYSQL_STMT *);
    int (*mysql_stmt_execute)(MYSQL_STMT *);
    int (*mysql_stmt_fetch)(MYSQL_STMT *);
    int (*mysql_stmt_fetch_column)(MYSQL_STMT *, MYSQL_BIND *, unsigned int, unsigned long);
    unsigned int (*mysql_stmt_field_count)(MYSQL_STMT *);
    my_bool (*mysql_stmt_free_result)(MYSQL_STMT *);
    MYSQL_STMT * (*mysql_stmt_init)(MYSQL *);
    unsigned long long (*mysql_stmt_insert_id)(MYSQL_STMT *);
    unsigned long (*mysql_stmt_param_count)(MYSQL_STMT *);
    int (*mysql_stmt_prepare)(MYSQL_STMT *, const char *, unsigned long);
    MYSQL_RES * (*mysql_stmt_result_metadata)(MYSQL_STMT *);
    const char * (*mysql_stmt_sqlstate)(MYSQL_STMT *);
    int (*mysql_stmt_store_result)(MYSQL_STMT *);
    MYSQL_RES * (*mysql_store_result)(MYSQL *);
    MYSQL_ROW (*mysql_fetch_row)(MYSQL_RES *);
    int (*mysql_server_init)(int, char **, char **);
};

static inline struct iapctl_mariadb_api *iapctl_mariadb_table(void) {
    static struct iapctl_mariadb_api table;
    return &table;
}

static inline void iapctl_mariadb_fill(void) {
    struct iapctl_mariadb_api *api = iapctl_mariadb_table();
    void *library = dlopen(IAPCTL_MARIADB_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define IAPCTL_MARIADB_FIND(field, name) \
    if (!(*(void **)&api->field = dlsym(library, name))) return;
    IAPCTL_MARIADB_FIND(mysql_close, "mysql_close")
    IAPCTL_MARIADB_FIND(mysql_errno, "mysql_errno")
    IAPCTL_MARIADB_FIND(mysql_error, "mysql_error")
    IAPCTL_MARIADB_FIND(mysql_fetch_fields, "mysql_fetch_fields")
    IAPCTL_MARIADB_FIND(mysql_field_count, "mysql_field_count")
    IAPCTL_MARIADB_FIND(mysql_free_result, "mysql_free_result")
    IAPCTL_MARIADB_FIND(mysql_get_server_info, "mysql_get_server_info")
    IAPCTL_MARIADB_FIND(mysql_init, "mysql_init")
    IAPCTL_MARIADB_FIND(mysql_options, "mysql_options")
    IAPCTL_MARIADB_FIND(mysql_real_connect, "mysql_real_connect")
    IAPCTL_MARIADB_FIND(mysql_real_query, "mysql_real_query")
    IAPCTL_MARIADB_FIND(mysql_select_db, "mysql_select_db")
    IAPCTL_MARIADB_FIND(mysql_sqlstate, "mysql_sqlstate")
    IAPCTL_MARIADB_FIND(mysql_stmt_affected_rows, "mysql_stmt_affected_rows")
    IAPCTL_MARIADB_FIND(mysql_stmt_bind_param, "mysql_stmt_bind_param")
    IAPCTL_MARIADB_FIND(mysql_stmt_bind_result, "mysql_stmt_bind_result")
    IAPCTL_MARIADB_FIND(mysql_stmt_close, "mysql_stmt_close")
    IAPCTL_MARIADB_FIND(mysql_stmt_errno, "mysql_stmt_errno")
    IAPCTL_MARIADB_FIND(mysql_stmt_error, "mysql_stmt_error")
    IAPCTL_MARIADB_FIND(mysql_stmt_execute, "mysql_stmt_execute")
    IAPCTL_MARIADB_FIND(mysql_stmt_fetch, "mysql_stmt_fetch")
    IAPCTL_MARIADB_FIND(mysql_stmt_fetch_column, "mysql_stmt_fetch_column")
    IAPCTL_MARIADB_FIND(mysql_stmt_field_count, "mysql_stmt_field_count")
    IAPCTL_MARIADB_FIND(mysql_stmt_free_result, "mysql_stmt_free_result")
    IAPCTL_MARIADB_FIND(mysql_stmt_init, "mysql_stmt_init")
    IAPCTL_MARIADB_FIND(mysql_stmt_insert_id, "mysql_stmt_insert_id")
    IAPCTL_MARIADB_FIND(mysql_stmt_param_count, "mysql_stmt_param_count")
    IAPCTL_MARIADB_FIND(mysql_stmt_prepare, "mysql_stmt_prepare")
    IAPCTL_MARIADB_FIND(mysql_stmt_result_metadata, "mysql_stmt_result_metadata")
    IAPCTL_MARIADB_FIND(mysql_stmt_sqlstate, "mysql_stmt_sqlstate")
    IAPCTL_MARIADB_FIND(mysql_stmt_store_result, "mysql_stmt_store_result")
    IAPCTL_MARIADB_FIND(mysql_store_result, "mysql_store_result")
    IAPCTL_MARIADB_FIND(mysql_fetch_row, "mysql_fetch_row")
    IAPCTL_MARIADB_FIND(mysql_server_init, "mysql_server_init")
#undef IAPCTL_MARIADB_FIND
    api->loaded = 1;
}

/* The table, loaded on first use. */
static inline struct iapctl_mariadb_api *iapctl_mariadb_api(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_mariadb_fill);
    return iapctl_mariadb_table();
}

static inline void mysql_close(MYSQL *a0) { iapctl_mariadb_api()->mysql_close(a0); }
static inline unsigned int mysql_errno(MYSQL *a0) { return iapctl_mariadb_api()->mysql_errno(a0); }
static inline const char *mysql_error(MYSQL *a0) { return iapctl_mariadb_api()->mysql_error(a0); }
static inline MYSQL_FIELD *mysql_fetch_fields(MYSQL_RES *a0) { return iapctl_mariadb_api()->mysql_fetch_fields(a0); }
static inline unsigned int mysql_field_count(MYSQL *a0) { return iapctl_mariadb_api()->mysql_field_count(a0); }
static inline void mysql_free_result(MYSQL_RES *a0) { iapctl_mariadb_api()->mysql_free_result(a0); }
static inline char *mysql_get_server_info(MYSQL *a0) { return iapctl_mariadb_api()->mysql_get_server_info(a0); }
static inline MYSQL *mysql_init(MYSQL *a0) { return iapctl_mariadb_api()->mysql_init(a0); }
static inline int mysql_options(MYSQL *a0, enum mysql_option a1, const void *a2) { return iapctl_mariadb_api()->mysql_options(a0, a1, a2); }
static inline MYSQL *mysql_real_connect(MYSQL *a0, const char *a1, const char *a2, const char *a3, const char *a4, unsigned int a5, const char *a6, unsigned long a7) { return iapctl_mariadb_api()->mysql_real_connect(a0, a1, a2, a3, a4, a5, a6, a7); }
static inline int mysql_real_query(MYSQL *a0, const char *a1, unsigned long a2) { return iapctl_mariadb_api()->mysql_real_query(a0, a1, a2); }
static inline int mysql_select_db(MYSQL *a0, const char *a1) { return iapctl_mariadb_api()->mysql_select_db(a0, a1); }
static inline const char *mysql_sqlstate(MYSQL *a0) { return iapctl_mariadb_api()->mysql_sqlstate(a0); }
static inline unsigned long long mysql_stmt_affected_rows(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_affected_rows(a0); }
static inline my_bool mysql_stmt_bind_param(MYSQL_STMT *a0, MYSQL_BIND *a1) { return iapctl_mariadb_api()->mysql_stmt_bind_param(a0, a1); }
static inline my_bool mysql_stmt_bind_result(MYSQL_STMT *a0, MYSQL_BIND *a1) { return iapctl_mariadb_api()->mysql_stmt_bind_result(a0, a1); }
static inline my_bool mysql_stmt_close(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_close(a0); }
static inline unsigned int mysql_stmt_errno(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_errno(a0); }
static inline const char *mysql_stmt_error(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_error(a0); }
static inline int mysql_stmt_execute(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_execute(a0); }
static inline int mysql_stmt_fetch(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_fetch(a0); }
static inline int mysql_stmt_fetch_column(MYSQL_STMT *a0, MYSQL_BIND *a1, unsigned int a2, unsigned long a3) { return iapctl_mariadb_api()->mysql_stmt_fetch_column(a0, a1, a2, a3); }
static inline unsigned int mysql_stmt_field_count(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_field_count(a0); }
static inline my_bool mysql_stmt_free_result(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_free_result(a0); }
static inline MYSQL_STMT *mysql_stmt_init(MYSQL *a0) { return iapctl_mariadb_api()->mysql_stmt_init(a0); }
static inline unsigned long long mysql_stmt_insert_id(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_insert_id(a0); }
static inline unsigned long mysql_stmt_param_count(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_param_count(a0); }
static inline int mysql_stmt_prepare(MYSQL_STMT *a0, const char *a1, unsigned long a2) { return iapctl_mariadb_api()->mysql_stmt_prepare(a0, a1, a2); }
static inline MYSQL_RES *mysql_stmt_result_metadata(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_result_metadata(a0); }
static inline const char *mysql_stmt_sqlstate(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_sqlstate(a0); }
static inline int mysql_stmt_store_result(MYSQL_STMT *a0) { return iapctl_mariadb_api()->mysql_stmt_store_result(a0); }
static inline MYSQL_RES *mysql_store_result(MYSQL *a0) { return iapctl_mariadb_api()->mysql_store_result(a0); }
static inline MYSQL_ROW mysql_fetch_row(MYSQL_RES *a0) { return iapctl_mariadb_api()->mysql_fetch_row(a0); }

/* Loads libmariadb and calls `mysql_library_init` (a macro over `mysql_server_init`; Swift cannot
   import it): 0 on success; -1 when the library or one of its functions is missing. Called once,
   before any other function of the library. */
static inline int iapctl_mysql_library_init(void) {
    struct iapctl_mariadb_api *api = iapctl_mariadb_api();
    if (!api->loaded) return -1;
    return api->mysql_server_init(0, 0, 0);
}
#endif
