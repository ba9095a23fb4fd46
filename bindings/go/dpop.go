package nativeauth

// #include <stdlib.h>
// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"runtime"
)

// DPoPProofRequest describes one request the app sends itself with a DPoP-bound token (Token.TokenType "DPoP", a
// client made with Config.DPoP).
type DPoPProofRequest struct {
	// Method is the request's method ("GET", "POST", …).
	Method string
	// URL is the request's URL (https, or http to localhost, 127.0.0.1, [::1]); the proof names it without query
	// and fragment.
	URL string
	// AccessToken is the token the request presents: the proof then carries its hash (ath). Give it for every
	// request to a resource; leave it "" for one to a token endpoint.
	AccessToken string
	// Nonce is the server's latest DPoP-Nonce header (after a use_dpop_nonce challenge); "" for the last one the
	// library saw from that origin, if any.
	Nonce string
	// Account names one of several signed-in accounts (a home_account_id or a username).
	Account string
}

// DPoPProof makes a DPoP proof (RFC 9449) for one request (na_dpop_proof): send it as the DPoP header beside
// "Authorization: DPoP <access token>", a new proof for every request. The account's key never leaves the library.
// Local and fast (tens of microseconds): no context. Errors: ErrInvalidArgument (Field names the member),
// ErrNoAccount, ErrAccountRequired, ErrDPoPUnsupported (the account's tokens are bearer tokens).
func (c *Client) DPoPProof(r DPoPProofRequest) (string, error) {
	req := map[string]any{"method": r.Method, "url": r.URL}
	if r.AccessToken != "" {
		req["access_token"] = r.AccessToken
	}
	if r.Nonce != "" {
		req["nonce"] = r.Nonce
	}
	if r.Account != "" {
		req["account"] = r.Account
	}
	if err := checkStrings("", req); err != nil {
		return "", err
	}
	req["v"] = 1
	b, err := encode(req)
	if err != nil {
		return "", err
	}
	h := c.handle.Load()
	if h == 0 {
		wipe(b)
		return "", closedError()
	}
	creq := cString(b)
	wipe(b) // it holds the access token
	res := C.go_na_dpop_proof(C.uintptr_t(h), creq)
	C.go_na_wipe_free(creq, C.size_t(len(b)))
	runtime.KeepAlive(c)
	doc := take(res.out)
	defer wipe(doc)
	if res.rc != C.NA_OK {
		e := errorFrom(int(res.rc), doc)
		if e.Code == "invalid_handle" && c.Closed() {
			e.cause = ErrClosed
		}
		return "", e
	}
	var out struct {
		Proof string `json:"proof"`
	}
	if err := json.Unmarshal(doc, &out); err != nil || out.Proof == "" {
		return "", &Error{Status: StatusInternal, Code: "internal", Message: "undecodable na_dpop_proof result"}
	}
	return out.Proof, nil
}
