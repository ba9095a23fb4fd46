package nativeauth

// #include <stdlib.h>
// #include <string.h>
// #include "bridge.h"
import "C"

import (
	"context"
	"runtime/cgo"
	"unsafe"
)

// opResult is what an operation's done function received: the status and the document, copied into Go.
type opResult struct {
	rc  C.int
	doc []byte
}

// invoke runs one operation of the library on client (a live handle) with the encoded request, which it wipes,
// and returns the status and the document (the result, or the error document), copied into Go.
//
// The operation is started with na_start, which returns at once: the calling goroutine then waits on a channel
// (parked, holding no OS thread) that the operation's done function fills — exactly once, whatever happens. When
// ctx ends first, the operation is cancelled with na_op_cancel (the request in flight is aborted, a wait for a
// browser, a device-code approval or a poll ends) and invoke still waits for done, which then brings "cancelled" —
// or the real result, when the operation was past cancelling (a sign-in that had stored its tokens).
func invoke(ctx context.Context, client uintptr, op string, req []byte) (C.int, []byte) {
	results := make(chan opResult, 1) // done never waits for the receiver
	handle := cgo.NewHandle(results)
	creq := cString(req)
	cop := C.CString(op)
	started := C.go_na_start(C.uintptr_t(client), cop, creq, C.uintptr_t(handle)) // copies the request
	C.free(unsafe.Pointer(cop))
	C.go_na_wipe_free(creq, C.size_t(len(req)))
	wipe(req)
	if started.rc != C.NA_OK { // done will never run
		handle.Delete()
		code, message := "invalid_handle", "the library refused to start the call on this client"
		if started.rc == C.NA_ENOMEM {
			code, message = "out_of_memory", "the library could not start the call"
		}
		return started.rc, []byte(`{"v":1,"error":{"code":"` + code + `","message":"` + message + `"}}`)
	}
	var r opResult
	select {
	case r = <-results:
	case <-ctx.Done():
		C.go_na_op_cancel(started.op) // NA_OK, or NA_ESTATE: too late, done brings the real result
		r = <-results
	}
	C.go_na_op_free(started.op)
	handle.Delete()
	return r.rc, r.doc
}

//export goNaDone
func goNaDone(rc C.int, result *C.char, handle C.uintptr_t) {
	var doc []byte
	if result != nil { // never NULL, says the header; the library wipes and frees it after this returns
		doc = C.GoBytes(unsafe.Pointer(result), C.int(C.strlen(result)))
	}
	cgo.Handle(handle).Value().(chan opResult) <- opResult{rc, doc}
}
