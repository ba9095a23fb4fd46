/* CCurl: libcurl, loaded with dlopen("libcurl.so.4") the first time a request is made, so that a program that never
 * goes to the network (a token served from the cache; a command like `nativeauth token`) does not pay for loading
 * libcurl and its thirty-odd dependencies (about 3.5 ms here: most of a short command's run). Every function loads
 * it if needed; when it cannot be loaded, ccurl_load() answers non-zero and ccurl_load_error() says why, and the
 * wrappers answer CURLE_FAILED_INIT / NULL. The setopt/getinfo wrappers are typed and non-variadic (Swift cannot call
 * variadic C functions). */
#ifndef CCURL_H
#define CCURL_H
#include <curl/curl.h>

typedef size_t (*ccurl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);

/* Loads libcurl and calls curl_global_init once (thread-safe); 0 when it is there. */
int ccurl_load(void);
/* Why loading failed (dlerror's text), or NULL. */
const char *ccurl_load_error(void);

CURL *ccurl_easy_init(void);
void ccurl_easy_cleanup(CURL *h);
void ccurl_easy_reset(CURL *h);
CURLcode ccurl_easy_perform(CURL *h);
const char *ccurl_easy_strerror(CURLcode code);
struct curl_slist *ccurl_slist_append(struct curl_slist *list, const char *line);
void ccurl_slist_free_all(struct curl_slist *list);

CURLcode ccurl_setopt_long(CURL *h, CURLoption opt, long value);
CURLcode ccurl_setopt_off(CURL *h, CURLoption opt, curl_off_t value);
CURLcode ccurl_setopt_ptr(CURL *h, CURLoption opt, void *value);
CURLcode ccurl_setopt_str(CURL *h, CURLoption opt, const char *value);
CURLcode ccurl_setopt_slist(CURL *h, CURLoption opt, struct curl_slist *value);
CURLcode ccurl_setopt_datacb(CURL *h, CURLoption opt, ccurl_data_cb cb);
/* A blob option (CURLOPT_CAINFO_BLOB, …): libcurl copies the bytes. */
CURLcode ccurl_setopt_blob(CURL *h, CURLoption opt, const void *data, size_t len);
/* CURLOPT_PROXYAUTH = CURLAUTH_ANY: whatever the proxy offers and this libcurl has (Basic, Digest, NTLM, Negotiate). */
CURLcode ccurl_setopt_proxyauth_any(CURL *h);
CURLcode ccurl_getinfo_long(CURL *h, CURLINFO info, long *value);
CURLcode ccurl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *value);
/* A string of libcurl's (CURLINFO_CAINFO, …; NULL when it has none): valid until the handle changes. */
CURLcode ccurl_getinfo_str(CURL *h, CURLINFO info, const char **value);

/* The multi interface, for a transfer that another thread can interrupt (curl_multi_wakeup is thread-safe). */
CURLM *ccurl_multi_init(void);
void ccurl_multi_cleanup(CURLM *m);
CURLMcode ccurl_multi_add_handle(CURLM *m, CURL *h);
CURLMcode ccurl_multi_remove_handle(CURLM *m, CURL *h);
CURLMcode ccurl_multi_perform(CURLM *m, int *running);
CURLMcode ccurl_multi_poll(CURLM *m, int timeout_ms);
CURLMcode ccurl_multi_wakeup(CURLM *m);
/* The result of the finished transfer of `h` in `m` (curl_multi_info_read): 1 and *result set when it finished. */
int ccurl_multi_result(CURLM *m, CURL *h, CURLcode *result);

#endif
