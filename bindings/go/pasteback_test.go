package nativeauth_test

import (
	"bufio"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The paste-back example (examples/pasteback), built and run end to end: it prints the provider's address, a
// scripted browser "on another device" signs in there and keeps the address it was sent to without loading it, and
// the test pastes that address on the example's stdin — after one that is not this sign-in's redirect, which the
// example lets the user paste again.
func TestExamplePasteBack(t *testing.T) {
	t.Parallel()
	e := startEmulator(t)
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go tool not on PATH")
	}
	bin := filepath.Join(t.TempDir(), "pasteback")
	if out, err := exec.Command(goTool, "build", "-o", bin, "./examples/pasteback").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	user, password := e.user("password")
	apiURL, scopes := e.api("ToDoList")
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "NATIVEAUTH_AUTHORITY="+e.Authority, "NATIVEAUTH_CLIENT_ID="+e.ClientID,
		"API_URL="+apiURL, "API_SCOPE="+scopes[0])
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = cmd.Process.Kill() }()
	out := bufio.NewReader(stdout)
	var transcript strings.Builder
	authorizationURL := ""
	for authorizationURL == "" {
		line, err := out.ReadString('\n')
		transcript.WriteString(line)
		if err != nil {
			t.Fatalf("no address: %v\n%s\n%s", err, transcript.String(), stderr.String())
		}
		if strings.HasPrefix(line, e.Authority+"/oauth2/v2.0/authorize?") {
			authorizationURL = strings.TrimSpace(line)
		}
	}
	browser := newPageBrowser(user, password)
	browser.capture = true
	_ = browser.Open(authorizationURL)
	select {
	case status := <-browser.results:
		if status != 0 {
			t.Fatalf("the scripted browser: %d", status)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the scripted browser did not finish")
	}
	address := browser.captured[0]
	if _, err := io.WriteString(stdin, "http://localhost:1/?code=x&state=y\n"+address+"\n"); err != nil {
		t.Fatal(err)
	}
	rest, _ := io.ReadAll(out)
	transcript.Write(rest)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("%v\n%s\n%s", err, transcript.String(), stderr.String())
	}
	for _, want := range []string{"paste the address again", "signed in: " + user, "the API answered HTTP 200"} {
		if !strings.Contains(transcript.String(), want) {
			t.Errorf("no %q in\n%s", want, transcript.String())
		}
	}
}
