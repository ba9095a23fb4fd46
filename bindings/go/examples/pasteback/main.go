// Command pasteback signs in through a browser on any device, for a machine without one (an SSH session, a
// container, a server): it prints the provider's sign-in address, reads back the address that browser ended on,
// then calls an API.
//
//	NATIVEAUTH_AUTHORITY=https://contoso.ciamlogin.com/contoso.onmicrosoft.com NATIVEAUTH_CLIENT_ID=<id> \
//	API_URL=https://…/todolist API_SCOPE=api://<id>/ToDoList.Read pasteback
//
// The browser ends on the redirect URI — http://localhost:PORT/?code=…&state=… — which it cannot load on another
// device: the user copies that address from its address bar and pastes it. The library checks that its state is
// this sign-in's and redeems the code with the PKCE verifier, which never leaves this process. A browser on this
// machine that loads the address completes the sign-in too (the loopback listener is served between pastes).
// NATIVEAUTH_REDIRECT_URI may name another redirect URI, such as Entra's
// https://login.microsoftonline.com/common/oauth2/nativeclient (no listener: paste only); NATIVEAUTH_CA_BUNDLE a
// private CA.
package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

func main() { os.Exit(run()) }

func run() int {
	get := func(name string) string { return os.Getenv(name) }
	for _, name := range []string{"NATIVEAUTH_AUTHORITY", "NATIVEAUTH_CLIENT_ID", "API_URL", "API_SCOPE"} {
		if get(name) == "" {
			fmt.Fprintf(os.Stderr, "missing environment variable %s\n", name)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	client, err := nativeauth.NewClient(nativeauth.Config{Authority: get("NATIVEAUTH_AUTHORITY"),
		ClientID: get("NATIVEAUTH_CLIENT_ID"), RedirectURI: get("NATIVEAUTH_REDIRECT_URI"),
		CABundle: get("NATIVEAUTH_CA_BUNDLE")})
	if err != nil {
		fmt.Fprintln(os.Stderr, "NewClient:", err)
		return 1
	}
	defer client.Close()

	scopes := []string{get("API_SCOPE")}
	state, err := client.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Scopes: scopes, Browser: "none"})
	pending, ok := state.(*nativeauth.BrowserPending)
	if err != nil || !ok {
		fmt.Fprintln(os.Stderr, "SignInInteractive:", err)
		return 1
	}
	fmt.Println("[Go] Open this address in a browser on any device and sign in:")
	fmt.Println(pending.AuthorizationURL)
	fmt.Printf("[Go] The browser then goes to an address starting with %s, which it may not be able to load.\n",
		pending.RedirectURI)
	fmt.Println("[Go] Copy that whole address and paste it here:")

	lines := make(chan string)
	go func() {
		in := bufio.NewScanner(os.Stdin)
		in.Buffer(make([]byte, 64*1024), 64*1024)
		for in.Scan() {
			lines <- in.Text()
		}
		close(lines)
	}()
	listening := strings.HasPrefix(pending.RedirectURI, "http://localhost") ||
		strings.HasPrefix(pending.RedirectURI, "http://127.0.0.1")
	var signedIn *nativeauth.SignedIn
	for signedIn == nil {
		var line string
		var more bool
		if listening {
			select {
			case line, more = <-lines:
			default:
				// No paste yet: a short wait for a browser on this machine.
				next, err := pending.WaitTimeout(ctx, 500*time.Millisecond)
				if err != nil {
					fmt.Fprintln(os.Stderr, "[Go] the sign-in failed:", err)
					return 1
				}
				signedIn, _ = next.(*nativeauth.SignedIn)
				continue
			}
		} else {
			line, more = <-lines
		}
		if !more {
			fmt.Fprintln(os.Stderr, "[Go] no address was pasted")
			_ = pending.Cancel(ctx)
			return 1
		}
		signedIn, err = pending.SubmitRedirect(ctx, strings.TrimSpace(line))
		if errors.Is(err, nativeauth.ErrInvalidArgument) { // not this sign-in's redirect URI: it goes on
			fmt.Printf("[Go] %v; paste the address again:\n", err)
			continue
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "[Go] the sign-in failed:", err)
			return 1
		}
	}
	fmt.Printf("[Go] signed in: %s\n", signedIn.Account.Username)
	resp, err := client.CallAPI(ctx, nativeauth.APIRequest{URL: get("API_URL"), Scopes: scopes})
	if err != nil {
		fmt.Fprintln(os.Stderr, "[Go] CallAPI:", err)
		return 1
	}
	fmt.Printf("[Go] the API answered HTTP %d\n", resp.Status)
	if _, err := client.SignOut(ctx, nil); err != nil {
		fmt.Fprintln(os.Stderr, "[Go] SignOut:", err)
		return 1
	}
	return 0
}
