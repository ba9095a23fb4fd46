package nativeauth

import (
	"context"
	"encoding/json"
	"time"
)

// InteractiveOptions are the optional members of a browser sign-in. A nil *InteractiveOptions means none.
type InteractiveOptions struct {
	// Scopes: the first access token is for these ("openid profile offline_access" are always added).
	Scopes []string
	// LoginHint pre-fills the username, e.g. Error.LoginHint of an interaction error.
	LoginHint string
	// Prompt is "select_account", "login", "consent", "none" or "create".
	Prompt     string
	DomainHint string
	// Claims is a claims request (a JSON object), e.g. json.RawMessage(err.Claims) of an interaction error.
	Claims json.RawMessage
	// ExtraQueryParameters go on the authorization URL (they may not replace the ones the library sets).
	ExtraQueryParameters map[string]string
	// ResponseMode is "query" (the default) or "form_post".
	ResponseMode string
	// Browser is "system" (the default: the browser is opened — Config.Browser, Client.SetBrowser, else the
	// library's opener — and SignInInteractive answers *SignedIn) or "none" (nothing is opened: the answer is
	// *BrowserPending, for the app to show its AuthorizationURL, then SubmitRedirect or Wait).
	Browser string
	// Timeout bounds the whole sign-in (default 5 minutes); past it the sign-in answers ErrTimeout.
	Timeout       time.Duration
	CorrelationID string
}

// SignInInteractive signs a user in through the browser (authorization code + PKCE, loopback redirect), as MSAL's
// interactive sign-in. With Browser "system" (the default) the browser is opened and the answer is *SignedIn
// (FlowType "interactive"); with "none" it is *BrowserPending, whose AuthorizationURL is the provider's URL. A
// browser the library opens never gets that URL: it gets a one-time start page on the library's loopback listener,
// which sends it on (a second fetch of that page stops the sign-in: ErrFlowInvalid).
//
// When ctx ends while the sign-in waits for the browser, the sign-in is cancelled: nothing is stored, and the error
// matches both ErrCancelled and ctx.Err().
// Errors: ErrBrowserUnavailable (no browser could be opened: Error.AuthorizationURL is the start page, but the
// sign-in has ended), ErrAccessDenied, ErrInteractionRequired, ErrIDTokenInvalid, ErrTimeout, ErrCancelled,
// ErrFlowInvalid, ErrInvalidScope, ErrDeclinedScopes, network and server errors.
func (c *Client) SignInInteractive(ctx context.Context, opts *InteractiveOptions) (State, error) {
	req := map[string]any{}
	if opts != nil {
		if opts.Scopes != nil {
			req["scopes"] = opts.Scopes
		}
		for key, value := range map[string]string{"login_hint": opts.LoginHint, "prompt": opts.Prompt,
			"domain_hint": opts.DomainHint, "response_mode": opts.ResponseMode, "browser": opts.Browser,
			"correlation_id": opts.CorrelationID} {
			if value != "" {
				req[key] = value
			}
		}
		if len(opts.Claims) > 0 {
			req["claims"] = opts.Claims
		}
		if opts.ExtraQueryParameters != nil {
			req["extra_query_parameters"] = opts.ExtraQueryParameters
		}
		if opts.Timeout < 0 {
			return nil, argError("timeout_ms", "Timeout: negative")
		}
		if opts.Timeout > 0 {
			req["timeout_ms"] = durationMS(opts.Timeout)
		}
	}
	return c.start(ctx, opSignInInteractive, req)
}

// SignInDeviceCode starts a device-code sign-in (RFC 8628) for a machine without a browser: show the answer's
// Message (or VerificationURI and UserCode) to the user, then Wait. scopes nil: the sign-in's scopes are openid
// profile offline_access only.
// Errors: ErrNotSupported (the provider has no device-code endpoint), network and server errors.
func (c *Client) SignInDeviceCode(ctx context.Context, scopes []string) (*DeviceCodeRequired, error) {
	req := map[string]any{}
	if scopes != nil {
		req["scopes"] = scopes
	}
	s, err := c.start(ctx, opSignInDeviceCode, req)
	if err != nil {
		return nil, err
	}
	return expect[*DeviceCodeRequired](s)
}

// BrowserPending: a browser sign-in waits for its redirect (SignInInteractive with Browser "none"). Show
// AuthorizationURL to the user (who may open it on another device) or load it in the app's own web view, then
// SubmitRedirect the redirect the app captured or the user pasted (the listener is not needed for it), or Wait for
// the redirect on the loopback listener. SubmitRedirect refuses a redirect without this sign-in's state (a server
// error; the sign-in ends). Cancel (from another goroutine too) or ending Wait's context ends the sign-in.
type BrowserPending struct {
	Flow
	// AuthorizationURL is the provider's authorization URL. It holds the sign-in's state and nonce: never pass it
	// to a browser on a command line, which every local user can read (Browser "system" avoids that).
	AuthorizationURL string `json:"authorization_url"`
	RedirectURI      string `json:"redirect_uri"`
	ExpiresIn        int    `json:"expires_in"` // seconds until the sign-in expires
}

// Status is "browser_pending".
func (*BrowserPending) Status() string { return "browser_pending" }

// Wait serves the loopback listener until the redirect arrives: *SignedIn. The sign-in's own expiry answers
// ErrTimeout; ctx ending cancels the sign-in (the error matches ErrCancelled and ctx.Err()).
// Errors: ErrAccessDenied, ErrInteractionRequired, ErrTimeout, ErrCancelled, ErrFlowInvalid, ErrIDTokenInvalid.
func (s *BrowserPending) Wait(ctx context.Context) (*SignedIn, error) {
	return waitSignedIn(ctx, s)
}

// WaitTimeout waits up to d for the redirect: *SignedIn, or — when d passes first — the same sign-in again as a
// *BrowserPending, still usable.
func (s *BrowserPending) WaitTimeout(ctx context.Context, d time.Duration) (State, error) {
	return s.waitOnce(ctx, s, d)
}

// SubmitRedirect completes the sign-in with the redirect URL as the app received it (its own web view or URI
// scheme handler): *SignedIn. A URL that is not the sign-in's redirect URI answers ErrInvalidArgument and leaves
// the sign-in waiting.
func (s *BrowserPending) SubmitRedirect(ctx context.Context, redirectURL string) (*SignedIn, error) {
	next, err := s.submit(ctx, s, map[string]any{"action": "submit_redirect", "redirect_url": redirectURL})
	if err != nil {
		return nil, err
	}
	return expect[*SignedIn](next)
}

// DeviceCodeRequired: a device-code sign-in waits for the user to enter UserCode at VerificationURI (Message says
// so in words; VerificationURIComplete, when the server sent one, has the code in it). Then Wait.
type DeviceCodeRequired struct {
	Flow
	UserCode                string `json:"user_code"`
	VerificationURI         string `json:"verification_uri"`
	VerificationURIComplete string `json:"verification_uri_complete,omitempty"`
	ExpiresIn               int    `json:"expires_in"` // seconds until the code expires
	Interval                int    `json:"interval"`   // seconds between polls
	Message                 string `json:"message"`
}

// Status is "device_code_required".
func (*DeviceCodeRequired) Status() string { return "device_code_required" }

// Wait polls until the user approves: *SignedIn (FlowType "device_code"). The code's expiry answers
// ErrFlowExpired, a refusal ErrAccessDenied; ctx ending (a deadline) cancels the sign-in (the error matches
// ErrCancelled and ctx.Err()).
func (s *DeviceCodeRequired) Wait(ctx context.Context) (*SignedIn, error) {
	return waitSignedIn(ctx, s)
}

// WaitTimeout polls for up to d: *SignedIn, or — when d passes first — the same sign-in again as a
// *DeviceCodeRequired, still usable.
func (s *DeviceCodeRequired) WaitTimeout(ctx context.Context, d time.Duration) (State, error) {
	return s.waitOnce(ctx, s, d)
}

// waiter is a state whose flow waits (BrowserPending, DeviceCodeRequired).
type waiter interface {
	State
	waitOnce(ctx context.Context, self State, d time.Duration) (State, error)
}

// waitSignedIn repeats the library's "wait" (each ends at its own timeout with the same state) until the sign-in
// ends one way or the other, or ctx does.
func waitSignedIn(ctx context.Context, s waiter) (*SignedIn, error) {
	for {
		next, err := s.waitOnce(ctx, s, 0)
		if err != nil {
			return nil, err
		}
		if signedIn, ok := next.(*SignedIn); ok {
			return signedIn, nil
		}
		if next.Status() != s.Status() {
			return expect[*SignedIn](next)
		}
		s = next.(waiter)
	}
}

// waitOnce is one "wait" of at most d (0: the library's default).
func (f *Flow) waitOnce(ctx context.Context, self State, d time.Duration) (State, error) {
	req := map[string]any{"action": "wait"}
	if d < 0 {
		return nil, argError("timeout_ms", "the wait's duration is negative")
	}
	if d > 0 {
		req["timeout_ms"] = durationMS(d)
	}
	return f.submit(ctx, self, req)
}

// durationMS is d in whole milliseconds, at least 1.
func durationMS(d time.Duration) int64 {
	ms := int64(d / time.Millisecond)
	if ms < 1 {
		ms = 1
	}
	return ms
}
