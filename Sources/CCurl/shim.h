#ifndef WAYMARK_CCURL_SHIM_H
#define WAYMARK_CCURL_SHIM_H
// libcurl, loaded at run time: waymarkd does not link it, and maps it only when the Traccar output
// is configured (dlopen of Debian's libcurl4, libcurl.so.4). The header gives the types and the
// constants; each function is reached through the table `waymark_curl_load` fills. libcurl's
// variadic functions, which Swift cannot call, are wrapped here with one type each.
#define CURL_DISABLE_TYPECHECK 1
#include <curl/curl.h>
#include <dlfcn.h>
#include <stddef.h>

typedef struct {
  CURLcode (*global_init)(long flags);
  CURL *(*easy_init)(void);
  CURLcode (*easy_setopt)(CURL *handle, CURLoption option, ...);
  CURLcode (*easy_perform)(CURL *handle);
  CURLcode (*easy_getinfo)(CURL *handle, CURLINFO info, ...);
  void (*easy_cleanup)(CURL *handle);
  const char *(*easy_strerror)(CURLcode code);
} waymark_curl_api;

// Fills `api` from libcurl.so.4; returns 0 when the library or one of its functions is missing.
static inline int waymark_curl_load(waymark_curl_api *api) {
  void *library = dlopen("libcurl.so.4", RTLD_NOW | RTLD_LOCAL);
  if (library == NULL) return 0;
  api->global_init = (CURLcode(*)(long))dlsym(library, "curl_global_init");
  api->easy_init = (CURL * (*)(void)) dlsym(library, "curl_easy_init");
  api->easy_setopt = (CURLcode(*)(CURL *, CURLoption, ...))dlsym(library, "curl_easy_setopt");
  api->easy_perform = (CURLcode(*)(CURL *))dlsym(library, "curl_easy_perform");
  api->easy_getinfo = (CURLcode(*)(CURL *, CURLINFO, ...))dlsym(library, "curl_easy_getinfo");
  api->easy_cleanup = (void (*)(CURL *))dlsym(library, "curl_easy_cleanup");
  api->easy_strerror = (const char *(*)(CURLcode))dlsym(library, "curl_easy_strerror");
  return api->global_init && api->easy_init && api->easy_setopt && api->easy_perform &&
         api->easy_getinfo && api->easy_cleanup && api->easy_strerror;
}

static inline CURLcode waymark_curl_setopt_long(
    const waymark_curl_api *api, CURL *handle, CURLoption option, long value) {
  return api->easy_setopt(handle, option, value);
}

static inline CURLcode waymark_curl_setopt_string(
    const waymark_curl_api *api, CURL *handle, CURLoption option, const char *value) {
  return api->easy_setopt(handle, option, value);
}

// The body of a response is not read: only its status counts.
static inline size_t waymark_curl_discard(char *data, size_t size, size_t count, void *context) {
  (void)data;
  (void)context;
  return size * count;
}

static inline CURLcode waymark_curl_discard_body(const waymark_curl_api *api, CURL *handle) {
  return api->easy_setopt(handle, CURLOPT_WRITEFUNCTION, waymark_curl_discard);
}

static inline long waymark_curl_response_code(const waymark_curl_api *api, CURL *handle) {
  long code = 0;
  if (api->easy_getinfo(handle, CURLINFO_RESPONSE_CODE, &code) != CURLE_OK) return 0;
  return code;
}
#endif
