package nativeauth

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"context"
	"unsafe"
)

// invoke runs one operation of the library on client (a live handle) with the encoded request, which it wipes,
// and returns the status and the document (the result, or the error document), copied into Go.
//
// This is the blocking form: the calling goroutine holds an OS thread until the library answers, and ctx is not
// looked at (flow steps cancel their flow when their context ends: see Flow.submit).
func invoke(ctx context.Context, client uintptr, op string, req []byte) (C.int, []byte) {
	creq := cString(req)
	cop := C.CString(op)
	r := C.go_na_call(cop, C.uintptr_t(client), creq)
	C.free(unsafe.Pointer(cop))
	C.go_na_wipe_free(creq, C.size_t(len(req)))
	wipe(req)
	return r.rc, take(r.out)
}
