// Command hello signs in with email + password, calls two APIs with one sign-in, and signs out.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

func main() {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	client, err := nativeauth.NewClient(nativeauth.Config{
		Authority:    os.Getenv("NATIVEAUTH_AUTHORITY"), // https://contoso.ciamlogin.com/contoso.onmicrosoft.com
		ClientID:     os.Getenv("NATIVEAUTH_CLIENT_ID"),
		Capabilities: []string{"mfa_required", "registration_required"}, // MFA in the app, not browser_required
	})
	if err != nil {
		fail(err)
	}
	defer client.Close()

	todo, notes := []string{os.Getenv("API1_SCOPE")}, []string{os.Getenv("API2_SCOPE")}
	state, err := client.SignIn(ctx, os.Getenv("NATIVEAUTH_USERNAME"), os.Getenv("NATIVEAUTH_PASSWORD"),
		&nativeauth.SignInOptions{Scopes: todo})
	if err != nil {
		fail(err)
	}
	signedIn, ok := state.(*nativeauth.SignedIn)
	if !ok { // *nativeauth.CodeRequired, *nativeauth.MFARequired, …: see examples/calltwoapis and the docs
		fail(fmt.Errorf("sign-in needs another step: %s", state.Status()))
	}
	fmt.Println("signed in:", signedIn.Account.Username)

	for _, api := range []struct {
		url    string
		scopes []string
	}{{os.Getenv("API1_URL"), todo}, {os.Getenv("API2_URL"), notes}} {
		resp, err := client.CallAPI(ctx, nativeauth.APIRequest{URL: api.url, Scopes: api.scopes})
		if err != nil {
			fail(err)
		}
		fmt.Println(api.url, "answered", resp.Status, resp.Text())
	}
	token, err := client.AccessToken(ctx, notes, nil) // from the cache now
	if err != nil {
		fail(err)
	}
	fmt.Println("token for", token.Scopes[0], "expires", token.Expiry().Format(time.RFC3339))

	if _, err := client.SignOut(ctx, nil); err != nil {
		fail(err)
	}
}

func fail(err error) {
	var e *nativeauth.Error
	if errors.As(err, &e) { // the stable code (docs/errors.md) and the library's message
		fmt.Fprintf(os.Stderr, "%s: %s\n", e.Code, e.Message)
	} else {
		fmt.Fprintln(os.Stderr, err)
	}
	os.Exit(1)
}
