package nativeauth

// #cgo pkg-config: nativeauth
// #include <stdlib.h>
// #include <string.h>
// #include "bridge.h"
import "C"

import (
	"context"
	"encoding/json"
	"runtime"
	"runtime/cgo"
	"strconv"
	"sync"
	"sync/atomic"
	"unsafe"
)

// The operations, by their na_start names (include/nativeauth.h, "Asynchronous calls").
const (
	opClientInfo        = "client_info"
	opSignIn            = "sign_in"
	opSignUp            = "sign_up"
	opResetPassword     = "reset_password"
	opFlowSubmit        = "flow_submit"
	opSignInInteractive = "sign_in_interactive"
	opSignInDeviceCode  = "sign_in_device_code"
	opGetAccessToken    = "get_access_token"
	opCallAPI           = "call_api"
	opGetAccount        = "get_account"
	opGetAccounts       = "get_accounts"
	opSignOut           = "sign_out"
)

// ABIVersion is the ABI version this package was written for: the SONAME major of libnativeauth.so.1.
const ABIVersion = 1

// Version returns the loaded library's version string, e.g. "0.1.0".
func Version() string { return C.GoString(C.na_version()) }

// LibraryABIVersion returns the ABI version of the loaded library; NewClient refuses a library whose ABI version
// is not ABIVersion.
func LibraryABIVersion() int { return int(C.na_abi_version()) }

// Config is the client configuration (docs/configuration.md); the JSON names are the C document's. Give Authority
// or TenantSubdomain, and ClientID. Zero values are left out, so the library's defaults apply.
type Config struct {
	Authority       string `json:"authority,omitempty"`
	TenantSubdomain string `json:"tenant_subdomain,omitempty"`
	// AuthorityType is "ciam" (the default), "aad" or "oidc".
	AuthorityType string `json:"authority_type,omitempty"`
	ClientID      string `json:"client_id"`
	// ChallengeTypes is a subset of "password" and "oob" (default both).
	ChallengeTypes []string `json:"challenge_types,omitempty"`
	// Capabilities is a subset of "mfa_required" and "registration_required" (default none): the native-auth steps
	// the app drives itself. Without them a sign-in that needs MFA or strong-auth registration answers
	// ErrBrowserRequired. Not to be confused with ClientCapabilities.
	Capabilities []string `json:"capabilities,omitempty"`
	// ClientCapabilities, e.g. "cp1" (the app answers claims challenges), go with every token request as claims;
	// unrelated to Capabilities.
	ClientCapabilities []string `json:"client_capabilities,omitempty"`
	// RequestHeaders are the app's own x- headers (fraud and bot protection), sent to the authority only.
	RequestHeaders        map[string]string `json:"request_headers,omitempty"`
	RedirectURI           string            `json:"redirect_uri,omitempty"`
	PostLogoutRedirectURI string            `json:"post_logout_redirect_uri,omitempty"`
	BrowserCommand        string            `json:"browser_command,omitempty"`
	ConnectTimeoutMS      int               `json:"connect_timeout_ms,omitempty"`
	RequestTimeoutMS      int               `json:"request_timeout_ms,omitempty"`
	// AsyncWorkers (1..64, default 4) is how many of this client's calls run in the library at once; more wait in
	// start order. A browser or device-code sign-in holds one while it waits for the user.
	AsyncWorkers int `json:"async_workers,omitempty"`
	// RetryAfterMaxS: a pointer, because 0 (never wait out a Retry-After) is a valid setting.
	RetryAfterMaxS *int `json:"retry_after_max_s,omitempty"`
	// LogLevel is "off" (the default), "error", "warning", "info" or "verbose": the most verbose lines Logger
	// receives ("" with a Logger: "info"). A LogLevel without a Logger sends the lines to the standard library's
	// log package.
	LogLevel string `json:"log_level,omitempty"`
	// Logger receives the library's log lines (see Logger; Client.SetLogger replaces it).
	Logger Logger `json:"-"`
	// Browser opens URLs for the browser flows (see BrowserOpener; Client.SetBrowser replaces it). Without one the
	// library uses BrowserCommand, else $BROWSER, else xdg-open on a desktop (the Windows browser under WSL; none
	// over SSH or without a display).
	Browser BrowserOpener `json:"-"`
	// CABundle is a CA file that replaces the system's trust anchors, or, with CABundleSystem true, adds to them
	// (a TLS-inspecting proxy's CA).
	CABundle       string `json:"ca_bundle,omitempty"`
	CABundleSystem *bool  `json:"ca_bundle_system,omitempty"`
	// Proxy is "http://[user:password@]host:port" (also https://; a pointer to "" means no proxy); nil follows the
	// environment (https_proxy, all_proxy). NoProxy (nil: the environment's NO_PROXY) lists the hosts reached
	// directly. localhost, 127.0.0.1 and [::1] never go through a proxy. The password never appears in errors,
	// logs or Info.
	Proxy         *string `json:"proxy,omitempty"`
	NoProxy       *string `json:"no_proxy,omitempty"`
	ProxyCABundle string  `json:"proxy_ca_bundle,omitempty"`
	// DPoP asks for sender-constrained tokens (RFC 9449; AuthorityType "oidc" only): each sign-in's tokens are bound
	// to a P-256 key of its account, kept with the account in the cache and never exported; Token.TokenType is
	// "DPoP", CallAPI sends them with proofs, and Client.DPoPProof makes proofs for requests the app sends itself.
	// A provider that does not offer ES256 DPoP proofs answers ErrDPoPUnsupported, never a bearer token.
	DPoP bool `json:"dpop,omitempty"`
}

// Client is a native-authentication client for one app registration. It is safe for concurrent use; see the
// package documentation for the threading rules.
type Client struct {
	handle atomic.Uintptr // 0 once closed

	cbMu          sync.Mutex // serialises SetLogger, SetBrowser and Close's release of their handles
	logHandle     cgo.Handle // the installed Logger (0: none)
	browserHandle cgo.Handle // the installed BrowserOpener (0: none)
}

// NewClient creates a client. It does no network I/O; a bad configuration answers an *Error with Code
// "invalid_argument" and Field naming the member.
func NewClient(config Config) (*Client, error) {
	if got := LibraryABIVersion(); got != ABIVersion {
		return nil, &Error{Status: StatusInvalid, Code: "not_supported",
			Message: "libnativeauth ABI " + itoa(got) + " is loaded; this package needs ABI " + itoa(ABIVersion)}
	}
	for _, f := range []struct {
		name  string
		value any
	}{{"authority", config.Authority}, {"tenant_subdomain", config.TenantSubdomain},
		{"authority_type", config.AuthorityType}, {"client_id", config.ClientID},
		{"challenge_types", config.ChallengeTypes}, {"capabilities", config.Capabilities},
		{"client_capabilities", config.ClientCapabilities}, {"request_headers", config.RequestHeaders},
		{"redirect_uri", config.RedirectURI}, {"post_logout_redirect_uri", config.PostLogoutRedirectURI},
		{"browser_command", config.BrowserCommand}, {"log_level", config.LogLevel}, {"ca_bundle", config.CABundle},
		{"proxy", derefString(config.Proxy)}, {"no_proxy", derefString(config.NoProxy)},
		{"proxy_ca_bundle", config.ProxyCABundle}} {
		if err := checkStrings(f.name, f.value); err != nil {
			return nil, err
		}
	}
	doc := struct {
		V int `json:"v"`
		Config
	}{1, config}
	req, err := encode(doc)
	if err != nil {
		return nil, err
	}
	creq := cString(req)
	r := C.go_na_client_new(creq)
	C.go_na_wipe_free(creq, C.size_t(len(req)))
	wipe(req)
	errDoc := take(r.err) // set on failure only; taken (and freed) whatever the answer
	if r.rc != C.NA_OK {
		return nil, errorFrom(int(r.rc), errDoc)
	}
	c := &Client{}
	c.handle.Store(uintptr(r.client))
	runtime.SetFinalizer(c, (*Client).Close)
	if err := c.installConfigCallbacks(config); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Client) installConfigCallbacks(config Config) error {
	level, known := parseLogLevel(config.LogLevel)
	switch {
	case config.Logger != nil:
		if config.LogLevel == "" {
			level = LogInfo
		}
		if err := c.SetLogger(level, config.Logger); err != nil {
			return err
		}
	case known && level != LogOff:
		if err := c.SetLogger(level, stdLogger); err != nil {
			return err
		}
	}
	if config.Browser != nil {
		return c.SetBrowser(config.Browser)
	}
	return nil
}

// Close frees the client and wipes its tokens. It is idempotent and may be called while other goroutines are
// inside calls on the client: those calls are cancelled (their errors match ErrCancelled and ErrClosed); later
// calls answer an error matching ErrClosed. It returns once every call of the client has ended — except when
// called from inside a Logger or BrowserOpener (whose call has not ended): the client is then freed on another
// goroutine, which releases the callbacks once the library no longer calls them (later calls answer ErrClosed at
// once all the same).
func (c *Client) Close() error {
	h := c.handle.Swap(0)
	if h == 0 {
		return nil
	}
	if C.go_na_in_callback() != 0 {
		go c.free(h)
		return nil
	}
	c.free(h)
	return nil
}

func (c *Client) free(h uintptr) {
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	C.go_na_client_free(C.uintptr_t(h)) // the client's operations have ended: its callbacks are not called again
	c.releaseCallbacks()
}

// Closed reports whether Close was called.
func (c *Client) Closed() bool { return c.handle.Load() == 0 }

// Info returns the client's effective configuration, as na_client_info's document.
func (c *Client) Info(ctx context.Context) (*ClientInfo, error) {
	var info ClientInfo
	if err := c.do(ctx, opClientInfo, map[string]any{}, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

// do encodes request (adding "v": 1), calls the operation and decodes the result into out.
func (c *Client) do(ctx context.Context, op string, request map[string]any, out any) error {
	raw, err := c.call(ctx, op, request)
	if err != nil {
		return err
	}
	defer wipe(raw)
	if err := json.Unmarshal(raw, out); err != nil {
		return &Error{Status: StatusInternal, Code: "internal", Message: "undecodable result: " + err.Error()}
	}
	return nil
}

// call returns the raw result document; the caller wipes it when done. Every operation goes through here (and
// through invoke): a context that has ended answers contextError without a call; a call cancelled because its
// context ended wraps the context's error, one cancelled by Close wraps ErrClosed.
func (c *Client) call(ctx context.Context, op string, request map[string]any) ([]byte, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if ctx.Err() != nil {
		return nil, contextError(ctx)
	}
	if err := checkStrings("", request); err != nil {
		return nil, err
	}
	request["v"] = 1
	req, err := encode(request)
	if err != nil {
		return nil, err
	}
	h := c.handle.Load()
	if h == 0 {
		wipe(req)
		return nil, closedError()
	}
	rc, out := invoke(ctx, h, op, req) // wipes req
	runtime.KeepAlive(c)
	if rc != C.NA_OK {
		e := errorFrom(int(rc), out)
		if e.Code == "invalid_handle" && c.Closed() {
			e.cause = ErrClosed // closed while this call was on its way in
		}
		if e.Code == "cancelled" {
			if ctx.Err() != nil {
				e.cause = ctx.Err() // na_op_cancel: this call's context ended
			} else if c.Closed() {
				e.cause = ErrClosed // na_client_free cancelled it
			}
		}
		return nil, e
	}
	return out, nil
}

// contextError is the error of a call whose context had ended before it started: it matches both ErrCancelled
// and the context's error.
func contextError(ctx context.Context) *Error {
	return &Error{Status: StatusState, Code: "cancelled", Message: "the context ended before the call: " +
		ctx.Err().Error(), cause: ctx.Err()}
}

func closedError() *Error {
	return &Error{Status: StatusInvalid, Code: "invalid_handle", Message: "the client is closed", cause: ErrClosed}
}

// encode is json.Marshal, answering an *Error (invalid_argument) for what cannot be encoded.
func encode(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, &Error{Status: StatusInvalid, Code: "invalid_argument", Message: "cannot encode the request: " +
			err.Error()}
	}
	return b, nil
}

// cString copies b into C memory with a terminating NUL (json.Marshal never emits a raw NUL byte).
func cString(b []byte) *C.char {
	p := C.malloc(C.size_t(len(b) + 1))
	if p == nil {
		panic("nativeauth: out of memory")
	}
	dst := unsafe.Slice((*byte)(p), len(b)+1)
	copy(dst, b)
	dst[len(b)] = 0
	return (*C.char)(p)
}

// take copies a string the library returned into Go memory and releases it with na_string_free (never free()).
// NULL gives nil.
func take(s *C.char) []byte {
	if s == nil {
		return nil
	}
	b := C.GoBytes(unsafe.Pointer(s), C.int(C.strlen(s)))
	C.na_string_free(s)
	return b
}

// wipe overwrites a buffer that may have held a password, a code or a token.
func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// derefString is *p, or "" for nil (for checkStrings).
func derefString(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}
