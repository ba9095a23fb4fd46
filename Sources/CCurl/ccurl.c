/* See include/ccurl.h. */
#define _GNU_SOURCE
#include "ccurl.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

static struct {
    CURLcode (*global_init)(long);
    CURL *(*easy_init)(void);
    void (*easy_cleanup)(CURL *);
    void (*easy_reset)(CURL *);
    CURLcode (*easy_perform)(CURL *);
    const char *(*easy_strerror)(CURLcode);
    CURLcode (*easy_setopt)(CURL *, CURLoption, ...);
    CURLcode (*easy_getinfo)(CURL *, CURLINFO, ...);
    struct curl_slist *(*slist_append)(struct curl_slist *, const char *);
    void (*slist_free_all)(struct curl_slist *);
    CURLM *(*multi_init)(void);
    CURLMcode (*multi_cleanup)(CURLM *);
    CURLMcode (*multi_add_handle)(CURLM *, CURL *);
    CURLMcode (*multi_remove_handle)(CURLM *, CURL *);
    CURLMcode (*multi_perform)(CURLM *, int *);
    CURLMcode (*multi_poll)(CURLM *, struct curl_waitfd *, unsigned int, int, int *);
    CURLMcode (*multi_wakeup)(CURLM *);
    CURLMsg *(*multi_info_read)(CURLM *, int *);
} fn;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int loaded;          /* written once, inside pthread_once, read after it */
static char error[256];

static void load(void) {
    /* libcurl4-openssl, libcurl4-gnutls and libcurl4-nss all install this SONAME (ABI 4 since 2006). */
    void *lib = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
    const char *e;
    if (!lib) {
        e = dlerror();
        snprintf(error, sizeof error, "libcurl could not be loaded (%s)", e ? e : "libcurl.so.4 not found");
        return;
    }
#define SYM(field, name)                                                                   \
    do {                                                                                   \
        *(void **)&fn.field = dlsym(lib, name);                                            \
        if (!fn.field) {                                                                   \
            snprintf(error, sizeof error, "libcurl could not be loaded (%s is missing)", name); \
            return;                                                                        \
        }                                                                                  \
    } while (0)
    SYM(global_init, "curl_global_init");
    SYM(easy_init, "curl_easy_init");
    SYM(easy_cleanup, "curl_easy_cleanup");
    SYM(easy_reset, "curl_easy_reset");
    SYM(easy_perform, "curl_easy_perform");
    SYM(easy_strerror, "curl_easy_strerror");
    SYM(easy_setopt, "curl_easy_setopt");
    SYM(easy_getinfo, "curl_easy_getinfo");
    SYM(slist_append, "curl_slist_append");
    SYM(slist_free_all, "curl_slist_free_all");
    SYM(multi_init, "curl_multi_init");
    SYM(multi_cleanup, "curl_multi_cleanup");
    SYM(multi_add_handle, "curl_multi_add_handle");
    SYM(multi_remove_handle, "curl_multi_remove_handle");
    SYM(multi_perform, "curl_multi_perform");
    SYM(multi_poll, "curl_multi_poll");        /* libcurl 7.66 */
    SYM(multi_wakeup, "curl_multi_wakeup");    /* libcurl 7.68 */
    SYM(multi_info_read, "curl_multi_info_read");
#undef SYM
    if (fn.global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
        snprintf(error, sizeof error, "libcurl could not be initialised");
        return;
    }
    loaded = 1;  /* the library stays loaded for the life of the process */
}

int ccurl_load(void) {
    pthread_once(&once, load);
    return loaded ? 0 : -1;
}

const char *ccurl_load_error(void) {
    pthread_once(&once, load);
    return loaded ? NULL : error;
}

CURL *ccurl_easy_init(void) { return ccurl_load() == 0 ? fn.easy_init() : NULL; }
void ccurl_easy_cleanup(CURL *h) { if (h && ccurl_load() == 0) fn.easy_cleanup(h); }
void ccurl_easy_reset(CURL *h) { if (h && ccurl_load() == 0) fn.easy_reset(h); }
CURLcode ccurl_easy_perform(CURL *h) { return ccurl_load() == 0 ? fn.easy_perform(h) : CURLE_FAILED_INIT; }

const char *ccurl_easy_strerror(CURLcode code) {
    return ccurl_load() == 0 ? fn.easy_strerror(code) : "libcurl is not loaded";
}

struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line) {
    return ccurl_load() == 0 ? fn.slist_append(list, line) : NULL;
}

void ccurl_slist_free_all(struct curl_slist *list) { if (list && ccurl_load() == 0) fn.slist_free_all(list); }

/* curl_easy_setopt and curl_easy_getinfo are variadic: each wrapper passes exactly the type the option takes. */
CURLcode ccurl_setopt_long(CURL *h, CURLoption opt, long value) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_off(CURL *h, CURLoption opt, curl_off_t value) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_ptr(CURL *h, CURLoption opt, void *value) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_str(CURL *h, CURLoption opt, const char *value) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_slist(CURL *h, CURLoption opt, struct curl_slist *value) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_datacb(CURL *h, CURLoption opt, ccurl_data_cb cb) {
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, cb) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_blob(CURL *h, CURLoption opt, const void *data, size_t len) {
    /* CURL_BLOB_COPY: libcurl keeps its own copy, so the caller's buffer may go once the call returns. */
    struct curl_blob blob = {(void *)data, len, CURL_BLOB_COPY};
    return ccurl_load() == 0 ? fn.easy_setopt(h, opt, &blob) : CURLE_FAILED_INIT;
}
CURLcode ccurl_setopt_proxyauth_any(CURL *h) {
    /* CURLAUTH_ANY is a macro of an unsigned long expression, which Swift does not import. */
    return ccurl_load() == 0 ? fn.easy_setopt(h, CURLOPT_PROXYAUTH, (unsigned long)CURLAUTH_ANY) : CURLE_FAILED_INIT;
}
CURLcode ccurl_getinfo_long(CURL *h, CURLINFO info, long *value) {
    return ccurl_load() == 0 ? fn.easy_getinfo(h, info, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *value) {
    return ccurl_load() == 0 ? fn.easy_getinfo(h, info, value) : CURLE_FAILED_INIT;
}
CURLcode ccurl_getinfo_str(CURL *h, CURLINFO info, const char **value) {
    *value = NULL;
    return ccurl_load() == 0 ? fn.easy_getinfo(h, info, value) : CURLE_FAILED_INIT;
}

CURLM *ccurl_multi_init(void) { return ccurl_load() == 0 ? fn.multi_init() : NULL; }
void ccurl_multi_cleanup(CURLM *m) { if (m && ccurl_load() == 0) fn.multi_cleanup(m); }
CURLMcode ccurl_multi_add_handle(CURLM *m, CURL *h) {
    return ccurl_load() == 0 ? fn.multi_add_handle(m, h) : CURLM_INTERNAL_ERROR;
}
CURLMcode ccurl_multi_remove_handle(CURLM *m, CURL *h) {
    return ccurl_load() == 0 ? fn.multi_remove_handle(m, h) : CURLM_INTERNAL_ERROR;
}
CURLMcode ccurl_multi_perform(CURLM *m, int *running) {
    return ccurl_load() == 0 ? fn.multi_perform(m, running) : CURLM_INTERNAL_ERROR;
}
CURLMcode ccurl_multi_poll(CURLM *m, int timeout_ms) {
    return ccurl_load() == 0 ? fn.multi_poll(m, NULL, 0, timeout_ms, NULL) : CURLM_INTERNAL_ERROR;
}
CURLMcode ccurl_multi_wakeup(CURLM *m) { return ccurl_load() == 0 ? fn.multi_wakeup(m) : CURLM_INTERNAL_ERROR; }

int ccurl_multi_result(CURLM *m, CURL *h, CURLcode *result) {
    if (ccurl_load() != 0) return 0;
    int left = 0;
    CURLMsg *msg;
    while ((msg = fn.multi_info_read(m, &left)) != NULL) {
        if (msg->msg == CURLMSG_DONE && msg->easy_handle == h) {
            *result = msg->data.result;
            return 1;
        }
    }
    return 0;
}
