package nativeauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

func newClient(t *testing.T, e *emulator) *nativeauth.Client {
	t.Helper()
	c, err := nativeauth.NewClient(nativeauth.Config{
		Authority:    e.Authority,
		ClientID:     e.ClientID,
		Capabilities: []string{"mfa_required", "registration_required"},
	})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func signIn(t *testing.T, e *emulator, c *nativeauth.Client, scopes []string) *nativeauth.SignedIn {
	t.Helper()
	user, password := e.user("password")
	state, err := c.SignIn(context.Background(), user, password, &nativeauth.SignInOptions{Scopes: scopes})
	if err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	s, ok := state.(*nativeauth.SignedIn)
	if !ok {
		t.Fatalf("SignIn answered %s, want signed_in", state.Status())
	}
	return s
}

// asError checks that err is an *Error with code and status.
func asError(t *testing.T, err error, code string, status nativeauth.Status) *nativeauth.Error {
	t.Helper()
	var e *nativeauth.Error
	if !errors.As(err, &e) {
		t.Fatalf("want an *Error %s, got %T %v", code, err, err)
	}
	if e.Code != code || e.Status != status {
		t.Fatalf("want %s (%s), got %s (%s): %s", code, status, e.Code, e.Status, e.Message)
	}
	return e
}

func TestVersion(t *testing.T) {
	if nativeauth.LibraryABIVersion() != nativeauth.ABIVersion || nativeauth.Version() == "" {
		t.Fatalf("library %s ABI %d", nativeauth.Version(), nativeauth.LibraryABIVersion())
	}
	if nativeauth.StatusAuth.String() != "NA_EAUTH" || nativeauth.StatusAuth.Description() == "" {
		t.Fatalf("status names: %s %q", nativeauth.StatusAuth, nativeauth.StatusAuth.Description())
	}
}

// The tutorial: sign in with email + password, tokens for two APIs (two scope sets), both APIs called with the
// bearer token, sign out.
func TestTutorialTwoAPIs(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	url1, scopes1 := e.api("ToDoList")
	url2, scopes2 := e.api("Notes")

	s := signIn(t, e, c, scopes1)
	user, _ := e.user("password")
	if s.Account.Username != user || s.Account.HomeAccountID == "" || s.Token.AccessToken == "" ||
		s.Token.FromCache || s.FlowType != "sign_in" || s.Account.Claims["preferred_username"] != user {
		t.Fatalf("signed in: %+v", s)
	}
	if strings.Contains(fmt.Sprintf("%v %+v %#v", s.Token, s.Token, s.Token), s.Token.AccessToken) {
		t.Fatal("formatting a Token prints the token")
	}

	for round := 0; round < 2; round++ {
		for _, api := range []struct {
			url    string
			scopes []string
		}{{url1, scopes1}, {url2, scopes2}} {
			tok, err := c.AccessToken(ctx, api.scopes, nil)
			if err != nil {
				t.Fatalf("AccessToken %v: %v", api.scopes, err)
			}
			wantCached := round == 1 || api.url == url1 // the sign-in's token is API 1's
			if tok.FromCache != wantCached || tok.TokenType != "Bearer" || !contains(tok.Scopes, api.scopes[0]) ||
				tok.Expiry().Before(time.Now()) {
				t.Fatalf("round %d, token for %v: %v", round, api.scopes, tok)
			}
			resp, err := c.CallAPI(ctx, nativeauth.APIRequest{URL: api.url, Scopes: api.scopes})
			if err != nil {
				t.Fatalf("CallAPI %s: %v", api.url, err)
			}
			var body map[string]any
			if !resp.OK() || resp.Decode(&body) != nil || body["user"] != user ||
				!strings.Contains(resp.Headers["content-type"], "json") {
				t.Fatalf("CallAPI %s: %d %s", api.url, resp.Status, resp.Text())
			}
		}
	}

	acct, err := c.Account(ctx, &nativeauth.AccountOptions{IncludeIDToken: true})
	if err != nil || acct.Username != user || acct.IDToken == "" {
		t.Fatalf("Account: %v %v", acct, err)
	}
	accts, err := c.Accounts(ctx, nil)
	if err != nil || len(accts) != 1 || accts[0].HomeAccountID != s.Account.HomeAccountID || accts[0].IDToken != "" {
		t.Fatalf("Accounts: %v %v", accts, err)
	}
	info, err := c.Info(ctx)
	if err != nil || info.Version != nativeauth.Version() || info.Config["client_id"] != e.ClientID {
		t.Fatalf("Info: %+v %v", info, err)
	}

	out, err := c.SignOut(ctx, nil)
	if err != nil || out.Status != "signed_out" || !out.WasSignedIn || len(out.Accounts) != 1 {
		t.Fatalf("SignOut: %+v %v", out, err)
	}
	_, err = c.AccessToken(ctx, scopes2, nil)
	asError(t, err, "no_account", nativeauth.StatusNotFound)
}

// An API's answer: a JSON body sent, a text body and an HTTP error status returned as results.
func TestCallAPIBodiesAndStatuses(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	url1, _ := e.api("ToDoList")
	_, writeScopes := e.APIs[0].URL, e.APIs[0].Scopes[1:2]
	signIn(t, e, c, writeScopes)
	resp, err := c.CallAPI(ctx, nativeauth.APIRequest{URL: url1, Method: "POST", Scopes: writeScopes,
		Body: map[string]any{"title": "Buy milk"}, Headers: map[string]string{"X-Trace": "42"}})
	if err != nil || !resp.OK() || !strings.Contains(resp.Text(), "Buy milk") {
		t.Fatalf("POST: %v %+v", err, resp)
	}
	resp, err = c.CallAPI(ctx, nativeauth.APIRequest{URL: e.BaseURL + "/api/nothing-here", Scopes: writeScopes})
	if err != nil || resp.OK() || resp.Status != 404 {
		t.Fatalf("404: %v %+v", err, resp)
	}
	_, err = c.CallAPI(ctx, nativeauth.APIRequest{URL: url1, Scopes: writeScopes,
		Headers: map[string]string{"Authorization": "Bearer mine"}})
	if e := asError(t, err, "invalid_argument", nativeauth.StatusInvalid); e.Field == "" {
		t.Fatalf("no field: %+v", e)
	}
}

// Email one-time-code sign-in, the code read from the emulator's outbox; a wrong code first keeps the state.
func TestEmailCodeSignIn(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	user, _ := e.user("otp")
	state, err := c.SignIn(ctx, user, "", nil)
	if err != nil {
		t.Fatalf("SignIn: %v", err)
	}
	code, ok := state.(*nativeauth.CodeRequired)
	if !ok || code.ID == "" || code.Channel != "email" || code.CodeLength == 0 || code.SentTo == "" ||
		code.SentTo == user || code.FlowType != "sign_in" {
		t.Fatalf("SignIn answered %#v", state)
	}
	_, err = code.SubmitCode(ctx, strings.Repeat("0", code.CodeLength))
	ie := asError(t, err, "invalid_code", nativeauth.StatusAuth)
	if !errors.Is(err, nativeauth.ErrInvalidCode) || ie.State != nativeauth.State(code) {
		t.Fatalf("a wrong code: %+v", ie)
	}
	retry := ie.State.(*nativeauth.CodeRequired)
	next, err := retry.SubmitCode(ctx, e.lastCode(user))
	if err != nil {
		t.Fatalf("SubmitCode: %v", err)
	}
	if s, ok := next.(*nativeauth.SignedIn); !ok || s.Account.Username != user {
		t.Fatalf("SubmitCode answered %#v", next)
	}
	// the flow is finished
	_, err = code.SubmitCode(ctx, "12345678")
	asError(t, err, "flow_invalid", nativeauth.StatusState)
}

// A resent code replaces the first one; Cancel ends a flow.
func TestResendAndCancel(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	user, _ := e.user("otp")
	state, err := c.SignIn(ctx, user, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	first := e.lastCode(user)
	again, err := state.(*nativeauth.CodeRequired).ResendCode(ctx)
	if err != nil || e.lastCode(user) == first {
		t.Fatalf("ResendCode: %v", err)
	}
	if err := again.Cancel(ctx); err != nil {
		t.Fatalf("Cancel: %v", err)
	}
	_, err = again.SubmitCode(ctx, e.lastCode(user))
	if !errors.Is(err, nativeauth.ErrFlowInvalid) || !errors.Is(err, nativeauth.StatusState) {
		t.Fatalf("after Cancel: %v", err)
	}
}

// MFA: password, then a code sent to the second factor.
func TestMFASignIn(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	var user, password, mfaEmail string
	for _, u := range e.Users {
		if u.MFAEmail != "" {
			user, password, mfaEmail = u.Email, u.Password, u.MFAEmail
		}
	}
	state, err := c.SignIn(ctx, user, password, nil)
	if err != nil {
		t.Fatal(err)
	}
	mfa, ok := state.(*nativeauth.MFARequired)
	if !ok || len(mfa.Methods) == 0 || mfa.Methods[0].ID == "" {
		t.Fatalf("SignIn answered %#v", state)
	}
	code, err := mfa.RequestChallenge(ctx, &mfa.Methods[0])
	if err != nil {
		t.Fatalf("RequestChallenge: %v", err)
	}
	next, err := code.SubmitCode(ctx, e.lastCode(mfaEmail))
	if s, ok := next.(*nativeauth.SignedIn); err != nil || !ok || s.Account.Username != user {
		t.Fatalf("SubmitCode: %#v %v", next, err)
	}
}

// Errors: wrong password (retryable, with the state to retry on), unknown user, no account, bad configuration,
// arguments refused before any call.
func TestErrors(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	user, password := e.user("password")

	_, err := c.SignIn(ctx, user, "wrong", nil)
	ie := asError(t, err, "invalid_credentials", nativeauth.StatusAuth)
	if !errors.Is(err, nativeauth.ErrInvalidCredentials) || !errors.Is(err, nativeauth.StatusAuth) ||
		errors.Is(err, nativeauth.ErrNoAccount) || ie.CorrelationID() == "" || ie.Message == "" ||
		strings.Contains(err.Error(), "wrong") {
		t.Fatalf("wrong password: %+v", ie)
	}
	retry, ok := ie.State.(*nativeauth.PasswordRequired)
	if !ok {
		t.Fatalf("no state to retry on: %#v", ie.State)
	}
	if s, err := retry.SubmitPassword(ctx, password); err != nil || s.Status() != "signed_in" {
		t.Fatalf("retry: %v %v", s, err)
	}

	_, err = c.SignIn(ctx, "nobody@contoso.com", "x", nil)
	if !errors.Is(err, nativeauth.ErrUserNotFound) {
		t.Fatalf("unknown user: %v", err)
	}

	fresh := newClient(t, e)
	_, err = fresh.AccessToken(ctx, nil, nil)
	asError(t, err, "no_account", nativeauth.StatusNotFound)
	if !errors.Is(err, nativeauth.ErrNoAccount) || errors.Is(err, nativeauth.ErrInteractionRequired) {
		t.Fatalf("no account: %v", err)
	}
	if _, err := fresh.Account(ctx, nil); !errors.Is(err, nativeauth.ErrNoAccount) {
		t.Fatalf("Account: %v", err)
	}
	if out, err := fresh.SignOut(ctx, nil); err != nil || out.WasSignedIn {
		t.Fatalf("SignOut nobody: %+v %v", out, err)
	}
	if a, err := fresh.Accounts(ctx, nil); err != nil || a == nil || len(a) != 0 {
		t.Fatalf("Accounts: %v %v", a, err)
	}

	_, err = nativeauth.NewClient(nativeauth.Config{Authority: e.Authority})
	if ce := asError(t, err, "invalid_argument", nativeauth.StatusInvalid); ce.Field != "client_id" {
		t.Fatalf("bad configuration: %+v", ce)
	}
	_, err = c.SignIn(ctx, user, "bad\xffutf8", nil)
	if ae := asError(t, err, "invalid_argument", nativeauth.StatusInvalid); ae.Field != "password" {
		t.Fatalf("invalid UTF-8: %+v", ae)
	}
	_, err = c.AccessToken(ctx, nil, &nativeauth.TokenOptions{Claims: json.RawMessage("{not json")})
	asError(t, err, "invalid_argument", nativeauth.StatusInvalid)

	done, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.AccessToken(done, nil, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("a cancelled context: %v", err)
	}
}

// The sentinels and statuses as errors.Is targets.
func TestErrorMatching(t *testing.T) {
	expired := &nativeauth.Error{Code: "refresh_token_expired", Status: nativeauth.StatusInteraction}
	if !errors.Is(expired, nativeauth.ErrInteractionRequired) || !errors.Is(expired, nativeauth.ErrRefreshTokenExpired) ||
		!errors.Is(expired, nativeauth.StatusInteraction) || errors.Is(expired, nativeauth.ErrBrowserRequired) {
		t.Fatal("interaction family")
	}
	timeout := fmt.Errorf("wrapped: %w", &nativeauth.Error{Code: "timeout", Status: nativeauth.StatusNetwork})
	if !errors.Is(timeout, nativeauth.ErrNetwork) || !errors.Is(timeout, nativeauth.ErrTimeout) ||
		errors.Is(timeout, nativeauth.ErrTLS) || errors.Is(timeout, nativeauth.StatusServer) {
		t.Fatal("network family")
	}
}

// One client, many goroutines: tokens for two scope sets at once, every call served (refreshes shared).
func TestConcurrentAccessToken(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	// Short-lived access tokens are never served from the cache, so every call needs a refresh; a refresh token
	// presented twice would revoke the session.
	e.control("POST", "settings", map[string]any{"access_token_lifetime": 120, "refresh_token_reuse_detection": true},
		nil)
	c := newClient(t, e)
	_, scopes1 := e.api("ToDoList")
	_, scopes2 := e.api("Notes")
	signIn(t, e, c, scopes1)

	const goroutines, calls = 32, 8
	var wg sync.WaitGroup
	errs := make(chan error, goroutines*calls)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			scopes := scopes1
			if g%2 == 1 {
				scopes = scopes2
			}
			for i := 0; i < calls; i++ {
				tok, err := c.AccessToken(context.Background(), scopes, nil)
				if err == nil && (tok.AccessToken == "" || !contains(tok.Scopes, scopes[0])) {
					err = fmt.Errorf("token %v for %v", tok, scopes)
				}
				if err != nil {
					errs <- err
				}
			}
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var log struct {
		Requests []struct {
			Status int               `json:"status"`
			Fields map[string]string `json:"fields"`
		} `json:"requests"`
	}
	e.control("GET", "requests?path=/token", nil, &log)
	refreshes := 0
	for _, r := range log.Requests {
		if r.Fields["grant_type"] == "refresh_token" {
			refreshes++
			if r.Status != 200 {
				t.Errorf("a refresh answered HTTP %d", r.Status)
			}
		}
	}
	if refreshes < 2 {
		t.Errorf("%d refreshes: the test did not exercise concurrent refreshes", refreshes)
	}
	t.Logf("%d calls, %d refreshes", goroutines*calls, refreshes)
}

// Close twice, calls after Close, and Close while other goroutines are inside calls (which Close cancels): errors
// matching ErrClosed, never a crash.
func TestClose(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID})
	if err != nil {
		t.Fatal(err)
	}
	_, scopes := e.api("ToDoList")
	signIn(t, e, c, scopes)
	ctx := context.Background()

	var wg sync.WaitGroup
	start := make(chan struct{})
	unexpected := make(chan error, 64)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for i := 0; i < 200; i++ {
				_, err := c.AccessToken(ctx, scopes, nil)
				if err == nil {
					continue
				}
				// Started after Close: invalid_handle; in flight when Close came: cancelled. Both match ErrClosed.
				if !errors.Is(err, nativeauth.ErrClosed) || (!errors.Is(err, nativeauth.ErrInvalidHandle) &&
					!errors.Is(err, nativeauth.ErrCancelled)) {
					unexpected <- err
				}
				return
			}
		}()
	}
	for g := 0; g < 4; g++ { // concurrent Close calls
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			time.Sleep(time.Millisecond)
			_ = c.Close()
		}()
	}
	close(start)
	wg.Wait()
	close(unexpected)
	for err := range unexpected {
		t.Errorf("a call racing Close: %v", err)
	}
	if err := c.Close(); err != nil || !c.Closed() {
		t.Fatalf("Close again: %v", err)
	}

	for name, call := range map[string]func() error{
		"AccessToken": func() error { _, err := c.AccessToken(ctx, scopes, nil); return err },
		"SignIn":      func() error { _, err := c.SignIn(ctx, "ann@contoso.com", "x", nil); return err },
		"CallAPI":     func() error { _, err := c.CallAPI(ctx, nativeauth.APIRequest{URL: e.BaseURL}); return err },
		"Account":     func() error { _, err := c.Account(ctx, nil); return err },
		"Accounts":    func() error { _, err := c.Accounts(ctx, nil); return err },
		"SignOut":     func() error { _, err := c.SignOut(ctx, nil); return err },
		"Info":        func() error { _, err := c.Info(ctx); return err },
	} {
		err := call()
		if !errors.Is(err, nativeauth.ErrClosed) {
			t.Errorf("%s after Close: %v", name, err)
		}
		asError(t, err, "invalid_handle", nativeauth.StatusInvalid)
	}
}

// A state outlives nothing: its client's Close ends it too.
func TestStateAfterClose(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	user, _ := e.user("otp")
	state, err := c.SignIn(context.Background(), user, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	_, err = state.(*nativeauth.CodeRequired).SubmitCode(context.Background(), e.lastCode(user))
	if !errors.Is(err, nativeauth.ErrClosed) {
		t.Fatalf("SubmitCode after Close: %v", err)
	}
}

// Sign-up, then a password reset whose completion polling a context's deadline cancels, then one that completes.
func TestSignUpAndResetPassword(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	const user = "go.user@contoso.com"
	state, err := c.SignUp(ctx, user, &nativeauth.SignUpOptions{Password: "Str0ng-Passw0rd!"})
	if err != nil {
		t.Fatalf("SignUp: %v", err)
	}
	state, err = state.(*nativeauth.CodeRequired).SubmitCode(ctx, e.lastCode(user))
	if attrs, ok := state.(*nativeauth.AttributesRequired); ok && err == nil {
		values := map[string]any{}
		for _, a := range attrs.RequiredAttributes {
			values[a.Name] = "Go User"
		}
		state, err = attrs.SubmitAttributes(ctx, values)
	}
	done, ok := state.(*nativeauth.SignUpCompleted)
	if err != nil || !ok {
		t.Fatalf("sign-up: %#v %v", state, err)
	}
	if s, err := done.SignIn(ctx, nil); err != nil || s.Status() != "signed_in" {
		t.Fatalf("sign in after sign-up: %v %v", s, err)
	}

	// The server reports the reset in progress for a long time: a context deadline cancels the wait.
	e.control("POST", "settings", map[string]any{"reset_in_progress_polls": 1000, "reset_poll_interval": 1}, nil)
	state, err = c.ResetPassword(ctx, user)
	if err != nil {
		t.Fatalf("ResetPassword: %v", err)
	}
	state, err = state.(*nativeauth.CodeRequired).SubmitCode(ctx, e.lastCode(user))
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	began := time.Now()
	_, err = state.(*nativeauth.PasswordRequired).SubmitPassword(short, "N3w-Passw0rd!")
	if !errors.Is(err, nativeauth.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) ||
		time.Since(began) > 10*time.Second {
		t.Fatalf("a cancelled reset: %v after %v", err, time.Since(began))
	}

	e.control("POST", "settings", map[string]any{"reset_in_progress_polls": 0, "reset_poll_interval": 0}, nil)
	state, err = c.ResetPassword(ctx, user)
	if err == nil {
		state, err = state.(*nativeauth.CodeRequired).SubmitCode(ctx, e.lastCode(user))
	}
	if err == nil {
		state, err = state.(*nativeauth.PasswordRequired).SubmitPassword(ctx, "N3w-Passw0rd!")
	}
	completed, ok := state.(*nativeauth.PasswordResetCompleted)
	if err != nil || !ok {
		t.Fatalf("reset: %#v %v", state, err)
	}
	if s, err := completed.SignIn(ctx, nil); err != nil || s.Status() != "signed_in" {
		t.Fatalf("sign in after reset: %v %v", s, err)
	}
}

// The example program, built and run end to end: the tutorial's transcript, and a wrong password reported.
func TestExampleCallTwoAPIs(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "calltwoapis")
	build := exec.Command(goTool, "build", "-o", bin, "./examples/calltwoapis")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	user, password := e.user("password")
	url1, scopes1 := e.api("ToDoList")
	url2, scopes2 := e.api("Notes")
	run := func(extra ...string) (int, string, string) {
		cmd := exec.Command(bin, extra...)
		cmd.Env = append(os.Environ(), "NATIVEAUTH_AUTHORITY="+e.Authority, "NATIVEAUTH_CLIENT_ID="+e.ClientID,
			"NATIVEAUTH_USERNAME="+user, "NATIVEAUTH_PASSWORD="+password, "API1_URL="+url1, "API1_SCOPE="+scopes1[0],
			"API2_URL="+url2, "API2_SCOPE="+scopes2[0])
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, stdout.String(), stderr.String()
	}
	code, out, errOut := run()
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	for _, want := range []string{"signed in: " + user, "API 1 answered HTTP 200", "API 2 answered HTTP 200",
		"from the server", "signed_out"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if n := strings.Count(out, "from the cache"); n != 3 {
		t.Errorf("%d tokens from the cache, want 3:\n%s", n, out)
	}
	if strings.Contains(out+errOut, password) {
		t.Error("the transcript shows the password")
	}

	code, out, errOut = run("--password", "wrong")
	if code != 1 || !strings.Contains(errOut, "invalid_credentials") || !strings.Contains(errOut, "correlation id") {
		t.Fatalf("a wrong password: exit %d\n%s\n%s", code, out, errOut)
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// Client capabilities and the app's request headers reach the configuration (Info reports them); a reserved header
// name is refused naming the member.
func TestClientCapabilitiesAndRequestHeaders(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c, err := nativeauth.NewClient(nativeauth.Config{
		Authority: e.Authority, ClientID: e.ClientID,
		ClientCapabilities: []string{"cp1"}, RequestHeaders: map[string]string{"x-fraud-session": "go"},
	})
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	defer c.Close()
	info, err := c.Info(context.Background())
	if err != nil {
		t.Fatalf("Info: %v", err)
	}
	caps, _ := info.Config["client_capabilities"].([]any)
	headers, _ := info.Config["request_headers"].(map[string]any)
	if len(caps) != 1 || caps[0] != "cp1" || headers["x-fraud-session"] != "go" {
		t.Fatalf("config: %v", info.Config)
	}
	_, err = nativeauth.NewClient(nativeauth.Config{
		Authority: e.Authority, ClientID: e.ClientID, RequestHeaders: map[string]string{"x-ms-x": "1"},
	})
	asError(t, err, "invalid_argument", nativeauth.StatusInvalid)
}
