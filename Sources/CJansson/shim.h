/* CJansson: jansson, plus typed wrappers for what Swift cannot call (function-like macros). */
#include <jansson.h>

static inline json_type cjansson_typeof(const json_t *j) { return json_typeof(j); }
static inline void cjansson_decref(json_t *j) { json_decref(j); }
