#ifndef IAPCTL_CCURL_SHIM_H
#define IAPCTL_CCURL_SHIM_H
#include <dlfcn.h>
#include <curl/curl.h>

/* libcurl is loaded with dlopen on the first HTTP request, not linked: it brings ~28 shared
   libraries (GnuTLS, Kerberos, LDAP, …) whose relocation at start-up doubled the time of every
   iapctl command, also those that never touch the network. Only its types and constants come
   from curl.h; the nine functions iapctl calls are looked up in libcurl.so.4 (Debian's libcurl4,
   the same library the link used to name). */
struct iapctl_curl_api {
    CURLcode (*global_init)(long flags);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *handle);
    CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
    CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
    CURLcode (*easy_perform)(CURL *handle);
    const char *(*easy_strerror)(CURLcode code);
    struct curl_slist *(*slist_append)(struct curl_slist *list, const char *text);
    void (*slist_free_all)(struct curl_slist *list);
};

#ifdef __APPLE__
#define IAPCTL_CURL_LIBRARY "libcurl.4.dylib"
#else
#define IAPCTL_CURL_LIBRARY "libcurl.so.4"
#endif

/* Fills `api` and calls curl_global_init: 0 on success; -1 when the library or one of its
   functions is missing (`iapctl_curl_load_error` says why), -2 when curl_global_init failed. */
static inline int iapctl_curl_load(struct iapctl_curl_api *api) {
    void *library = dlopen(IAPCTL_CURL_LIBRARY, RTLD_NOW | RTLD_LOCAL);
    if (!library) return -1;
#define IAPCTL_CURL_FIND(field, name) \
    if (!(*(void **)&api->field = dlsym(library, name))) return -1;
    IAPCTL_CURL_FIND(global_init, "curl_global_init")
    IAPCTL_CURL_FIND(easy_init, "curl_easy_init")
    IAPCTL_CURL_FIND(easy_cleanup, "curl_easy_cleanup")
    IAPCTL_CURL_FIND(easy_setopt, "curl_easy_setopt")
    IAPCTL_CURL_FIND(easy_getinfo, "curl_easy_getinfo")
    IAPCTL_CURL_FIND(easy_perform, "curl_easy_perform")
    IAPCTL_CURL_FIND(easy_strerror, "curl_easy_strerror")
    IAPCTL_CURL_FIND(slist_append, "curl_slist_append")
    IAPCTL_CURL_FIND(slist_free_all, "curl_slist_free_all")
#undef IAPCTL_CURL_FIND
    return api->global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : -2;
}

/* Why the last dlopen or dlsym failed. */
static inline const char *iapctl_curl_load_error(void) {
    const char *message = dlerror();
    return message ? message : "unknown error";
}

static inline CURL *iapctl_curl_easy_init(const struct iapctl_curl_api *api) { return api->easy_init(); }
static inline void iapctl_curl_easy_cleanup(const struct iapctl_curl_api *api, CURL *handle) {
    api->easy_cleanup(handle);
}
static inline CURLcode iapctl_curl_easy_perform(const struct iapctl_curl_api *api, CURL *handle) {
    return api->easy_perform(handle);
}
static inline const char *iapctl_curl_easy_strerror(const struct iapctl_curl_api *api, CURLcode code) {
    return api->easy_strerror(code);
}
static inline struct curl_slist *iapctl_curl_slist_append(const struct iapctl_curl_api *api, struct curl_slist *list,
                                                          const char *text) {
    return api->slist_append(list, text);
}
static inline void iapctl_curl_slist_free_all(const struct iapctl_curl_api *api, struct curl_slist *list) {
    api->slist_free_all(list);
}

/* curl_easy_setopt and curl_easy_getinfo are variadic: Swift cannot call them, so each argument
   type gets a typed wrapper. */
static inline CURLcode iapctl_curl_set_long(const struct iapctl_curl_api *api, CURL *handle, CURLoption option,
                                            long value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode iapctl_curl_set_off_t(const struct iapctl_curl_api *api, CURL *handle, CURLoption option,
                                             curl_off_t value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode iapctl_curl_set_string(const struct iapctl_curl_api *api, CURL *handle, CURLoption option,
                                              const char *value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode iapctl_curl_set_pointer(const struct iapctl_curl_api *api, CURL *handle, CURLoption option,
                                               void *value) {
    return api->easy_setopt(handle, option, value);
}
static inline CURLcode iapctl_curl_set_slist(const struct iapctl_curl_api *api, CURL *handle, CURLoption option,
                                             struct curl_slist *value) {
    return api->easy_setopt(handle, option, value);
}
typedef size_t (*iapctl_curl_write_callback)(char *data, size_t size, size_t count, void *context);
static inline CURLcode iapctl_curl_set_write_function(const struct iapctl_curl_api *api, CURL *handle,
                                                      CURLoption option, iapctl_curl_write_callback callback) {
    return api->easy_setopt(handle, option, callback);
}
typedef int (*iapctl_curl_xferinfo_callback)(void *context, curl_off_t download_total, curl_off_t download_now,
                                             curl_off_t upload_total, curl_off_t upload_now);
static inline CURLcode iapctl_curl_set_xferinfo_function(const struct iapctl_curl_api *api, CURL *handle,
                                                         iapctl_curl_xferinfo_callback callback) {
    return api->easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
static inline CURLcode iapctl_curl_get_long(const struct iapctl_curl_api *api, CURL *handle, CURLINFO info,
                                            long *value) {
    return api->easy_getinfo(handle, info, value);
}
#endif
