/* The shared half of the generated bindings: see include/CLibraryLoader.h and scripts/c-bindings. */
#include "CLibraryLoader.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Returns the new state: 1 loaded, 2 unavailable (with library->message set). */
static int iapctl_library_open(struct iapctl_library *library) {
    void *handle = dlopen(library->soname, RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        /* Not found anywhere the dynamic loader looks: not installed. Found but not loadable (a
           damaged file, another architecture, a library it needs missing): the loader's reason. */
        const char *why = dlerror();
        size_t length = strlen(library->soname);
        if (!why || (strncmp(why, library->soname, length) == 0 && why[length] == ':' &&
                     strstr(why, "No such file or directory")))
            snprintf(library->message, sizeof library->message, "%s is not installed: apt-get install %s",
                     library->soname, library->package);
        else
            snprintf(library->message, sizeof library->message, "%s cannot be loaded (%s): apt-get install --reinstall %s",
                     library->soname, why, library->package);
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
