/* CCurl: libcurl, plus typed, non-variadic wrappers for curl_easy_setopt / curl_easy_getinfo (variadic C functions
 * cannot be called from Swift). */
#include <curl/curl.h>

typedef size_t (*ccurl_data_cb)(char *ptr, size_t size, size_t nmemb, void *userdata);

static inline CURLcode ccurl_setopt_long(CURL *h, CURLoption opt, long value) {
    return curl_easy_setopt(h, opt, value);
}
static inline CURLcode ccurl_setopt_off(CURL *h, CURLoption opt, curl_off_t value) {
    return curl_easy_setopt(h, opt, value);
}
static inline CURLcode ccurl_setopt_ptr(CURL *h, CURLoption opt, void *value) {
    return curl_easy_setopt(h, opt, value);
}
static inline CURLcode ccurl_setopt_str(CURL *h, CURLoption opt, const char *value) {
    return curl_easy_setopt(h, opt, value);
}
static inline CURLcode ccurl_setopt_slist(CURL *h, CURLoption opt, struct curl_slist *value) {
    return curl_easy_setopt(h, opt, value);
}
static inline CURLcode ccurl_setopt_datacb(CURL *h, CURLoption opt, ccurl_data_cb cb) {
    return curl_easy_setopt(h, opt, cb);
}
static inline CURLcode ccurl_getinfo_long(CURL *h, CURLINFO info, long *value) {
    return curl_easy_getinfo(h, info, value);
}
static inline CURLcode ccurl_getinfo_off(CURL *h, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(h, info, value);
}
