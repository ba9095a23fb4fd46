package nativeauth_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/pprof"
	"strings"
	"sync"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

// 50 goroutines ask for tokens at once (two scope sets, tokens too short-lived for the cache, so refreshes run and
// are shared): every call succeeds.
func TestFiftyConcurrentAccessTokens(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	e.control("POST", "settings", map[string]any{"access_token_lifetime": 120, "refresh_token_reuse_detection": true},
		nil)
	c := newClient(t, e)
	_, todo := e.api("ToDoList")
	_, notes := e.api("Notes")
	signIn(t, e, c, todo)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	const goroutines = 50
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make(chan error, goroutines)
	for g := 0; g < goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			scopes := todo
			if g%2 == 1 {
				scopes = notes
			}
			<-start
			tok, err := c.AccessToken(ctx, scopes, nil)
			if err == nil && (tok.AccessToken == "" || !contains(tok.Scopes, scopes[0])) {
				err = fmt.Errorf("token %v for %v", tok, scopes)
			}
			if err != nil {
				errs <- fmt.Errorf("goroutine %d: %w", g, err)
			}
		}(g)
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// A browser sign-in whose context is cancelled while it waits for the browser (the opener was called, nobody
// comes): it returns within a second, matching context.Canceled and ErrCancelled, and nobody is signed in.
func TestCancelSignInInteractiveWhileWaitingForTheBrowser(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	opened := make(chan string, 1)
	c := newBrowserClient(t, e, func(url string) error {
		opened <- url
		return nil // a browser that never comes back
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	result := make(chan error, 1)
	go func() {
		_, err := c.SignInInteractive(ctx, &nativeauth.InteractiveOptions{Timeout: time.Minute})
		result <- err
	}()
	select {
	case <-opened:
	case err := <-result:
		t.Fatalf("SignInInteractive ended before the browser was opened: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the browser was not opened")
	}
	cancel()
	began := time.Now()
	select {
	case err := <-result:
		if elapsed := time.Since(began); elapsed > time.Second {
			t.Errorf("returned %v after the cancel", elapsed)
		}
		if !errors.Is(err, context.Canceled) || !errors.Is(err, nativeauth.ErrCancelled) {
			t.Fatalf("the error: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SignInInteractive did not return after its context was cancelled")
	}
	accts, err := c.Accounts(context.Background(), nil)
	if err != nil || len(accts) != 0 {
		t.Fatalf("Accounts after the cancelled sign-in: %v %v", accts, err)
	}
}

// Goroutines waiting in the library hold no OS thread: with 48 device-code waits running at once (each on one of
// the library's workers), every waiting goroutine is parked in a select (none is inside a cgo call) and hardly any
// Go thread was created for them — a blocking cgo call would have taken one thread each. Cancelling their context
// ends them all promptly.
func TestWaitingCallsHoldNoThreads(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID, AsyncWorkers: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	const waits = 48
	var states []*nativeauth.DeviceCodeRequired
	for i := 0; i < waits; i++ {
		s, err := c.SignInDeviceCode(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		states = append(states, s)
	}
	before := pprof.Lookup("threadcreate").Count()
	waitCtx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, waits)
	for _, s := range states {
		wg.Add(1)
		go func(s *nativeauth.DeviceCodeRequired) {
			defer wg.Done()
			if _, err := s.Wait(waitCtx); !errors.Is(err, nativeauth.ErrCancelled) ||
				!errors.Is(err, context.Canceled) {
				errs <- err
			}
		}(s)
	}
	// Every wait is parked in invoke's select: poll the goroutine dump.
	deadline := time.Now().Add(30 * time.Second)
	for {
		parked := parkedInInvoke()
		if parked == waits {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d waits parked", parked, waits)
		}
		time.Sleep(10 * time.Millisecond) // polling, not a fixed delay
	}
	created := pprof.Lookup("threadcreate").Count() - before
	if created > waits/4 {
		t.Errorf("%d waiting calls created %d threads", waits, created)
	}
	t.Logf("%d waiting calls, %d threads created", waits, created)
	began := time.Now()
	cancel()
	wg.Wait()
	if elapsed := time.Since(began); elapsed > 5*time.Second {
		t.Errorf("the cancelled waits took %v to return", elapsed)
	}
	close(errs)
	for err := range errs {
		t.Errorf("a wait: %v", err)
	}
}

// parkedInInvoke counts the goroutines parked in the package's invoke (in its select, not in a cgo call).
func parkedInInvoke() (parked int) {
	buf := make([]byte, 1<<22)
	buf = buf[:runtime.Stack(buf, true)]
	for _, g := range strings.Split(string(buf), "\n\n") {
		if !strings.Contains(g, "nativeauth/bindings/go.invoke(") {
			continue
		}
		if strings.Contains(strings.SplitN(g, "\n", 2)[0], "[select") && !strings.Contains(g, "runtime.cgocall") {
			parked++
		}
	}
	return parked
}

// cancelWhenHeld cancels ctx once the emulator holds the request a delay fault caught (the fault is used up when
// the request arrives), and returns when it did.
func cancelWhenHeld(t *testing.T, e *emulator, cancel context.CancelFunc) time.Time {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var faults struct {
			Faults []any `json:"faults"`
		}
		e.control("GET", "faults", nil, &faults)
		if len(faults.Faults) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the request did not reach the emulator")
		}
		time.Sleep(5 * time.Millisecond) // polling, not a fixed delay
	}
	cancel()
	return time.Now()
}

// Cancelling a context ends the call at once. A token refresh whose request reached the server (which redeemed
// the refresh token, rotated it, and holds the answer) returns cancelled at once and is finished in the background:
// once the answer is released, the next forced refresh works (the rotated refresh token was kept). A flow step whose
// request was aborted keeps its flow: the step can be taken again.
func TestCancelAbortsTheRequestInFlight(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	_, todo := e.api("ToDoList")
	signIn(t, e, c, todo)
	before, err := c.AccessToken(context.Background(), todo, nil)
	if err != nil {
		t.Fatal(err)
	}

	e.control("POST", "faults", map[string]any{"path": "/oauth2/v2.0/token", "stage": "after", "hold": true}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	result := make(chan error, 1)
	go func() {
		_, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{ForceRefresh: true})
		result <- err
	}()
	cancelled := cancelWhenHeld(t, e, cancel)
	err = <-result
	if elapsed := time.Since(cancelled); elapsed > time.Second {
		t.Errorf("AccessToken returned %v after the cancel", elapsed)
	}
	if !errors.Is(err, context.Canceled) || !errors.Is(err, nativeauth.ErrCancelled) {
		t.Fatalf("a cancelled refresh: %v", err)
	}
	e.control("POST", "faults/release", nil, nil)
	// The cancelled refresh had been sent, so the library finishes it in the background once released; this forced
	// refresh either sends its own or, when that background one stored first, takes the token it stored after this
	// call began (from_cache) — both are a new token.
	tok, err := c.AccessToken(context.Background(), todo, &nativeauth.TokenOptions{ForceRefresh: true})
	if err != nil || tok.AccessToken == before.AccessToken {
		t.Fatalf("the refresh after the cancelled one: %v %v", tok, err)
	}

	otp, _ := e.user("otp")
	state, err := c.SignIn(context.Background(), otp, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	codeState := state.(*nativeauth.CodeRequired)
	code := e.lastCode(otp)
	e.control("POST", "faults", map[string]any{"path": "/oauth2/v2.0/token", "delay_ms": 20000}, nil)
	ctx, cancel = context.WithCancel(context.Background())
	go func() {
		_, err := codeState.SubmitCode(ctx, code)
		result <- err
	}()
	cancelled = cancelWhenHeld(t, e, cancel)
	err = <-result
	if elapsed := time.Since(cancelled); elapsed > time.Second {
		t.Errorf("SubmitCode returned %v after the cancel", elapsed)
	}
	var ce *nativeauth.Error
	if !errors.As(err, &ce) || !errors.Is(err, context.Canceled) || ce.Code != "cancelled" {
		t.Fatalf("a cancelled step: %#v", err)
	}
	// The flow is kept and the error names it (the header: "a step whose request was aborted ... keeps its flow
	// and the error names it"): ce.State is the state to retry on.
	if ce.State == nil {
		t.Fatalf("a cancelled step's error carries no state to retry on: %#v", ce)
	}
	next, err := codeState.SubmitCode(context.Background(), code)
	if s, ok := next.(*nativeauth.SignedIn); err != nil || !ok || s.Account.Username != otp {
		t.Fatalf("the step retried: %#v %v", next, err)
	}
}
