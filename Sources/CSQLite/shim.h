#ifndef IAPCTL_CSQLITE_SHIM_H
#define IAPCTL_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a function pointer; Swift cannot import it.
static inline sqlite3_destructor_type iapctl_sqlite_transient(void) { return SQLITE_TRANSIENT; }

/// Extended result codes are macro expressions Swift does not import.
static inline int iapctl_sqlite_constraint_unique(void) { return SQLITE_CONSTRAINT_UNIQUE; }
static inline int iapctl_sqlite_constraint_primarykey(void) { return SQLITE_CONSTRAINT_PRIMARYKEY; }
#endif
