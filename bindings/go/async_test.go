package nativeauth_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"
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
