// Package nativeauth is the Go binding of libnativeauth.so: Microsoft Entra External ID native authentication
// (email + password, email one-time code, MFA, sign-up, password reset) and standard OIDC token handling, through
// the library's C ABI (include/nativeauth.h) with cgo.
//
//	client, err := nativeauth.NewClient(nativeauth.Config{
//		Authority: "https://contoso.ciamlogin.com/contoso.onmicrosoft.com",
//		ClientID:  "00001111-aaaa-2222-bbbb-3333cccc4444",
//	})
//	if err != nil { … }
//	defer client.Close()
//	state, err := client.SignIn(ctx, "ann@contoso.com", password, &nativeauth.SignInOptions{Scopes: scopes})
//	switch s := state.(type) {
//	case *nativeauth.SignedIn:   // s.Account, s.Token
//	case *nativeauth.CodeRequired: state, err = s.SubmitCode(ctx, code)
//	…
//	}
//	token, err := client.AccessToken(ctx, scopes, nil)
//	resp, err := client.CallAPI(ctx, nativeauth.APIRequest{URL: url, Scopes: scopes})
//	_, err = client.SignOut(ctx, nil)
//
// Browser sign-in (the browser is opened with Config.Browser, else the system's opener) and device code:
//
//	state, err := client.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Scopes: scopes})
//	code, err := client.SignInDeviceCode(ctx, scopes) // show code.Message, then:
//	signedIn, err := code.Wait(ctx)
//
// # Building
//
// The package links the installed library through pkg-config (`#cgo pkg-config: nativeauth`): install it with the
// repository's `make install PREFIX=…` and point PKG_CONFIG_PATH at PREFIX/lib/pkgconfig when the prefix is not a
// system one. The .pc file adds an rpath, so programs find the library at run time without LD_LIBRARY_PATH.
// CGO_ENABLED=1 and a C compiler are needed; the package has no Go dependencies besides the standard library.
// README.md shows what a build that cannot find the library prints, and what to do.
//
// # Threads and cancellation
//
// A *Client may be used from many goroutines at once. Every call is started with the library's na_start and
// returns when the operation's completion arrives: the goroutine waits on a channel, parked, and holds no OS thread
// (the operation runs on one of the client's worker threads — at most Config.AsyncWorkers, default 4, at once; more
// wait in start order, and a browser or device-code sign-in holds one while it waits). The library's own timeouts
// (Config.ConnectTimeoutMS, RequestTimeoutMS) bound each HTTP request.
//
// Every method takes a context. One that has already ended answers at once, sending nothing. One that ends during
// the call cancels the operation (na_op_cancel): the HTTP request in flight is aborted, a wait for the browser, a
// device-code approval or a password reset's completion ends, and the call returns promptly with an *Error for
// which both errors.Is(err, ErrCancelled) and errors.Is(err, ctx.Err()) hold. A sign-in cancelled so stored
// nothing; a token refresh whose request was already sent is finished in the background and its tokens are kept
// (Close waits for it). A flow step whose request was aborted keeps its flow (take the step again, as after a
// network error); a cancelled wait (BrowserPending.Wait, DeviceCodeRequired.Wait, a reset's completion) ends the
// flow. An operation past cancelling (a sign-in that already stored its tokens, a sign-out) returns its real result
// even though the context ended. A CallAPI request that already reached the API may have had its effect there.
//
// Close may be called at any time, more than once, and while other goroutines are inside calls on the same
// client: those calls are cancelled and answer an error matching ErrCancelled and ErrClosed; calls made after
// Close answer an error matching ErrClosed (and ErrInvalidHandle). A client that becomes unreachable is closed by a
// finalizer, but call Close: it wipes the tokens at once.
//
// # Callbacks
//
// Config.Logger (or Client.SetLogger) receives the library's log lines and Config.Browser (or Client.SetBrowser)
// opens the browser sign-in's URL. Both are called on the library's worker threads (cgo callbacks through exported
// trampolines; the Go function travels as a runtime/cgo.Handle, released once the library no longer calls it). They
// may call the client's methods, but not SetLogger or SetBrowser (ErrReentrantCall). A panic in them is recovered.
//
// # Memory
//
// Requests are encoded with encoding/json into C memory that is wiped and freed (C.free) as soon as the library
// has copied them. Every document the library returns is copied into Go — results inside the completion function,
// after which the library wipes and frees them itself; NewClient's error document is released with na_string_free
// (never C.free). No Go pointer is passed to C at all, so C never retains one: the na_client and na_op handles are
// kept as integers (uintptr), not as Go pointers — they are opaque numbers, not addresses — and Go values the
// library hands back to Go (a completion's channel, a callback) travel as runtime/cgo.Handle integers.
//
// # Errors
//
// Every failure the library reports is an *Error carrying the stable Code ("invalid_credentials", "no_account", …;
// docs/errors.md), the NA_* Status and the Message. Compare with errors.Is against the sentinels (ErrNoAccount,
// ErrInvalidCredentials, ErrInteractionRequired, …) or against a Status (errors.Is(err, StatusNetwork)), or use
// errors.As to read the details. A step that needs more input from the user is a State, never an error.
//
// Not covered by this binding (use the C ABI): the event-fd mode of the asynchronous calls (na_client_event_fd,
// na_client_dispatch) — Go's scheduler needs no event loop — and na_parse_www_authenticate.
package nativeauth
