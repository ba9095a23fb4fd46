package nativeauth_test

import (
	"context"
	"errors"
	"log"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

type logLine struct {
	level         nativeauth.LogLevel
	message       string
	correlationID string
}

type logRecorder struct {
	mu    sync.Mutex
	lines []logLine
}

func (r *logRecorder) log(level nativeauth.LogLevel, message, correlationID string) {
	r.mu.Lock()
	r.lines = append(r.lines, logLine{level, message, correlationID})
	r.mu.Unlock()
}

func (r *logRecorder) snapshot() []logLine {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]logLine(nil), r.lines...)
}

// A Logger from the configuration sees the sign-in's lines with correlation ids — never the password, the code,
// the username or a token — and SetLogger replaces and removes it.
func TestLogger(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	rec := &logRecorder{}
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID,
		LogLevel: "verbose", Logger: rec.log})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	user, password := e.user("password")
	otp, _ := e.user("otp")
	_, todo := e.api("ToDoList")

	s := signIn(t, e, c, todo)
	tok, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{ForceRefresh: true})
	if err != nil {
		t.Fatal(err)
	}
	state, err := c.SignIn(ctx, otp, "", nil)
	if err != nil {
		t.Fatal(err)
	}
	code := e.lastCode(otp)
	if _, err := state.(*nativeauth.CodeRequired).SubmitCode(ctx, code); err != nil {
		t.Fatal(err)
	}

	lines := rec.snapshot()
	if len(lines) == 0 {
		t.Fatal("no log lines")
	}
	var all strings.Builder
	withCorrelation := 0
	for _, l := range lines {
		if l.level < nativeauth.LogError || l.level > nativeauth.LogVerbose || l.message == "" ||
			strings.ContainsAny(l.message, "\r\n") {
			t.Errorf("a log line: %+v", l)
		}
		if l.correlationID != "" {
			withCorrelation++
		}
		all.WriteString(l.level.String() + " " + l.message + " " + l.correlationID + "\n")
	}
	text := all.String()
	if withCorrelation == 0 || !strings.Contains(text, "signed in") {
		t.Errorf("the lines do not tell the sign-in:\n%s", text)
	}
	for what, secret := range map[string]string{"the password": password, "the username": user, "the code": code,
		"the other username": otp, "an access token": s.Token.AccessToken, "the refreshed token": tok.AccessToken,
		"a JWT": "eyJ"} {
		if strings.Contains(text, secret) {
			t.Errorf("the log shows %s:\n%s", what, text)
		}
	}

	// Replaced: the old Logger is never called again once SetLogger returned.
	other := &logRecorder{}
	if err := c.SetLogger(nativeauth.LogInfo, other.log); err != nil {
		t.Fatal(err)
	}
	before := len(rec.snapshot())
	if _, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{ForceRefresh: true, Account: user}); err != nil {
		t.Fatal(err)
	}
	if len(rec.snapshot()) != before || len(other.snapshot()) == 0 {
		t.Fatalf("after SetLogger: %d new lines to the old logger, %d to the new", len(rec.snapshot())-before,
			len(other.snapshot()))
	}
	for _, l := range other.snapshot() {
		if l.level > nativeauth.LogInfo {
			t.Errorf("a %s line at level info", l.level)
		}
	}
	// Removed.
	if err := c.SetLogger(nativeauth.LogOff, nil); err != nil {
		t.Fatal(err)
	}
	before = len(other.snapshot())
	if _, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{ForceRefresh: true, Account: user}); err != nil {
		t.Fatal(err)
	}
	if len(other.snapshot()) != before {
		t.Fatal("a removed Logger was called")
	}
}

// A Logger may call the client, but not SetLogger (ErrReentrantCall); a panicking Logger loses its line, not the
// call; a bad level is refused.
func TestLoggerReentrancyAndPanics(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	var mu sync.Mutex
	var setErr, infoErr error
	calls := 0
	err := c.SetLogger(nativeauth.LogVerbose, func(nativeauth.LogLevel, string, string) {
		mu.Lock()
		calls++
		first := calls == 1
		mu.Unlock()
		if first {
			err := c.SetLogger(nativeauth.LogOff, nil)
			_, ierr := c.Info(ctx)
			mu.Lock()
			setErr, infoErr = err, ierr
			mu.Unlock()
		}
		panic("a broken logger")
	})
	if err != nil {
		t.Fatal(err)
	}
	signIn(t, e, c, nil)
	mu.Lock()
	defer mu.Unlock()
	if calls == 0 || !errors.Is(setErr, nativeauth.ErrReentrantCall) || infoErr != nil {
		t.Fatalf("%d calls; SetLogger inside: %v; Info inside: %v", calls, setErr, infoErr)
	}
	if err := c.SetLogger(nativeauth.LogLevel(9), nil); !errors.Is(err, nativeauth.ErrInvalidArgument) {
		t.Fatalf("a bad level: %v", err)
	}
}

// A LogLevel without a Logger: the lines go to the standard library's log package. (Not parallel: it redirects the
// log package's output.)
func TestLogLevelWithoutLoggerUsesThePackageLog(t *testing.T) {
	e := startEmulator(t)
	var buf strings.Builder
	var mu sync.Mutex
	log.SetOutput(writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return buf.Write(p)
	}))
	defer log.SetOutput(os.Stderr)
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID, LogLevel: "info"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	signIn(t, e, c, nil)
	c.Close()
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(buf.String(), "nativeauth: info: ") || strings.Contains(buf.String(), "verbose") {
		t.Fatalf("the log package got:\n%s", buf.String())
	}
}

type writerFunc func(p []byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// A Logger that closes its client: the call that logged ends (cancelled, or done), nothing hangs, and the client
// is closed.
func TestCloseFromInsideALogger(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	var c *nativeauth.Client
	var once sync.Once
	c, err := nativeauth.NewClient(nativeauth.Config{Authority: e.Authority, ClientID: e.ClientID,
		Logger: func(nativeauth.LogLevel, string, string) { once.Do(func() { c.Close() }) }})
	if err != nil {
		t.Fatal(err)
	}
	user, password := e.user("password")
	done := make(chan error, 1)
	go func() {
		_, err := c.SignIn(context.Background(), user, password, nil)
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil && !errors.Is(err, nativeauth.ErrClosed) {
			t.Fatalf("SignIn: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SignIn hung after its Logger closed the client")
	}
	if !c.Closed() {
		t.Fatal("not closed")
	}
	if _, err := c.Accounts(context.Background(), nil); !errors.Is(err, nativeauth.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
