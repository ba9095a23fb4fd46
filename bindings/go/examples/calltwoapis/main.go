// Command calltwoapis is the tutorial in Go: sign in with email + password, get a token for API 1 and call it, get
// a token for API 2 (a different scope set, from the same sign-in) and call it, then sign out.
//
//	calltwoapis --authority https://contoso.ciamlogin.com/contoso.onmicrosoft.com --client-id <id> \
//	    --username ann@contoso.com --password '…' \
//	    --api1-url https://…/todolist --api1-scope api://<id>/ToDoList.Read \
//	    --api2-url https://…/notes --api2-scope api://<id>/Notes.Read
//
// Every setting may come from the environment instead, as for bindings/c/call_two_apis.c: NATIVEAUTH_AUTHORITY,
// NATIVEAUTH_CLIENT_ID, NATIVEAUTH_USERNAME, NATIVEAUTH_PASSWORD, API1_URL, API1_SCOPE, API2_URL, API2_SCOPE (and
// NATIVEAUTH_CA_BUNDLE).
//
// Building needs cgo and the installed library's nativeauth.pc: a `go run .` that stops at
// "# pkg-config --cflags -- nativeauth … Package nativeauth was not found in the pkg-config search path" means
// pkg-config cannot see it — install libnativeauth-dev, or `make install PREFIX=…` and set
// PKG_CONFIG_PATH=<PREFIX>/lib/pkgconfig (bindings/go/README.md).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

type setting struct {
	flag, env string
	value     string
}

func (s *setting) String() string     { return s.value }
func (s *setting) Set(v string) error { s.value = v; return nil }

func main() { os.Exit(run()) }

func run() int {
	names := [][2]string{
		{"authority", "NATIVEAUTH_AUTHORITY"}, {"client-id", "NATIVEAUTH_CLIENT_ID"},
		{"username", "NATIVEAUTH_USERNAME"}, {"password", "NATIVEAUTH_PASSWORD"},
		{"api1-url", "API1_URL"}, {"api1-scope", "API1_SCOPE"}, {"api2-url", "API2_URL"}, {"api2-scope", "API2_SCOPE"},
		{"ca-bundle", "NATIVEAUTH_CA_BUNDLE"},
	}
	settings := map[string]*setting{}
	for _, n := range names {
		s := &setting{flag: n[0], env: n[1], value: os.Getenv(n[1])}
		settings[n[0]] = s
		flag.Var(s, n[0], "(or $"+n[1]+")")
	}
	flag.Parse()
	for _, s := range settings {
		if s.value == "" && s.flag != "ca-bundle" {
			fmt.Fprintf(os.Stderr, "missing setting: --%s (or environment variable %s)\n", s.flag, s.env)
			return 2
		}
	}
	get := func(name string) string { return settings[name].value }
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	client, err := nativeauth.NewClient(nativeauth.Config{
		Authority:      get("authority"),
		ClientID:       get("client-id"),
		ChallengeTypes: []string{"password", "oob"},
		Capabilities:   []string{"mfa_required", "registration_required"},
		CABundle:       get("ca-bundle"),
	})
	if err != nil {
		report("NewClient", err)
		return 1
	}
	defer client.Close()

	fmt.Printf("[Go] signing in as %s\n", get("username"))
	ok := false
	scope1, scope2 := []string{get("api1-scope")}, []string{get("api2-scope")}
	state, err := client.SignIn(ctx, get("username"), get("password"), &nativeauth.SignInOptions{Scopes: scope1})
	switch s := state.(type) {
	case nil:
		report("SignIn", err)
	case *nativeauth.SignedIn:
		fmt.Printf("  signed in: %s (home account %s)\n", s.Account.Username, s.Account.HomeAccountID)
		ok = callAPI(ctx, client, "API 1", get("api1-url"), scope1) &&
			callAPI(ctx, client, "API 2", get("api2-url"), scope2) &&
			// the second call of each is served from the cache
			callAPI(ctx, client, "API 1", get("api1-url"), scope1) &&
			callAPI(ctx, client, "API 2", get("api2-url"), scope2)
	default:
		fmt.Fprintf(os.Stderr, "sign-in needs more: %s (see the MFA notes in docs/)\n", state.Status())
	}

	out, err := client.SignOut(ctx, nil)
	if err != nil {
		report("SignOut", err)
		return 1
	}
	fmt.Printf("  %s\n", out.Status)
	if !ok {
		return 1
	}
	return 0
}

func callAPI(ctx context.Context, client *nativeauth.Client, name, url string, scopes []string) bool {
	token, err := client.AccessToken(ctx, scopes, nil)
	if err != nil {
		report("AccessToken", err)
		return false
	}
	source := "from the server"
	if token.FromCache {
		source = "from the cache"
	}
	fmt.Printf("  token for %s: %s, scopes: %s, %s\n", name, masked(token.AccessToken), token.Scopes[0], source)
	resp, err := client.CallAPI(ctx, nativeauth.APIRequest{URL: url, Scopes: scopes})
	if err != nil {
		report("CallAPI", err)
		return false
	}
	fmt.Printf("  %s answered HTTP %d: %s\n", name, resp.Status, strings.TrimSpace(string(resp.Body)))
	return resp.OK()
}

// report prints an error: its stable code, its message, and the server's correlation id when there is one.
func report(step string, err error) {
	var e *nativeauth.Error
	if errors.As(err, &e) {
		cid := ""
		if id := e.CorrelationID(); id != "" {
			cid = " correlation id " + id
		}
		fmt.Fprintf(os.Stderr, "%s failed (%s): %s — %s%s\n", step, e.Status.Description(), e.Code, e.Message, cid)
		return
	}
	fmt.Fprintf(os.Stderr, "%s failed: %v\n", step, err)
}

// masked shows which token without revealing it.
func masked(token string) string {
	head := token
	if len(head) > 10 {
		head = head[:10]
	}
	return fmt.Sprintf("%s… (%d chars)", head, len(token))
}
