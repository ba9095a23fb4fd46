package nativeauth_test

import (
	"encoding/base64"
	"errors"
	"strings"
	"testing"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

// A Microsoft Graph claims challenge, other schemes, and bad headers (no client, no emulator).
func TestParseWWWAuthenticate(t *testing.T) {
	const claims = `{"access_token":{"nbf":{"essential":true, "value":"1604106651"}}}`
	encoded := base64.StdEncoding.EncodeToString([]byte(claims))
	graph := `Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize", ` +
		`client_id="00000003-0000-0000-c000-000000000000", error="insufficient_claims", claims="` + encoded + `"`
	w, err := nativeauth.ParseWWWAuthenticate(graph)
	if err != nil || w.Claims != claims || len(w.Challenges) != 1 {
		t.Fatalf("Graph: %+v %v", w, err)
	}
	c := w.Challenges[0]
	if !c.IsScheme("bearer") || c.Token68 != "" || c.Claims != claims || c.Params["error"] != "insufficient_claims" ||
		c.Params["claims"] != encoded || c.Params["realm"] != "" || len(c.Params) != 5 {
		t.Fatalf("the challenge: %+v", c)
	}

	w, err = nativeauth.ParseWWWAuthenticate(`Negotiate abc==, Basic realm="x", Bearer error="invalid_token"`)
	if err != nil || w.Claims != "" || len(w.Challenges) != 3 || w.Challenges[0].Token68 != "abc==" ||
		w.Challenges[1].Params["realm"] != "x" {
		t.Fatalf("three challenges: %+v %v", w, err)
	}
	if w, err := nativeauth.ParseWWWAuthenticate(""); err != nil || w.Challenges == nil || len(w.Challenges) != 0 {
		t.Fatalf("empty: %+v %v", w, err)
	}
	for _, bad := range []string{`Bearer realm="s3cretvalue`, "Bearer a=\x00", "Bearer a=\xff",
		strings.Repeat("a", 70000)} {
		_, err := nativeauth.ParseWWWAuthenticate(bad)
		var e *nativeauth.Error
		if !errors.As(err, &e) || !errors.Is(err, nativeauth.ErrInvalidArgument) ||
			strings.Contains(e.Message, "s3cret") {
			t.Errorf("%.20q: %v", bad, err)
		}
	}
}
