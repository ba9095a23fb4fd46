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
// # Building
//
// The package links the installed library through pkg-config (`#cgo pkg-config: nativeauth`): install it with the
// repository's `make install PREFIX=…` and point PKG_CONFIG_PATH at PREFIX/lib/pkgconfig when the prefix is not a
// system one. The .pc file adds an rpath, so programs find the library at run time without LD_LIBRARY_PATH.
// CGO_ENABLED=1 and a C compiler are needed; the package has no Go dependencies besides the standard library.
//
// # Threads
//
// A *Client may be used from many goroutines at once. Every call blocks the calling goroutine and the OS thread
// under it until the library answers: the library's own timeouts (Config.ConnectTimeoutMS, RequestTimeoutMS) bound
// each HTTP request. The Go runtime starts another thread for other goroutines while one is inside a call, so many
// concurrent calls mean as many OS threads (see runtime/debug.SetMaxThreads).
//
// A context passed to a call is checked before the call starts (an ended context answers its own error and
// nothing is sent). A call already inside the library runs to its end — the library cannot interrupt an HTTP
// request — except flow continuations (the methods of the states): when their context ends, the binding cancels
// the flow from another goroutine, so that a waiting call (a password reset's completion polling) returns promptly
// with an *Error for which both errors.Is(err, ErrCancelled) and errors.Is(err, ctx.Err()) hold. That flow is then
// finished; start again.
//
// Close may be called at any time, more than once, and while other goroutines are inside calls on the same
// client: those calls finish normally, and calls made after Close return an error matching ErrClosed (and
// ErrInvalidHandle). A client that becomes unreachable is closed by a finalizer, but call Close: it wipes the
// tokens at once.
//
// # Memory
//
// Requests are encoded with encoding/json into C memory that is wiped and freed (C.free) right after the call.
// Every string the library returns is copied into Go, then released with na_string_free (which wipes it) — never
// C.free. No Go pointer is passed to C at all, so C never retains one. The na_client handle is kept as an integer
// (uintptr), not as a Go pointer: it is an opaque number, not an address.
//
// # Errors
//
// Every failure the library reports is an *Error carrying the stable Code ("invalid_credentials", "no_account", …;
// docs/errors.md), the NA_* Status and the Message. Compare with errors.Is against the sentinels (ErrNoAccount,
// ErrInvalidCredentials, ErrInteractionRequired, …) or against a Status (errors.Is(err, StatusNetwork)), or use
// errors.As to read the details. A step that needs more input from the user is a State, never an error.
//
// Not covered by this binding (use the C ABI): log and browser callbacks, browser and device-code sign-in.
package nativeauth
