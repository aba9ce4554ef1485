/* The shared half of the generated bindings: see include/CLibraryLoader.h and scripts/c-bindings. */
#include "CLibraryLoader.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* IAPCTL_HIDE_LIBRARIES (a comma-separated list of sonames, for tests) makes iapctl behave as if
   those libraries were not installed. It can only make iapctl refuse to work, never change what
   it does otherwise. */
static int iapctl_library_hidden(const char *soname) {
    const char *list = getenv("IAPCTL_HIDE_LIBRARIES");
    size_t length = strlen(soname);
    while (list && *list) {
        const char *end = strchr(list, ',');
        size_t item = end ? (size_t)(end - list) : strlen(list);
        if (item == length && memcmp(list, soname, length) == 0) return 1;
        list = end ? end + 1 : NULL;
    }
    return 0;
}

/* Returns the new state: 1 loaded, 2 unavailable (with library->message set). */
static int iapctl_library_open(struct iapctl_library *library) {
    void *handle = iapctl_library_hidden(library->soname) ? NULL : dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        snprintf(library->message, sizeof library->message, "%s is not installed: apt-get install %s",
                 library->soname, library->package);
        return 2;
    }
    void **found = calloc(library->count, sizeof *found);
    if (!found) {
        snprintf(library->message, sizeof library->message, "out of memory while loading %s", library->soname);
        return 2;
    }
    for (size_t i = 0; i < library->count; i++) {
        found[i] = dlsym(handle, library->names[i]);
        if (!found[i]) {
            snprintf(library->message, sizeof library->message,
                     "%s has no function %s (too old a version): apt-get install %s", library->soname,
                     library->names[i], library->package);
            free(found);
            return 2;
        }
    }
    const char *failure = library->after_open ? library->after_open(found) : NULL;
    if (failure) {
        snprintf(library->message, sizeof library->message, "%s could not start: %s", library->soname, failure);
        free(found);
        return 2;
    }
    for (size_t i = 0; i < library->count; i++) __atomic_store_n(&library->slots[i], found[i], __ATOMIC_RELEASE);
    free(found);
    return 1;
}

const char *iapctl_library_unavailable(struct iapctl_library *library) {
    int state = __atomic_load_n(&library->state, __ATOMIC_ACQUIRE);
    if (state == 0) {
        pthread_mutex_lock(&library->lock);
        state = library->state;
        if (state == 0) {
            state = iapctl_library_open(library);
            __atomic_store_n(&library->state, state, __ATOMIC_RELEASE);
        }
        pthread_mutex_unlock(&library->lock);
    }
    return state == 1 ? NULL : library->message;
}

void *iapctl_library_function(struct iapctl_library *library, size_t index) {
    void *function = __atomic_load_n(&library->slots[index], __ATOMIC_ACQUIRE);
    if (function) return function;
    const char *message = iapctl_library_unavailable(library);
    if (message) {
        fprintf(stderr, "error: %s\n", message);
        exit(69);
    }
    return library->slots[index];
}
