/* cfitsio's static library carries its network drivers (http/https/ftp through libcurl)
 * even though halconv only opens local files and memory; Debian ships no static libcurl.
 * These stand-ins satisfy the link and make any network open fail cleanly
 * (curl_easy_init returns NULL), so the tool never touches the network. */
#include <stddef.h>

enum { halconv_curl_failed_init = 2 }; /* CURLE_FAILED_INIT */

void *curl_easy_init(void) { return NULL; }
int curl_easy_setopt(void *handle, int option, ...) {
    (void)handle;
    (void)option;
    return halconv_curl_failed_init;
}
int curl_easy_perform(void *handle) {
    (void)handle;
    return halconv_curl_failed_init;
}
void curl_easy_cleanup(void *handle) { (void)handle; }
int curl_global_init(long flags) {
    (void)flags;
    return halconv_curl_failed_init;
}
void curl_global_cleanup(void) {}
