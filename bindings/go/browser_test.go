package nativeauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

// pageBrowser follows the emulator's authorize page like a person with a browser (as bindings/python's PageBrowser):
// it opens the library's one-time start page (keeping its cookie), fills in the provider's form, and follows the
// redirect to the library's loopback listener — or, with capture, keeps that redirect for SubmitRedirect. Each URL
// is visited on its own goroutine: the opener must not wait for the sign-in.
type pageBrowser struct {
	email, password string
	capture         bool
	http            *http.Client

	mu                sync.Mutex
	opened            []string
	authorizationURLs []string // where each start page sent the browser
	captured          []string // redirects kept (capture)
	results           chan int // the listener's HTTP status per visit; negative: the visit failed
}

func newPageBrowser(email, password string) *pageBrowser {
	jar, _ := cookiejar.New(nil)
	return &pageBrowser{email: email, password: password, results: make(chan int, 16), http: &http.Client{
		Jar: jar, Timeout: 20 * time.Second, Transport: &http.Transport{Proxy: nil},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

// Open is the BrowserOpener.
func (b *pageBrowser) Open(u string) error {
	b.mu.Lock()
	b.opened = append(b.opened, u)
	b.mu.Unlock()
	go b.visit(u)
	return nil
}

func (b *pageBrowser) fetch(u string, form url.Values) (int, http.Header, string, error) {
	var resp *http.Response
	var err error
	if form != nil {
		resp, err = b.http.PostForm(u, form)
	} else {
		resp, err = b.http.Get(u)
	}
	if err != nil {
		return 0, nil, "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(body), err
}

func origin(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return ""
	}
	return p.Scheme + "://" + p.Host
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

func (b *pageBrowser) visit(start string) {
	status, header, body, err := b.fetch(start, nil)
	if err != nil {
		b.results <- -1
		return
	}
	listener, current := origin(start), start
	if (status == 302 || status == 303) && origin(header.Get("Location")) != listener {
		b.mu.Lock()
		b.authorizationURLs = append(b.authorizationURLs, header.Get("Location"))
		b.mu.Unlock()
	} else {
		p, _ := url.Parse(start)
		listener = origin(p.Query().Get("redirect_uri"))
	}
	for i := 0; i < 10; i++ {
		if status == 302 || status == 303 {
			location := header.Get("Location")
			if origin(location) == listener && b.capture {
				b.mu.Lock()
				b.captured = append(b.captured, location)
				b.mu.Unlock()
				b.results <- 0
				return
			}
			if status, header, body, err = b.fetch(location, nil); err != nil {
				b.results <- -1
				return
			}
			if origin(location) == listener {
				b.results <- status
				return
			}
			current = location
			continue
		}
		m := requestField.FindStringSubmatch(body)
		if m == nil {
			b.results <- -status
			return
		}
		form := url.Values{"request": {html.UnescapeString(m[1])}, "username": {b.email}, "password": {b.password}}
		if status, header, body, err = b.fetch(current, form); err != nil {
			b.results <- -1
			return
		}
	}
	b.results <- -1
}

// result waits for the outcome of the next visit.
func (b *pageBrowser) result(t *testing.T) int {
	t.Helper()
	select {
	case r := <-b.results:
		return r
	case <-time.After(30 * time.Second):
		t.Fatal("the browser did not finish its visit")
		return 0
	}
}

func (b *pageBrowser) snapshot() (opened, authorizationURLs, captured []string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.opened...), append([]string(nil), b.authorizationURLs...),
		append([]string(nil), b.captured...)
}

func newBrowserClient(t *testing.T, e *emulator, browser nativeauth.BrowserOpener) *nativeauth.Client {
	t.Helper()
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID, Browser: browser})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// The system browser (the opener): signed in, with the options on the authorization request, then a token for
// another API and a sign-out with the end-session URL.
func TestSignInInteractive(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	user, password := e.user("password")
	browser := newPageBrowser(user, password)
	c := newBrowserClient(t, e, browser.Open)
	ctx := context.Background()
	_, todo := e.api("ToDoList")
	_, notes := e.api("Notes")

	state, err := c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Scopes: todo, LoginHint: user,
		Prompt: "login", Claims: json.RawMessage(`{"id_token":{"acr":{"essential":true}}}`),
		ExtraQueryParameters: map[string]string{"dc": "ESTS-PUB-WUS2"}, Timeout: 30 * time.Second})
	if err != nil {
		t.Fatalf("SignInInteractive: %v", err)
	}
	s, ok := state.(*nativeauth.SignedIn)
	if !ok || s.FlowType != "interactive" || s.Account.Username != user || s.Token.AccessToken == "" ||
		!contains(s.Token.Scopes, todo[0]) {
		t.Fatalf("SignInInteractive answered %#v", state)
	}
	if r := browser.result(t); r != 200 {
		t.Fatalf("the listener answered the browser %d", r)
	}
	opened, authURLs, _ := browser.snapshot()
	// The opener got a one-time address on the listener; the provider's URL (state, nonce, …) came from it.
	if len(opened) != 1 || !strings.HasPrefix(opened[0], "http://localhost:") ||
		strings.Contains(opened[0], "state=") || len(authURLs) != 1 || !strings.Contains(authURLs[0], "state=") ||
		!strings.Contains(authURLs[0], "nonce=") {
		t.Fatalf("opened %v, authorization URLs %v", opened, authURLs)
	}
	var log struct {
		Requests []struct {
			Prompt    string            `json:"prompt"`
			LoginHint string            `json:"login_hint"`
			Claims    string            `json:"claims"`
			Params    map[string]string `json:"params"`
		} `json:"requests"`
	}
	e.control("GET", "authorize_log", nil, &log)
	if len(log.Requests) == 0 {
		t.Fatal("no authorize request logged")
	}
	first := log.Requests[0]
	if first.Prompt != "login" || first.LoginHint != user || !strings.Contains(first.Claims, "acr") ||
		first.Params["dc"] != "ESTS-PUB-WUS2" {
		t.Fatalf("the authorization request: %+v", first)
	}

	tok, err := c.AccessToken(ctx, notes, nil)
	if err != nil || tok.FromCache || !contains(tok.Scopes, notes[0]) {
		t.Fatalf("AccessToken after the browser sign-in: %v %v", tok, err)
	}
	out, err := c.SignOut(ctx, nil)
	if err != nil || !out.WasSignedIn || !strings.Contains(out.EndSessionURL, "id_token_hint=") {
		t.Fatalf("SignOut: %+v %v", out, err)
	}
}

// Browser "none": the app shows the provider's URL and waits; a short wait answers the same sign-in again; Cancel
// from another goroutine ends a wait; a wait's context ending cancels the sign-in.
func TestBrowserPendingWaitAndCancel(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	user, password := e.user("password")
	c := newBrowserClient(t, e, nil)
	ctx := context.Background()

	state, err := c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Browser: "none"})
	pending, ok := state.(*nativeauth.BrowserPending)
	if err != nil || !ok || !strings.HasPrefix(pending.AuthorizationURL, e.Authority+"/oauth2/v2.0/authorize?") ||
		pending.RedirectURI == "" || pending.ExpiresIn <= 0 || pending.FlowType != "interactive" {
		t.Fatalf("SignInInteractive(none): %#v %v", state, err)
	}
	again, err := pending.WaitTimeout(ctx, 100*time.Millisecond)
	if p, ok := again.(*nativeauth.BrowserPending); err != nil || !ok || p.ID != pending.ID {
		t.Fatalf("a short wait: %#v %v", again, err)
	}
	browser := newPageBrowser(user, password)
	if err := browser.Open(pending.AuthorizationURL); err != nil {
		t.Fatal(err)
	}
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	signedIn, err := pending.Wait(waitCtx)
	if err != nil || signedIn.Account.Username != user || signedIn.FlowType != "interactive" {
		t.Fatalf("Wait: %#v %v", signedIn, err)
	}

	// Cancel from another goroutine while Wait waits.
	state, err = c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Browser: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pending = state.(*nativeauth.BrowserPending)
	waited := make(chan error, 1)
	go func() {
		_, err := pending.Wait(ctx)
		waited <- err
	}()
	// The wait may not have begun when Cancel comes: it then answers flow_invalid (the flow is gone) instead.
	if err := pending.Cancel(ctx); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	select {
	case err := <-waited:
		if !errors.Is(err, nativeauth.ErrCancelled) && !errors.Is(err, nativeauth.ErrFlowInvalid) {
			t.Fatalf("Wait after Cancel: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Wait did not end after Cancel")
	}

	// A wait whose context ends: the sign-in is cancelled.
	state, err = c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Browser: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pending = state.(*nativeauth.BrowserPending)
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancelShort()
	began := time.Now()
	_, err = pending.Wait(short)
	if !errors.Is(err, nativeauth.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) ||
		time.Since(began) > 5*time.Second {
		t.Fatalf("Wait with a deadline: %v after %v", err, time.Since(began))
	}
	if _, err := pending.WaitTimeout(ctx, 10*time.Millisecond); !errors.Is(err, nativeauth.ErrFlowInvalid) {
		t.Fatalf("the cancelled sign-in is over: %v", err)
	}
	if accts, err := c.Accounts(ctx, nil); err != nil || len(accts) != 1 {
		t.Fatalf("Accounts: %v %v", accts, err)
	}
}

// An app that captures the redirect itself (or whose user signed in on another device and pasted it): SubmitRedirect,
// without the listener ever being served; another URI than the sign-in's is refused, the sign-in stays; another
// state is refused and ends the sign-in.
func TestBrowserPendingSubmitRedirect(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	user, password := e.user("password")
	c := newBrowserClient(t, e, nil)
	ctx := context.Background()
	state, err := c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Browser: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pending := state.(*nativeauth.BrowserPending)
	browser := newPageBrowser(user, password)
	browser.capture = true
	// The provider's URL: no wait serves the listener meanwhile.
	browser.visit(pending.AuthorizationURL)
	if r := browser.result(t); r != 0 {
		t.Fatalf("the visit: %d", r)
	}
	_, _, captured := browser.snapshot()
	if len(captured) != 1 || !strings.HasPrefix(captured[0], pending.RedirectURI) {
		t.Fatalf("the redirect: %v", captured)
	}

	_, err = pending.SubmitRedirect(ctx, "http://localhost:1/?code=x&state=y")
	var ae *nativeauth.Error
	if !errors.As(err, &ae) || ae.Code != "invalid_argument" {
		t.Fatalf("a foreign redirect: %v", err)
	}
	s, err := pending.SubmitRedirect(ctx, captured[0])
	if err != nil || s.Account.Username != user || s.FlowType != "interactive" {
		t.Fatalf("SubmitRedirect: %#v %v", s, err)
	}

	state, err = c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Browser: "none"})
	if err != nil {
		t.Fatal(err)
	}
	pending = state.(*nativeauth.BrowserPending)
	other := newPageBrowser(user, password) // another device: a browser of its own
	other.capture = true
	other.visit(pending.AuthorizationURL)
	if r := other.result(t); r != 0 {
		t.Fatalf("the second visit: %d", r)
	}
	_, _, captured = other.snapshot()
	tampered := strings.Replace(captured[0], "state=", "state=x", 1)
	if _, err := pending.SubmitRedirect(ctx, tampered); !errors.Is(err, nativeauth.ErrServer) {
		t.Fatalf("a tampered state: %v", err)
	}
	if _, err := pending.SubmitRedirect(ctx, captured[0]); !errors.Is(err, nativeauth.ErrFlowInvalid) {
		t.Fatalf("the sign-in is over: %v", err)
	}
}

// An opener that cannot open (an error, or a panic): browser_unavailable with the start page's address; an opener
// that tries to replace itself is refused.
func TestBrowserUnavailable(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	ctx := context.Background()
	var reentrant error
	var c *nativeauth.Client
	openers := []nativeauth.BrowserOpener{
		func(string) error { return errors.New("no display") },
		func(string) error { panic("a broken opener") },
		func(string) error { reentrant = c.SetBrowser(nil); return fmt.Errorf("refused") },
	}
	c = newBrowserClient(t, e, nil)
	for i, opener := range openers {
		if err := c.SetBrowser(opener); err != nil {
			t.Fatalf("SetBrowser: %v", err)
		}
		_, err := c.SignInInteractive(ctx, nil)
		e := asError(t, err, "browser_unavailable", nativeauth.StatusInteraction)
		if !errors.Is(err, nativeauth.ErrBrowserUnavailable) || !errors.Is(err, nativeauth.ErrInteractionRequired) ||
			!strings.HasPrefix(e.AuthorizationURL, "http://localhost:") ||
			strings.Contains(e.AuthorizationURL, "state=") {
			t.Fatalf("opener %d: %+v", i, e)
		}
	}
	if !errors.Is(reentrant, nativeauth.ErrReentrantCall) {
		t.Fatalf("SetBrowser from inside the opener: %v", reentrant)
	}
	if err := c.SetBrowser(nil); err != nil { // from outside it works
		t.Fatalf("SetBrowser(nil): %v", err)
	}
}

// A user who must use the browser: the native sign-in's error carries the login hint for SignInInteractive.
func TestBrowserRequiredFallsBackWithTheLoginHint(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	e.control("POST", "users", map[string]any{"email": "bea@contoso.com", "password": "Bea-Passw0rd!",
		"requires_browser": true}, nil)
	browser := newPageBrowser("bea@contoso.com", "Bea-Passw0rd!")
	c := newBrowserClient(t, e, browser.Open)
	ctx := context.Background()
	_, err := c.SignIn(ctx, "bea@contoso.com", "Bea-Passw0rd!", nil)
	be := asError(t, err, "browser_required", nativeauth.StatusInteraction)
	if be.LoginHint != "bea@contoso.com" {
		t.Fatalf("login hint: %+v", be)
	}
	state, err := c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{LoginHint: be.LoginHint})
	if s, ok := state.(*nativeauth.SignedIn); err != nil || !ok || s.Account.Username != "bea@contoso.com" {
		t.Fatalf("SignInInteractive: %#v %v", state, err)
	}
}
