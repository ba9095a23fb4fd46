package nativeauth

// #include <stdlib.h>
// #include <string.h>
// #include "bridge.h"
import "C"

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Challenge is one challenge of a WWW-Authenticate header.
type Challenge struct {
	// Scheme is the auth-scheme as sent, e.g. "Bearer"; schemes are case-insensitive: compare with IsScheme.
	Scheme string `json:"scheme"`
	// Params are the auth-params: names in lower case, values unquoted; a name sent twice keeps its first value.
	Params map[string]string `json:"params"`
	// Token68 is the other form of a challenge (Negotiate abc==), as sent; "" for the parameter form.
	Token68 string `json:"token68,omitempty"`
	// Claims is the "claims" parameter decoded to JSON text (from base64 or base64url, or sent as text) when it is
	// a JSON object; "" otherwise (its raw value stays in Params).
	Claims string `json:"claims,omitempty"`
}

// IsScheme reports whether the challenge's scheme is name, in any case.
func (c Challenge) IsScheme(name string) bool { return strings.EqualFold(c.Scheme, name) }

// WWWAuthenticate is a parsed WWW-Authenticate header (na_parse_www_authenticate's document).
type WWWAuthenticate struct {
	Challenges []Challenge `json:"challenges"`
	// Claims is the claims challenge — that of the first Bearer challenge whose error is insufficient_claims — as
	// JSON text, "" when there is none. Pass it on as json.RawMessage(Claims): TokenOptions.Claims or
	// InteractiveOptions.Claims.
	Claims string `json:"claims,omitempty"`
}

// ParseWWWAuthenticate parses a WWW-Authenticate header (the field's value; several fields joined with ", "): for
// code that calls APIs itself and must act on a claims challenge (Conditional Access, Continuous Access
// Evaluation). No client, no I/O. Errors: ErrInvalidArgument (not UTF-8, a NUL, over 64 KiB, or not the header's
// grammar: the message names the offset, never the text).
func ParseWWWAuthenticate(header string) (*WWWAuthenticate, error) {
	if !utf8.ValidString(header) {
		return nil, argError("header", "header: not valid UTF-8")
	}
	if strings.IndexByte(header, 0) >= 0 { // C would read the header only up to it
		return nil, argError("header", "header: contains a NUL character")
	}
	ch := C.CString(header)
	var out *C.char
	rc := C.na_parse_www_authenticate(ch, &out)
	C.free(unsafe.Pointer(ch))
	doc := take(out)
	if rc != C.NA_OK {
		return nil, errorFrom(int(rc), doc)
	}
	var w WWWAuthenticate
	if err := json.Unmarshal(doc, &w); err != nil {
		return nil, &Error{Status: StatusInternal, Code: "internal", Message: "undecodable result: " + err.Error()}
	}
	if w.Challenges == nil {
		w.Challenges = []Challenge{}
	}
	return &w, nil
}
