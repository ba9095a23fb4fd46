package nativeauth

import (
	"context"
	"encoding/json"
	"strconv"
	"time"
	"unicode/utf8"
)

// Token is an access token (na_get_access_token's result, and the "token" of a signed-in state). Its String and
// GoString methods do not print the token, so it does not end up in logs by accident.
type Token struct {
	AccessToken string   `json:"access_token"`
	TokenType   string   `json:"token_type"` // "Bearer", or "DPoP" (send with a proof: Client.DPoPProof)
	Scopes      []string `json:"scopes"`
	ExpiresOn   int64    `json:"expires_on"` // Unix seconds
	FromCache   bool     `json:"from_cache"`
}

// Expiry is ExpiresOn as a time.
func (t Token) Expiry() time.Time { return time.Unix(t.ExpiresOn, 0) }

// String describes the token without revealing it.
func (t Token) String() string {
	src := "from the server"
	if t.FromCache {
		src = "from the cache"
	}
	return t.TokenType + " token (" + strconv.Itoa(len(t.AccessToken)) + " chars) for " + strconv.Quote(
		joinScopes(t.Scopes)) + ", expires " + t.Expiry().UTC().Format(time.RFC3339) + ", " + src
}

// GoString is String, so that %#v does not print the token either.
func (t Token) GoString() string { return "nativeauth.Token{" + t.String() + "}" }

// Account is a signed-in account (the C documents' "account").
type Account struct {
	Username      string         `json:"username"`
	HomeAccountID string         `json:"home_account_id"` // "<uid>.<utid>"
	TenantID      string         `json:"tenant_id"`
	Environment   string         `json:"environment"`
	Claims        map[string]any `json:"claims,omitempty"`   // the ID token's claims
	IDToken       string         `json:"id_token,omitempty"` // only when asked for (IncludeIDToken)
}

// String is the username and home account id (never the ID token).
func (a Account) String() string { return a.Username + " (" + a.HomeAccountID + ")" }

// TokenOptions are the optional members of an access-token request. A nil *TokenOptions means none.
type TokenOptions struct {
	ForceRefresh bool
	// Claims is a claims request (a JSON object), e.g. json.RawMessage(err.Claims) from an interaction error.
	Claims json.RawMessage
	// Account names the account (its home account id, or its username in any case) when several are signed in.
	Account       string
	CorrelationID string
}

func (o *TokenOptions) add(req map[string]any) {
	if o == nil {
		return
	}
	if o.ForceRefresh {
		req["force_refresh"] = true
	}
	if len(o.Claims) > 0 {
		req["claims"] = o.Claims
	}
	if o.Account != "" {
		req["account"] = o.Account
	}
	if o.CorrelationID != "" {
		req["correlation_id"] = o.CorrelationID
	}
}

// AccessToken returns an access token for scopes (nil or empty: the sign-in's own scopes), from the cache while
// more than 5 minutes of its lifetime remain, otherwise with one refresh that concurrent callers share.
// Errors: ErrNoAccount, ErrAccountRequired, ErrInteractionRequired (sign in again), ErrDeclinedScopes, network.
func (c *Client) AccessToken(ctx context.Context, scopes []string, opts *TokenOptions) (*Token, error) {
	req := map[string]any{}
	if scopes != nil {
		req["scopes"] = scopes
	}
	opts.add(req)
	var t Token
	if err := c.do(ctx, opGetAccessToken, req, &t); err != nil {
		return nil, err
	}
	return &t, nil
}

// APIRequest is a call of an API with the bearer token (na_call_api).
type APIRequest struct {
	URL    string
	Method string // default GET
	// Headers may not set Authorization, nor the headers that frame or route the request.
	Headers map[string]string
	// Body: nil for none; a string (or UTF-8 []byte) is sent as is; json.RawMessage or any other value is sent as
	// JSON (with Content-Type application/json unless Headers set one).
	Body          any
	Scopes        []string // nil: the sign-in's scopes
	ForceRefresh  bool
	Account       string
	CorrelationID string
}

// APIResponse is what the API answered. An HTTP error status is a response, not an error.
type APIResponse struct {
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers"` // lowercase names; repeated headers joined with ", "
	// Body is the body as JSON: the parsed document when the API sent JSON, a JSON string holding the text
	// otherwise. Absent when the body is not UTF-8 (see BodyBase64).
	Body json.RawMessage `json:"body,omitempty"`
	// BodyBase64 is a body that is not UTF-8, decoded.
	BodyBase64 []byte `json:"body_base64,omitempty"`
	// BodyTooDeep: a JSON body nested deeper than 64 levels, passed on as text.
	BodyTooDeep bool `json:"body_too_deep,omitempty"`
}

// OK reports a 2xx status.
func (r *APIResponse) OK() bool { return r.Status >= 200 && r.Status < 300 }

// Text returns the body as text: the text of a non-JSON body, the JSON text of a JSON body, the bytes of a
// binary one.
func (r *APIResponse) Text() string {
	if r.BodyBase64 != nil {
		return string(r.BodyBase64)
	}
	var s string
	if len(r.Body) > 0 && r.Body[0] == '"' && json.Unmarshal(r.Body, &s) == nil {
		return s
	}
	return string(r.Body)
}

// Decode decodes a JSON body into v.
func (r *APIResponse) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// CallAPI calls an API with Authorization: Bearer and a token from AccessToken's logic (on a 401 with
// error="invalid_token" the library refreshes once and retries once).
func (c *Client) CallAPI(ctx context.Context, r APIRequest) (*APIResponse, error) {
	req := map[string]any{"url": r.URL}
	if r.Method != "" {
		req["method"] = r.Method
	}
	if r.Headers != nil {
		req["headers"] = r.Headers
	}
	switch b := r.Body.(type) {
	case nil:
	case []byte:
		if !utf8.Valid(b) {
			return nil, argError("body", "body: not valid UTF-8 (the library sends text or JSON bodies)")
		}
		req["body"] = string(b)
	default:
		req["body"] = b
	}
	if r.Scopes != nil {
		req["scopes"] = r.Scopes
	}
	(&TokenOptions{ForceRefresh: r.ForceRefresh, Account: r.Account, CorrelationID: r.CorrelationID}).add(req)
	var resp APIResponse
	if err := c.do(ctx, opCallAPI, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

// AccountOptions are the optional members of an account request. A nil *AccountOptions means none.
type AccountOptions struct {
	Account        string // which account, when several are signed in (home account id or username)
	IncludeIDToken bool
}

// Account returns the signed-in account (ErrNoAccount when nobody is, ErrAccountRequired when several are and
// opts names none).
func (c *Client) Account(ctx context.Context, opts *AccountOptions) (*Account, error) {
	req := map[string]any{}
	if opts != nil {
		if opts.Account != "" {
			req["account"] = opts.Account
		}
		if opts.IncludeIDToken {
			req["include_id_token"] = true
		}
	}
	var doc struct {
		Account Account `json:"account"`
	}
	if err := c.do(ctx, opGetAccount, req, &doc); err != nil {
		return nil, err
	}
	return &doc.Account, nil
}

// Accounts returns every signed-in account, ordered by username (empty when nobody is signed in). Only
// opts.IncludeIDToken is used.
func (c *Client) Accounts(ctx context.Context, opts *AccountOptions) ([]Account, error) {
	req := map[string]any{}
	if opts != nil && opts.IncludeIDToken {
		req["include_id_token"] = true
	}
	var doc struct {
		Accounts []Account `json:"accounts"`
	}
	if err := c.do(ctx, opGetAccounts, req, &doc); err != nil {
		return nil, err
	}
	if doc.Accounts == nil {
		doc.Accounts = []Account{}
	}
	return doc.Accounts, nil
}

// SignOutOptions are the optional members of a sign-out. A nil *SignOutOptions signs out the only account.
type SignOutOptions struct {
	Account string // which account (home account id or username)
	All     bool   // every account (and every open flow)
	// Browser "system" also opens the provider's end-session page; default "none".
	Browser string
}

// SignOutResult is na_sign_out's result.
type SignOutResult struct {
	Status        string   `json:"status"` // "signed_out"
	WasSignedIn   bool     `json:"was_signed_in"`
	Accounts      []string `json:"accounts"` // the home account ids signed out
	EndSessionURL string   `json:"end_session_url,omitempty"`
	BrowserOpened bool     `json:"browser_opened,omitempty"`
}

// SignOut forgets an account's tokens, locally (as MSAL's native sign-out). Signing out when nobody is signed in
// is not an error.
func (c *Client) SignOut(ctx context.Context, opts *SignOutOptions) (*SignOutResult, error) {
	req := map[string]any{}
	if opts != nil {
		if opts.Account != "" {
			req["account"] = opts.Account
		}
		if opts.All {
			req["all"] = true
		}
		if opts.Browser != "" {
			req["browser"] = opts.Browser
		}
	}
	var r SignOutResult
	if err := c.do(ctx, opSignOut, req, &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// ClientInfo is na_client_info's result: the library version and the effective configuration.
type ClientInfo struct {
	Version string         `json:"version"`
	Config  map[string]any `json:"config"`
}

func joinScopes(scopes []string) string {
	s := ""
	for i, x := range scopes {
		if i > 0 {
			s += " "
		}
		s += x
	}
	return s
}
