package nativeauth_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"testing"
	"time"

	nativeauth "github.com/nativeauth/nativeauth/bindings/go"
)

func approveDeviceCode(e *emulator, userCode, email string) {
	e.control("POST", "device/approve", map[string]any{"user_code": userCode, "email": email}, nil)
}

// Device code: the state, a short wait answering it again, the approval, then signed in.
func TestSignInDeviceCode(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	user, _ := e.user("password")
	_, todo := e.api("ToDoList")
	state, err := c.SignInDeviceCode(ctx, todo)
	if err != nil || state.UserCode == "" || !strings.Contains(state.Message, state.UserCode) ||
		state.VerificationURI == "" || state.ExpiresIn <= 0 || state.Interval <= 0 || state.FlowType != "device_code" ||
		state.Status() != "device_code_required" {
		t.Fatalf("SignInDeviceCode: %+v %v", state, err)
	}
	again, err := state.WaitTimeout(ctx, 100*time.Millisecond)
	if d, ok := again.(*nativeauth.DeviceCodeRequired); err != nil || !ok || d.ID != state.ID ||
		d.UserCode != state.UserCode {
		t.Fatalf("a short wait: %#v %v", again, err)
	}
	approveDeviceCode(e, state.UserCode, user)
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	s, err := state.Wait(waitCtx)
	if err != nil || s.FlowType != "device_code" || s.Account.Username != user || !contains(s.Token.Scopes, todo[0]) {
		t.Fatalf("Wait: %#v %v", s, err)
	}
}

// A refused code answers access_denied; a wait whose context has a deadline ends promptly, cancelled, and signs
// nobody in.
func TestDeviceCodeDeniedAndDeadline(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	state, err := c.SignInDeviceCode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.control("POST", "device/approve", map[string]any{"user_code": state.UserCode, "deny": true}, nil)
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	_, err = state.Wait(waitCtx)
	asError(t, err, "access_denied", nativeauth.StatusAuth)

	state, err = c.SignInDeviceCode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancelShort()
	began := time.Now()
	_, err = state.Wait(short)
	if !errors.Is(err, nativeauth.ErrCancelled) || !errors.Is(err, context.DeadlineExceeded) ||
		time.Since(began) > 3*time.Second {
		t.Fatalf("Wait with a deadline: %v after %v", err, time.Since(began))
	}
	// The sign-in is over: an approval now signs nobody in.
	approveDeviceCode(e, state.UserCode, "ann@contoso.com")
	if _, err := state.WaitTimeout(ctx, 10*time.Millisecond); !errors.Is(err, nativeauth.ErrFlowInvalid) {
		t.Fatalf("the cancelled sign-in is over: %v", err)
	}
	if accts, err := c.Accounts(ctx, nil); err != nil || len(accts) != 0 {
		t.Fatalf("Accounts after a cancelled device code: %v %v", accts, err)
	}
}

// Two accounts (device code and email code): listed by username; calls without an account answer
// account_required; each is chosen by username or home account id for tokens, APIs, Account and SignOut; then all
// are signed out.
func TestSeveralAccounts(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	c := newClient(t, e)
	ctx := context.Background()
	ann, _ := e.user("password")
	otp, _ := e.user("otp")
	todoURL, todo := e.api("ToDoList")

	state, err := c.SignInDeviceCode(ctx, todo)
	if err != nil {
		t.Fatal(err)
	}
	approveDeviceCode(e, state.UserCode, ann)
	waitCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	annIn, err := state.Wait(waitCtx)
	if err != nil {
		t.Fatalf("device code: %v", err)
	}
	codeState, err := c.SignIn(ctx, otp, "", &nativeauth.SignInOptions{Scopes: todo})
	if err != nil {
		t.Fatal(err)
	}
	otpState, err := codeState.(*nativeauth.CodeRequired).SubmitCode(ctx, e.lastCode(otp))
	if err != nil {
		t.Fatalf("email code: %v", err)
	}
	otpIn := otpState.(*nativeauth.SignedIn)

	accts, err := c.Accounts(ctx, nil)
	want := []string{ann, otp}
	sort.Strings(want)
	if err != nil || len(accts) != 2 || accts[0].Username != want[0] || accts[1].Username != want[1] {
		t.Fatalf("Accounts: %v %v", accts, err)
	}

	_, err = c.AccessToken(ctx, todo, nil)
	if ae := asError(t, err, "account_required", nativeauth.StatusInvalid); len(ae.Accounts) != 2 ||
		!errors.Is(err, nativeauth.ErrAccountRequired) {
		t.Fatalf("AccessToken without an account: %+v", ae)
	}
	if _, err := c.Account(ctx, nil); !errors.Is(err, nativeauth.ErrAccountRequired) {
		t.Fatalf("Account without an account: %v", err)
	}
	if _, err := c.SignOut(ctx, nil); !errors.Is(err, nativeauth.ErrAccountRequired) {
		t.Fatalf("SignOut without an account: %v", err)
	}

	for _, pick := range []struct {
		selection string
		who       *nativeauth.SignedIn
	}{{strings.ToUpper(ann), annIn}, {otpIn.Account.HomeAccountID, otpIn}} {
		tok, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{Account: pick.selection})
		if err != nil || tok.AccessToken != pick.who.Token.AccessToken {
			t.Fatalf("AccessToken for %s: %v %v", pick.selection, tok, err)
		}
		acct, err := c.Account(ctx, &nativeauth.AccountOptions{Account: pick.selection, IncludeIDToken: true})
		if err != nil || acct.HomeAccountID != pick.who.Account.HomeAccountID || acct.IDToken == "" {
			t.Fatalf("Account %s: %v %v", pick.selection, acct, err)
		}
		resp, err := c.CallAPI(ctx, nativeauth.APIRequest{URL: todoURL, Scopes: todo, Account: pick.selection})
		var body map[string]any
		if err != nil || !resp.OK() || resp.Decode(&body) != nil || body["user"] != pick.who.Account.Username {
			t.Fatalf("CallAPI as %s: %v %+v", pick.selection, err, resp)
		}
	}
	if _, err := c.AccessToken(ctx, todo, &nativeauth.TokenOptions{Account: "nobody@contoso.com"}); !errors.Is(err,
		nativeauth.ErrNoAccount) {
		t.Fatalf("an account that is not signed in: %v", err)
	}

	out, err := c.SignOut(ctx, &nativeauth.SignOutOptions{Account: ann})
	if err != nil || !out.WasSignedIn || len(out.Accounts) != 1 || out.Accounts[0] != annIn.Account.HomeAccountID {
		t.Fatalf("SignOut %s: %+v %v", ann, out, err)
	}
	if accts, err := c.Accounts(ctx, nil); err != nil || len(accts) != 1 || accts[0].Username != otp {
		t.Fatalf("Accounts after one sign-out: %v %v", accts, err)
	}
	// One account left: calls without an account mean it.
	if tok, err := c.AccessToken(ctx, todo, nil); err != nil || tok.AccessToken != otpIn.Token.AccessToken {
		t.Fatalf("AccessToken for the one account left: %v %v", tok, err)
	}

	// Sign in again and sign everyone out.
	state, err = c.SignInDeviceCode(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	approveDeviceCode(e, state.UserCode, ann)
	if _, err := state.Wait(waitCtx); err != nil {
		t.Fatal(err)
	}
	out, err = c.SignOut(ctx, &nativeauth.SignOutOptions{All: true})
	if err != nil || !out.WasSignedIn || len(out.Accounts) != 2 {
		t.Fatalf("SignOut all: %+v %v", out, err)
	}
	if accts, err := c.Accounts(ctx, nil); err != nil || len(accts) != 0 {
		t.Fatalf("Accounts after signing out all: %v %v", accts, err)
	}
}
