#ifndef IAPCTL_CPOSTGRES_SHIM_H
#define IAPCTL_CPOSTGRES_SHIM_H
#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>
/* libpq (libpq-dev installs <libpq-fe.h> under /usr/include/postgresql), loaded with dlopen when
   the first PostgreSQL connection is made or its URL is read, not linked: other commands start and
   run without it. Types and constants come from libpq-fe.h; each function iapctl calls is a static
   inline wrapper, under the library's own name, over a pointer looked up in libpq.so.5 once. The
   header's own declarations are renamed away (iapctl_declared_…) so the wrappers can take their
   names. Call iapctl_pq_loaded() before any other function: 0 means libpq.so.5 (or one of its
   functions) is missing. */
#define PQconnectdbParams iapctl_declared_PQconnectdbParams
#define PQstatus iapctl_declared_PQstatus
#define PQerrorMessage iapctl_declared_PQerrorMessage
#define PQfinish iapctl_declared_PQfinish
#define PQreset iapctl_declared_PQreset
#define PQexec iapctl_declared_PQexec
#define PQexecParams iapctl_declared_PQexecParams
#define PQprepare iapctl_declared_PQprepare
#define PQexecPrepared iapctl_declared_PQexecPrepared
#define PQresultStatus iapctl_declared_PQresultStatus
#define PQresultErrorField iapctl_declared_PQresultErrorField
#define PQresultErrorMessage iapctl_declared_PQresultErrorMessage
#define PQclear iapctl_declared_PQclear
#define PQntuples iapctl_declared_PQntuples
#define PQnfields iapctl_declared_PQnfields
#define PQfname iapctl_declared_PQfname
#define PQftype iapctl_declared_PQftype
#define PQgetvalue iapctl_declared_PQgetvalue
#define PQgetlength iapctl_declared_PQgetlength
#define PQgetisnull iapctl_declared_PQgetisnull
#define PQcmdStatus iapctl_declared_PQcmdStatus
#define PQcmdTuples iapctl_declared_PQcmdTuples
#define PQtransactionStatus iapctl_declared_PQtransactionStatus
#define PQserverVersion iapctl_declared_PQserverVersion
#define PQparameterStatus iapctl_declared_PQparameterStatus
#define PQunescapeBytea iapctl_declared_PQunescapeBytea
#define PQfreemem iapctl_declared_PQfreemem
#define PQconninfoParse iapctl_declared_PQconninfoParse
#define PQconninfoFree iapctl_declared_PQconninfoFree
#define PQescapeIdentifier iapctl_declared_PQescapeIdentifier
#define PQsetNoticeProcessor iapctl_declared_PQsetNoticeProcessor
#define PQdb iapctl_declared_PQdb
#define PQhost iapctl_declared_PQhost
#define PQport iapctl_declared_PQport
#define PQbackendPID iapctl_declared_PQbackendPID
#include <postgresql/libpq-fe.h>
#undef PQconnectdbParams
#undef PQstatus
#undef PQerrorMessage
#undef PQfinish
#undef PQreset
#undef PQexec
#undef PQexecParams
#undef PQprepare
#undef PQexecPrepared
#undef PQresultStatus
#undef PQresultErrorField
#undef PQresultErrorMessage
#undef PQclear
#undef PQntuples
#undef PQnfields
#undef PQfname
#undef PQftype
#undef PQgetvalue
#undef PQgetlength
#undef PQgetisnull
#undef PQcmdStatus
#undef PQcmdTuples
#undef PQtransactionStatus
#undef PQserverVersion
#undef PQparameterStatus
#undef PQunescapeBytea
#undef PQfreemem
#undef PQconninfoParse
#undef PQconninfoFree
#undef PQescapeIdentifier
#undef PQsetNoticeProcessor
#undef PQdb
#undef PQhost
#undef PQport
#undef PQbackendPID

#ifdef __APPLE__
#define IAPCTL_PQ_LIBRARY "libpq.5.dylib"
#else
#define IAPCTL_PQ_LIBRARY "libpq.so.5"
#endif

struct iapctl_pq_api {
    int loaded; /* 1 when every function was found */
    PGconn * (*PQconnectdbParams)(const char *const *, const char *const *, int);
    ConnStatusType (*PQstatus)(const PGconn *);
    char * (*PQerrorMessage)(const PGconn *);
    void (*PQfinish)(PGconn *);
    void (*PQreset)(PGconn *);
    PGresult * (*PQexec)(PGconn *, const char *);
    PGresult * (*PQexecParams)(PGconn *, const char *, int, const Oid *, const char *const *, const int *, const int *, int);
    PGresult * (*PQprepare)(PGconn *, const char *, const char *, int, const Oid *);
    PGresult * (*PQexecPrepared)(PGconn *, const char *, int, const char *const *, const int *, const int *, int);
    ExecStatusType (*PQresultStatus)(const PGresult *);
    char * (*PQresultErrorField)(const PGresult *, int);
    char * (*PQresultErrorMessage)(const PGresult *);
    void (*PQclear)(PGresult *);
    int (*PQntuples)(const PGresult *);
    int (*PQnfields)(const PGresult *);
    char * (*PQfname)(const PGresult *, int);
    Oid (*PQftype)(const PGresult *, int);
    char * (*PQgetvalue)(const PGresult *, int, int);
    int (*PQgetlength)(const PGresult *, int, int);
    int (*PQgetisnull)(const PGresult *, int, int);
    char * (*PQcmdStatus)(PGresult *);
    char * (*PQcmdTuples)(PGresult *);
    PGTransactionStatusType (*PQtransactionStatus)(const PGconn *);
    int (*PQserverVersion)(const PGconn *);
    const char * (*PQparameterStatus)(const PGconn *, const char *);
    unsigned char * (*PQunescapeBytea)(const unsigned char *, size_t *);
    void (*PQfreemem)(void *);
    PQconninfoOption * (*PQconninfoParse)(const char *, char **);
    void (*PQconninfoFree)(PQconninfoOption *);
    char * (*PQescapeIdentifier)(PGconn *, const char *, size_t);
    PQnoticeProcessor (*PQsetNoticeProcessor)(PGconn *, PQnoticeProcessor, void *);
    char * (*PQdb)(const PGconn *);
    char * (*PQhost)(const PGconn *);
    char * (*PQport)(const PGconn *);
    int (*PQbackendPID)(const PGconn *);
};

static inline struct iapctl_pq_api *iapctl_pq_table(void) {
    static struct iapctl_pq_api table;
    return &table;
}

static inline void iapctl_pq_fill(void) {
    struct iapctl_pq_api *api = iapctl_pq_table();
    void *library = dlopen(IAPCTL_PQ_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return;
#define IAPCTL_PQ_FIND(name) \
    if (!(*(void **)&api->name = dlsym(library, #name))) return;
    IAPCTL_PQ_FIND(PQconnectdbParams)
    IAPCTL_PQ_FIND(PQstatus)
    IAPCTL_PQ_FIND(PQerrorMessage)
    IAPCTL_PQ_FIND(PQfinish)
    IAPCTL_PQ_FIND(PQreset)
    IAPCTL_PQ_FIND(PQexec)
    IAPCTL_PQ_FIND(PQexecParams)
    IAPCTL_PQ_FIND(PQprepare)
    IAPCTL_PQ_FIND(PQexecPrepared)
    IAPCTL_PQ_FIND(PQresultStatus)
    IAPCTL_PQ_FIND(PQresultErrorField)
    IAPCTL_PQ_FIND(PQresultErrorMessage)
    IAPCTL_PQ_FIND(PQclear)
    IAPCTL_PQ_FIND(PQntuples)
    IAPCTL_PQ_FIND(PQnfields)
    IAPCTL_PQ_FIND(PQfname)
    IAPCTL_PQ_FIND(PQftype)
    IAPCTL_PQ_FIND(PQgetvalue)
    IAPCTL_PQ_FIND(PQgetlength)
    IAPCTL_PQ_FIND(PQgetisnull)
    IAPCTL_PQ_FIND(PQcmdStatus)
    IAPCTL_PQ_FIND(PQcmdTuples)
    IAPCTL_PQ_FIND(PQtransactionStatus)
    IAPCTL_PQ_FIND(PQserverVersion)
    IAPCTL_PQ_FIND(PQparameterStatus)
    IAPCTL_PQ_FIND(PQunescapeBytea)
    IAPCTL_PQ_FIND(PQfreemem)
    IAPCTL_PQ_FIND(PQconninfoParse)
    IAPCTL_PQ_FIND(PQconninfoFree)
    IAPCTL_PQ_FIND(PQescapeIdentifier)
    IAPCTL_PQ_FIND(PQsetNoticeProcessor)
    IAPCTL_PQ_FIND(PQdb)
    IAPCTL_PQ_FIND(PQhost)
    IAPCTL_PQ_FIND(PQport)
    IAPCTL_PQ_FIND(PQbackendPID)
#undef IAPCTL_PQ_FIND
    api->loaded = 1;
}

static inline struct iapctl_pq_api *iapctl_pq_api(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, iapctl_pq_fill);
    return iapctl_pq_table();
}

/* 1 when libpq.so.5 and every function iapctl calls were found (loads it on the first call). */
static inline int iapctl_pq_loaded(void) { return iapctl_pq_api()->loaded; }

/* A notice processor that drops the server's notices (libpq's default prints them to stderr,
   e.g. "relation … already exists, skipping"). */
static void iapctl_pq_ignore_notice(void *arg, const char *message) { (void)arg; (void)message; }
static inline void iapctl_pq_silence_notices(PGconn *conn) { iapctl_pq_api()->PQsetNoticeProcessor(conn, iapctl_pq_ignore_notice, NULL); }

static inline PGconn * PQconnectdbParams(const char *const * a0, const char *const * a1, int a2) { return iapctl_pq_api()->PQconnectdbParams(a0, a1, a2); }
static inline ConnStatusType PQstatus(const PGconn * a0) { return iapctl_pq_api()->PQstatus(a0); }
static inline char * PQerrorMessage(const PGconn * a0) { return iapctl_pq_api()->PQerrorMessage(a0); }
static inline void PQfinish(PGconn * a0) { iapctl_pq_api()->PQfinish(a0); }
static inline void PQreset(PGconn * a0) { iapctl_pq_api()->PQreset(a0); }
static inline PGresult * PQexec(PGconn * a0, const char * a1) { return iapctl_pq_api()->PQexec(a0, a1); }
static inline PGresult * PQexecParams(PGconn * a0, const char * a1, int a2, const Oid * a3, const char *const * a4, const int * a5, const int * a6, int a7) { return iapctl_pq_api()->PQexecParams(a0, a1, a2, a3, a4, a5, a6, a7); }
static inline PGresult * PQprepare(PGconn * a0, const char * a1, const char * a2, int a3, const Oid * a4) { return iapctl_pq_api()->PQprepare(a0, a1, a2, a3, a4); }
static inline PGresult * PQexecPrepared(PGconn * a0, const char * a1, int a2, const char *const * a3, const int * a4, const int * a5, int a6) { return iapctl_pq_api()->PQexecPrepared(a0, a1, a2, a3, a4, a5, a6); }
static inline ExecStatusType PQresultStatus(const PGresult * a0) { return iapctl_pq_api()->PQresultStatus(a0); }
static inline char * PQresultErrorField(const PGresult * a0, int a1) { return iapctl_pq_api()->PQresultErrorField(a0, a1); }
static inline char * PQresultErrorMessage(const PGresult * a0) { return iapctl_pq_api()->PQresultErrorMessage(a0); }
static inline void PQclear(PGresult * a0) { iapctl_pq_api()->PQclear(a0); }
static inline int PQntuples(const PGresult * a0) { return iapctl_pq_api()->PQntuples(a0); }
static inline int PQnfields(const PGresult * a0) { return iapctl_pq_api()->PQnfields(a0); }
static inline char * PQfname(const PGresult * a0, int a1) { return iapctl_pq_api()->PQfname(a0, a1); }
static inline Oid PQftype(const PGresult * a0, int a1) { return iapctl_pq_api()->PQftype(a0, a1); }
static inline char * PQgetvalue(const PGresult * a0, int a1, int a2) { return iapctl_pq_api()->PQgetvalue(a0, a1, a2); }
static inline int PQgetlength(const PGresult * a0, int a1, int a2) { return iapctl_pq_api()->PQgetlength(a0, a1, a2); }
static inline int PQgetisnull(const PGresult * a0, int a1, int a2) { return iapctl_pq_api()->PQgetisnull(a0, a1, a2); }
static inline char * PQcmdStatus(PGresult * a0) { return iapctl_pq_api()->PQcmdStatus(a0); }
static inline char * PQcmdTuples(PGresult * a0) { return iapctl_pq_api()->PQcmdTuples(a0); }
static inline PGTransactionStatusType PQtransactionStatus(const PGconn * a0) { return iapctl_pq_api()->PQtransactionStatus(a0); }
static inline int PQserverVersion(const PGconn * a0) { return iapctl_pq_api()->PQserverVersion(a0); }
static inline const char * PQparameterStatus(const PGconn * a0, const char * a1) { return iapctl_pq_api()->PQparameterStatus(a0, a1); }
static inline unsigned char * PQunescapeBytea(const unsigned char * a0, size_t * a1) { return iapctl_pq_api()->PQunescapeBytea(a0, a1); }
static inline void PQfreemem(void * a0) { iapctl_pq_api()->PQfreemem(a0); }
static inline PQconninfoOption * PQconninfoParse(const char * a0, char ** a1) { return iapctl_pq_api()->PQconninfoParse(a0, a1); }
static inline void PQconninfoFree(PQconninfoOption * a0) { iapctl_pq_api()->PQconninfoFree(a0); }
static inline char * PQescapeIdentifier(PGconn * a0, const char * a1, size_t a2) { return iapctl_pq_api()->PQescapeIdentifier(a0, a1, a2); }
static inline PQnoticeProcessor PQsetNoticeProcessor(PGconn * a0, PQnoticeProcessor a1, void * a2) { return iapctl_pq_api()->PQsetNoticeProcessor(a0, a1, a2); }
static inline char * PQdb(const PGconn * a0) { return iapctl_pq_api()->PQdb(a0); }
static inline char * PQhost(const PGconn * a0) { return iapctl_pq_api()->PQhost(a0); }
static inline char * PQport(const PGconn * a0) { return iapctl_pq_api()->PQport(a0); }
static inline int PQbackendPID(const PGconn * a0) { return iapctl_pq_api()->PQbackendPID(a0); }
#endif
