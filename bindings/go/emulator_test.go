package nativeauth_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// emulator is one nativeauth-emulator process on an ephemeral port, as bindings/conftest.py starts it: the
// executable comes from $NATIVEAUTH_EMULATOR (else the source tree's debug build), and everything the tests need
// comes from its ready file.
type emulator struct {
	BaseURL      string `json:"base_url"`
	Authority    string `json:"authority"`
	ClientID     string `json:"client_id"`
	ControlToken string `json:"control_token"`
	APIs         []struct {
		Name   string   `json:"name"`
		URL    string   `json:"url"`
		Scopes []string `json:"scopes"`
	} `json:"apis"`
	Users []struct {
		Email    string `json:"email"`
		Kind     string `json:"kind"`
		Password string `json:"password"`
		MFAEmail string `json:"mfa_email"`
	} `json:"users"`
	// OIDC is the generic OpenID Connect provider under /oidc.
	OIDC struct {
		Authority string `json:"authority"`
		ClientID  string `json:"client_id"`
		APIs      []struct {
			URL    string   `json:"url"`
			Scopes []string `json:"scopes"`
		} `json:"apis"`
	} `json:"oidc"`
	t *testing.T
}

func emulatorPath(t *testing.T) string {
	path := os.Getenv("NATIVEAUTH_EMULATOR")
	if path == "" {
		path = filepath.Join("..", "..", ".build", "debug", "nativeauth-emulator")
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("emulator not built: %s (make emulator, or set NATIVEAUTH_EMULATOR)", path)
	}
	return path
}

// startEmulator starts an emulator for one test and stops it when the test ends.
func startEmulator(t *testing.T) *emulator {
	t.Helper()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready.json")
	var stderr bytes.Buffer
	cmd := exec.Command(emulatorPath(t), "--quiet", "--port", "0", "--ready-file", ready)
	cmd.Stdout = io.Discard
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting the emulator: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	e := &emulator{t: t}
	deadline := time.Now().Add(30 * time.Second)
	for { // readiness, not a fixed delay
		if b, err := os.ReadFile(ready); err == nil && json.Unmarshal(b, e) == nil && e.ControlToken != "" {
			return e
		}
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the emulator exited (%v): %s", err, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the emulator did not become ready")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (e *emulator) user(kind string) (email, password string) {
	for _, u := range e.Users {
		if u.Kind == kind {
			return u.Email, u.Password
		}
	}
	e.t.Fatalf("the emulator has no %q user", kind)
	return "", ""
}

func (e *emulator) api(name string) (apiURL string, scopes []string) {
	for _, a := range e.APIs {
		if a.Name == name {
			return a.URL, a.Scopes[:1]
		}
	}
	e.t.Fatalf("the emulator has no API %q", name)
	return "", nil
}

// control calls the emulator's control API (/_emulator/…) with the ready file's token.
func (e *emulator) control(method, path string, body any, out any) {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, e.BaseURL+"/_emulator/"+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-Emulator-Token", e.ControlToken)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{Proxy: nil}}
	resp, err := client.Do(req)
	if err != nil {
		e.t.Fatalf("emulator control %s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		e.t.Fatalf("emulator control %s %s: HTTP %d %s", method, path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			e.t.Fatalf("emulator control %s %s: %v", method, path, err)
		}
	}
}

// lastCode reads the newest one-time code sent to email from the emulator's outbox.
func (e *emulator) lastCode(email string) string {
	e.t.Helper()
	var box struct {
		Messages []struct {
			Code string `json:"code"`
		} `json:"messages"`
	}
	e.control("GET", "outbox?to="+url.QueryEscape(email), nil, &box)
	if len(box.Messages) == 0 {
		e.t.Fatalf("no code sent to %s", email)
	}
	return box.Messages[len(box.Messages)-1].Code
}
