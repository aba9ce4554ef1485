#ifndef IAPCTL_CLIBRARYLOADER_H
#define IAPCTL_CLIBRARYLOADER_H
/* What every generated binding (scripts/c-bindings) shares: a C library opened with dlopen by its
   soname the first time iapctl needs it, every listed function looked up at once, and one answer
   when that fails — a message naming the library and the Debian package to install. */
#include <pthread.h>
#include <stddef.h>

struct iapctl_library {
    const char *soname;             /* "libzstd.so.1" */
    const char *package;            /* Debian's package that installs it: "libzstd1" */
    const char *const *names;       /* the functions iapctl calls, `count` of them */
    void **slots;                   /* their addresses, published once all were found */
    size_t count;
    const char *(*after_open)(void *const *slots); /* NULL or a first call; returns NULL or why it failed */
    pthread_mutex_t lock;
    int state;                      /* 0 not tried, 1 loaded, 2 unavailable */
    char message[512];
};

#define IAPCTL_LIBRARY_LOCK PTHREAD_MUTEX_INITIALIZER

/* Opens the library on the first call; NULL when it and every function were found, otherwise why
   not ("libzstd.so.1 is not installed: apt-get install libzstd1"; for a library found but not
   loadable, why, and `apt-get install --reinstall`). The answer never changes. */
const char *iapctl_library_unavailable(struct iapctl_library *library);

/* The address of function `index`, opening the library first if needed. When the library is
   unavailable this prints the message of iapctl_library_unavailable and ends the process with
   exit 69 (unavailable): a caller that did not ask first must not go on without the library. */
void *iapctl_library_function(struct iapctl_library *library, size_t index);

#endif
