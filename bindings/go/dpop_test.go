package nativeauth_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

// DPoP (RFC 9449) at the emulator's generic provider: a device-code sign-in binds the tokens to the account's key,
// CallAPI sends them with proofs, and DPoPProof makes a proof for a request the program sends itself — which the API
// takes once and refuses replayed; a proof for a bad URL and DPoP with Entra are refused.
func TestDPoP(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	ctx := context.Background()
	_, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID, DPoP: true})
	if !errors.Is(err, nativeauth.ErrDPoPUnsupported) {
		t.Fatalf("DPoP with Entra: %v", err)
	}
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.OIDC.Authority, ClientID: e.OIDC.ClientID,
		AuthorityType: "oidc", DPoP: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	api, scopes := e.OIDC.APIs[0].URL, e.OIDC.APIs[0].Scopes[:1]
	state, err := c.SignInDeviceCode(ctx, scopes)
	if err != nil {
		t.Fatal(err)
	}
	approveDeviceCode(e, state.UserCode, "ann@contoso.com")
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if s, err := state.Wait(waitCtx); err != nil || s.Token.TokenType != "DPoP" {
		t.Fatalf("Wait: %#v %v", s, err)
	}
	tok, err := c.AccessToken(ctx, scopes, nil)
	if err != nil || tok.TokenType != "DPoP" || !tok.FromCache {
		t.Fatalf("AccessToken: %v %v", tok, err)
	}
	if resp, err := c.CallAPI(ctx, nativeauth.APIRequest{URL: api, Scopes: scopes}); err != nil || resp.Status != 200 {
		t.Fatalf("CallAPI: %v %v", resp, err)
	}
	proof, err := c.DPoPProof(nativeauth.DPoPProofRequest{Method: "GET", URL: api, AccessToken: tok.AccessToken})
	if err != nil || len(proof) < 100 {
		t.Fatalf("DPoPProof: %q %v", proof, err)
	}
	get := func(proof string) int {
		req, _ := http.NewRequest("GET", api, nil)
		req.Header.Set("Authorization", "DPoP "+tok.AccessToken)
		req.Header.Set("DPoP", proof)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if first, replayed := get(proof), get(proof); first != 200 || replayed != 401 {
		t.Fatalf("the proof: %d, replayed: %d", first, replayed)
	}
	_, err = c.DPoPProof(nativeauth.DPoPProofRequest{Method: "GET", URL: "ftp://example.com/"})
	if e := asError(t, err, "invalid_argument", nativeauth.StatusInvalid); e.Field != "url" {
		t.Fatalf("a bad URL: %v", e)
	}
}
