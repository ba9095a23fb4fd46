package nativeauth

// #include "bridge.h"
import "C"

import (
	"log"
	"runtime"
	"runtime/cgo"
)

// LogLevel is the level of a log line, and the most verbose level a Logger receives (NA_LOG_*).
type LogLevel int

// The log levels.
const (
	LogOff     LogLevel = C.NA_LOG_OFF
	LogError   LogLevel = C.NA_LOG_ERROR
	LogWarning LogLevel = C.NA_LOG_WARNING
	LogInfo    LogLevel = C.NA_LOG_INFO
	LogVerbose LogLevel = C.NA_LOG_VERBOSE
)

var logLevelNames = []string{"off", "error", "warning", "info", "verbose"}

// String is the level's configuration name: "off", "error", "warning", "info" or "verbose".
func (l LogLevel) String() string {
	if l >= 0 && int(l) < len(logLevelNames) {
		return logLevelNames[l]
	}
	return "LogLevel(" + itoa(int(l)) + ")"
}

func parseLogLevel(name string) (LogLevel, bool) {
	for i, n := range logLevelNames {
		if n == name {
			return LogLevel(i), true
		}
	}
	return LogOff, false
}

// Logger receives the library's log lines: level is LogError … LogVerbose, message one line of text, and
// correlationID the request's client-request-id ("" when the line belongs to no request). Lines never contain
// passwords, codes, tokens or usernames.
//
// It is called on the thread of the library call that logs, concurrently from several goroutines' calls, and must
// not block for long. It may call the client's methods (a call that would wait for the logging call itself answers
// ErrReentrantCall), but not SetLogger or SetBrowser (they answer ErrReentrantCall there), nor wait for another
// goroutine that calls them. A panic in it is recovered and the line dropped.
type Logger func(level LogLevel, message, correlationID string)

// BrowserOpener opens url in a browser and returns nil, or an error when it cannot (the sign-in then answers
// ErrBrowserUnavailable). It must return without waiting for the sign-in: the library serves the redirect only
// after it returns. The url is a one-time address on the library's loopback listener that sends the browser on to
// the provider (the authorization URL itself only for a redirect URI without a listener, such as myapp://auth).
// It is called on the thread of the sign-in (or sign-out) call; the rules for a Logger hold for it too. A panic in
// it is recovered and read as an error.
type BrowserOpener func(url string) error

//export goNaLog
func goNaLog(level C.int, message, correlationID *C.char, handle C.uintptr_t) {
	defer func() { _ = recover() }() // a panic must not unwind into the library
	fn := cgo.Handle(handle).Value().(Logger)
	corr := ""
	if correlationID != nil {
		corr = C.GoString(correlationID)
	}
	fn(LogLevel(level), C.GoString(message), corr)
}

//export goNaBrowser
func goNaBrowser(url *C.char, handle C.uintptr_t) (rc C.int) {
	rc = 1
	defer func() {
		if recover() != nil {
			rc = 1
		}
	}()
	if cgo.Handle(handle).Value().(BrowserOpener)(C.GoString(url)) == nil {
		rc = 0
	}
	return rc
}

// SetLogger installs fn as the client's log callback (na_client_set_log_callback) with level, the most verbose
// level it receives; nil removes it. It replaces Config.Logger and Config.LogLevel. Once it returns, the previous
// Logger is never called again (the library waits for invocations of it still running on other threads).
// Called from inside a Logger or BrowserOpener it answers ErrReentrantCall and changes nothing.
func (c *Client) SetLogger(level LogLevel, fn Logger) error {
	if level < LogOff || level > LogVerbose {
		return argError("level", "level: not a log level")
	}
	return c.setCallback(&c.logHandle, fn != nil, func(h uintptr, handle cgo.Handle) C.int {
		return C.go_na_set_log(C.uintptr_t(h), C.int(level), C.uintptr_t(handle))
	}, fn, "SetLogger")
}

// SetBrowser sets the function that opens URLs for the browser flows (na_client_set_browser_callback); nil goes
// back to the library's: Config.BrowserCommand, else $BROWSER, else xdg-open on a desktop (the Windows browser under
// WSL; none over SSH or without a display: ErrBrowserUnavailable, saying why). A sign-in uses the opener set when it
// opens the browser, not the one set when it started. Once SetBrowser returns, the previous opener is never called
// again. Called from inside a Logger or BrowserOpener it answers ErrReentrantCall and changes nothing.
func (c *Client) SetBrowser(fn BrowserOpener) error {
	return c.setCallback(&c.browserHandle, fn != nil, func(h uintptr, handle cgo.Handle) C.int {
		return C.go_na_set_browser(C.uintptr_t(h), C.uintptr_t(handle))
	}, fn, "SetBrowser")
}

// setCallback installs value (when install) through set, and releases the handle of the callback it replaced once
// the library no longer calls it. Setters are serialised by cbMu; no callback takes it (a setter called from a
// callback is refused before), so a setter waiting in the library for a running callback never waits for itself.
func (c *Client) setCallback(slot *cgo.Handle, install bool, set func(uintptr, cgo.Handle) C.int, value any,
	name string) error {
	if C.go_na_in_callback() != 0 {
		return &Error{Status: StatusState, Code: "reentrant_call",
			Message: name + " was called from inside a log or browser callback"}
	}
	c.cbMu.Lock()
	defer c.cbMu.Unlock()
	h := c.handle.Load()
	if h == 0 {
		return closedError()
	}
	var handle cgo.Handle
	if install {
		handle = cgo.NewHandle(value)
	}
	rc := set(h, handle)
	runtime.KeepAlive(c)
	if rc != C.NA_OK {
		if handle != 0 {
			handle.Delete()
		}
		if rc == C.NA_ESTATE {
			return &Error{Status: StatusState, Code: "reentrant_call",
				Message: name + " was called from inside the client's own callback"}
		}
		if c.Closed() {
			return closedError()
		}
		return &Error{Status: Status(rc), Code: "invalid_handle", Message: name + ": the library refused the client"}
	}
	if *slot != 0 {
		slot.Delete()
	}
	*slot = handle
	return nil
}

// releaseCallbacks releases the callbacks' handles after the client was freed (Close, with cbMu held). A callback
// the library still made afterwards (from a call another goroutine had in flight) finds its handle gone: goNaLog
// drops the line, goNaBrowser answers that it cannot open a browser.
func (c *Client) releaseCallbacks() {
	for _, slot := range []*cgo.Handle{&c.logHandle, &c.browserHandle} {
		if *slot != 0 {
			slot.Delete()
			*slot = 0
		}
	}
}

// stdLogger writes lines to the standard library's log package: the Logger of a Config with a LogLevel and no
// Logger.
func stdLogger(level LogLevel, message, correlationID string) {
	if correlationID != "" {
		log.Printf("nativeauth: %s: %s [%s]", level, message, correlationID)
	} else {
		log.Printf("nativeauth: %s: %s", level, message)
	}
}
