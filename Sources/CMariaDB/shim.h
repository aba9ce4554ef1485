#ifndef IAPCTL_CMARIADB_SHIM_H
#define IAPCTL_CMARIADB_SHIM_H
// MariaDB Connector/C (libmariadb-dev) installs <mysql.h> under /usr/include/mariadb.
#include <mariadb/mysql.h>
#include <mariadb/mysqld_error.h>
#include <mariadb/errmsg.h>

/// `mysql_library_init` is a macro over `mysql_server_init`; Swift cannot import it.
static inline int iapctl_mysql_library_init(void) { return mysql_server_init(0, 0, 0); }
#endif
