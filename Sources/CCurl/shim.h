// libcurl, opened with dlopen the first time a command needs it (not linked: its 30-odd dependent
// libraries cost every start 6 ms). Swift calls only the ccurl_* functions below, never curl_*:
// the binary then has no reference to libcurl, which the link would refuse (no -lcurl).
// docs/decisions/dlopen-libraries.md.
#include <curl/curl.h>
#include <dlfcn.h>
#include "../CLinux/system_libraries.h"
#include <pthread.h>
#include <stdio.h>
#include <sys/socket.h>

struct ccurl_functions {
    // NULL once every function is resolved; else what failed (dlerror's text).
    const char *error;
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    const char *(*easy_strerror)(CURLcode);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
};

// Opens the library and resolves every function once (the first caller does, the others wait).
// Function-local state: each object file that inlines this has its own copy, and each copy
// resolves the same addresses (dlopen counts references). curl_global_init is not called here.
static inline const struct ccurl_functions *ccurl_functions(void) {
    static struct ccurl_functions f;
    static int done;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static char error[512];
    if (__atomic_load_n(&done, __ATOMIC_ACQUIRE)) return &f;
    pthread_mutex_lock(&lock);
    if (!done) {
        void *library = dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER "libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
        const char *missing = library ? NULL : dlerror();
#define CCURL_RESOLVE(field, name) \
        if (!missing && !(*(void **)&f.field = dlsym(library, name))) missing = dlerror();
        CCURL_RESOLVE(global_init, "curl_global_init")
        CCURL_RESOLVE(easy_init, "curl_easy_init")
        CCURL_RESOLVE(easy_cleanup, "curl_easy_cleanup")
        CCURL_RESOLVE(easy_perform, "curl_easy_perform")
        CCURL_RESOLVE(easy_setopt, "curl_easy_setopt")
        CCURL_RESOLVE(easy_getinfo, "curl_easy_getinfo")
        CCURL_RESOLVE(easy_strerror, "curl_easy_strerror")
        CCURL_RESOLVE(slist_append, "curl_slist_append")
        CCURL_RESOLVE(slist_free_all, "curl_slist_free_all")
#undef CCURL_RESOLVE
        if (missing) {
            snprintf(error, sizeof error, "%s", missing);
            f.error = error;
        }
        __atomic_store_n(&done, 1, __ATOMIC_RELEASE);
    }
    pthread_mutex_unlock(&lock);
    return &f;
}

// NULL when libcurl is loaded; else why it is not. Call (and check) before any other ccurl_*:
// they call through the resolved pointers without checking them.
static inline const char *ccurl_load_error(void) { return ccurl_functions()->error; }

static inline CURLcode ccurl_global_init(long flags) { return ccurl_functions()->global_init(flags); }
static inline CURL *ccurl_easy_init(void) { return ccurl_functions()->easy_init(); }
static inline void ccurl_easy_cleanup(CURL *h) { ccurl_functions()->easy_cleanup(h); }
static inline CURLcode ccurl_easy_perform(CURL *h) { return ccurl_functions()->easy_perform(h); }
static inline const char *ccurl_easy_strerror(CURLcode c) { return ccurl_functions()->easy_strerror(c); }
static inline struct curl_slist *ccurl_slist_append(struct curl_slist *l, const char *s) { return ccurl_functions()->slist_append(l, s); }
static inline void ccurl_slist_free_all(struct curl_slist *l) { ccurl_functions()->slist_free_all(l); }

// curl_easy_setopt and curl_easy_getinfo are variadic; Swift needs one wrapper per argument kind.
static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption o, long v) { return ccurl_functions()->easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_string(CURL *h, CURLoption o, const char *v) { return ccurl_functions()->easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_pointer(CURL *h, CURLoption o, void *v) { return ccurl_functions()->easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_write_callback(CURL *h, CURLoption o, curl_write_callback v) { return ccurl_functions()->easy_setopt(h, o, v); }
static inline CURLcode ccurl_setopt_xferinfo_callback(CURL *h, CURLoption o, curl_xferinfo_callback v) { return ccurl_functions()->easy_setopt(h, o, v); }
// Every socket libcurl opens is close-on-exec, as every descriptor mapgate opens: a child started
// during a transfer (the browser "update now" starts) must not keep a connection open.
static inline curl_socket_t ccurl_open_socket_cloexec(void *clientp, curlsocktype purpose, struct curl_sockaddr *a) { (void)clientp; (void)purpose; return socket(a->family, a->socktype | SOCK_CLOEXEC, a->protocol); }
static inline CURLcode ccurl_setopt_cloexec_sockets(CURL *h) { return ccurl_functions()->easy_setopt(h, CURLOPT_OPENSOCKETFUNCTION, ccurl_open_socket_cloexec); }
static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO i, long *v) { return ccurl_functions()->easy_getinfo(h, i, v); }
static inline CURLcode ccurl_getinfo_string(CURL *h, CURLINFO i, char **v) { return ccurl_functions()->easy_getinfo(h, i, v); }
