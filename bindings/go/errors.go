package nativeauth

// #include <nativeauth.h>
import "C"

import (
	"encoding/json"
	"errors"
	"sort"
	"unicode/utf8"
)

// Status is a coarse NA_* return code of the C ABI. A Status is also an error value, so that
// errors.Is(err, StatusNetwork) asks "did this fail with NA_ENETWORK?".
type Status int

// The NA_* status codes (include/nativeauth.h; permanent, only ever appended).
const (
	StatusOK          Status = C.NA_OK           // NA_OK
	StatusInvalid     Status = C.NA_EINVAL       // NA_EINVAL: bad argument, request, handle or configuration
	StatusAuth        Status = C.NA_EAUTH        // NA_EAUTH: the user's input was refused
	StatusNotFound    Status = C.NA_ENOTFOUND    // NA_ENOTFOUND: nothing to act on (no_account)
	StatusInteraction Status = C.NA_EINTERACTION // NA_EINTERACTION: the user must act (sign in again, browser)
	StatusNetwork     Status = C.NA_ENETWORK     // NA_ENETWORK: no usable answer (network, timeout, tls)
	StatusServer      Status = C.NA_ESERVER      // NA_ESERVER: the server answered with an error
	StatusState       Status = C.NA_ESTATE       // NA_ESTATE: a flow is expired, finished, busy or cancelled
	StatusNoMemory    Status = C.NA_ENOMEM       // NA_ENOMEM: out of memory
	StatusInternal    Status = C.NA_EINTERNAL    // NA_EINTERNAL: a bug in the library
	StatusStorage     Status = C.NA_ESTORAGE     // NA_ESTORAGE: the persistent token cache cannot be used
)

var statusNames = map[Status]string{
	StatusOK: "NA_OK", StatusInvalid: "NA_EINVAL", StatusAuth: "NA_EAUTH", StatusNotFound: "NA_ENOTFOUND",
	StatusInteraction: "NA_EINTERACTION", StatusNetwork: "NA_ENETWORK", StatusServer: "NA_ESERVER",
	StatusState: "NA_ESTATE", StatusNoMemory: "NA_ENOMEM", StatusInternal: "NA_EINTERNAL",
	StatusStorage: "NA_ESTORAGE",
}

// String returns the C name, e.g. "NA_EAUTH".
func (s Status) String() string {
	if n, ok := statusNames[s]; ok {
		return n
	}
	return "NA_STATUS(" + itoa(int(s)) + ")"
}

// Description is the library's English description of the status (na_status_str), e.g. "invalid argument".
func (s Status) Description() string { return C.GoString(C.na_status_str(C.int(s))) }

// Error makes a Status usable as an errors.Is target.
func (s Status) Error() string { return "nativeauth: " + s.Description() }

// ServerError is what the server said, when an error came from a server answer (the error document's "server").
type ServerError struct {
	Error         string  `json:"error,omitempty"`
	Suberror      string  `json:"suberror,omitempty"`
	ErrorCodes    []int64 `json:"error_codes,omitempty"`
	CorrelationID string  `json:"correlation_id,omitempty"`
	TraceID       string  `json:"trace_id,omitempty"`
	HTTPStatus    int     `json:"http_status,omitempty"`
	RetryAfter    string  `json:"retry_after,omitempty"`
}

// Error is a failure the library reported: its error document ({"v":1,"error":{…}}, docs/errors.md) with the
// NA_* status the call returned. Messages never contain passwords, codes or tokens.
type Error struct {
	Status  Status `json:"-"`
	Code    string `json:"code"`    // the stable code to branch on, e.g. "invalid_credentials"
	Message string `json:"message"` // for people; may change between versions
	// Field names the offending member of an argument error ("scopes[2]", "cache.path").
	Field string `json:"field,omitempty"`
	// Server holds the server's answer when the error came from one.
	Server *ServerError `json:"server,omitempty"`
	// Members some codes carry (see include/nativeauth.h).
	Expected         string    `json:"expected,omitempty"`        // flow_invalid: the action the flow waits for
	Reason           string    `json:"reason,omitempty"`          // invalid_password: the policy's suberror
	Attributes       []string  `json:"attributes,omitempty"`      // attributes_invalid: the invalid names
	RedirectReason   string    `json:"redirect_reason,omitempty"` // browser_required
	Declined         []string  `json:"declined,omitempty"`        // declined_scopes
	Granted          []string  `json:"granted,omitempty"`         // declined_scopes
	RetryAfterS      int       `json:"retry_after_s,omitempty"`   // throttled
	Accounts         []Account `json:"accounts,omitempty"`        // account_required: the signed-in accounts
	LoginHint        string    `json:"login_hint,omitempty"`      // interaction errors
	Claims           string    `json:"claims,omitempty"`          // interaction errors: the claims challenge
	AuthorizationURL string    `json:"authorization_url,omitempty"`
	// Flow is the flow a retryable error left usable (invalid_credentials, invalid_code, …).
	Flow string `json:"flow,omitempty"`
	// State is the state to retry on, for retryable errors of a flow: the *PasswordRequired of a sign-in that
	// answered invalid_credentials, the *CodeRequired that answered invalid_code, …; nil otherwise.
	State State `json:"-"`
	// Raw is the whole error document as the library returned it.
	Raw json.RawMessage `json:"-"`

	cause  error
	family Status // sentinels only: match every error of this status too
}

// Error returns "nativeauth: <code>: <message>".
func (e *Error) Error() string {
	if e.Message == "" {
		return "nativeauth: " + e.Code
	}
	return "nativeauth: " + e.Code + ": " + e.Message
}

// CorrelationID is the server.correlation_id of an error from a server answer ("" otherwise).
func (e *Error) CorrelationID() string {
	if e.Server == nil {
		return ""
	}
	return e.Server.CorrelationID
}

// Unwrap returns what caused the error besides the library: ErrClosed, or a context's error.
func (e *Error) Unwrap() error { return e.cause }

// Is matches a sentinel *Error by code (and, for family sentinels such as ErrInteractionRequired, by status), and
// a Status by status.
func (e *Error) Is(target error) bool {
	switch t := target.(type) {
	case *Error:
		if t.family != 0 && e.Status == t.family {
			return true
		}
		return t.Code != "" && t.Code == e.Code
	case Status:
		return e.Status == t
	}
	return false
}

// sentinels holds every sentinel by code (errortable_test.go checks it against the library's table).
var sentinels = map[string]*Error{}

func sentinel(code string, status Status) *Error {
	e := &Error{Code: code, Status: status, Message: "(sentinel; compare with errors.Is)"}
	if sentinels[code] != nil {
		panic("nativeauth: two sentinels for " + code)
	}
	sentinels[code] = e
	return e
}

func family(code string, status Status) *Error {
	e := sentinel(code, status)
	e.family = status
	return e
}

// ErrClosed: the client was closed. The errors of calls on a closed client match it and ErrInvalidHandle.
var ErrClosed = errors.New("nativeauth: the client is closed")

// Sentinels for errors.Is, one per stable code (docs/errors.md). Each matches the errors with its code;
// ErrInteractionRequired matches every NA_EINTERACTION error (browser_required, refresh_token_expired,
// password_change_required, browser_unavailable too: the user must act), and ErrNetwork every NA_ENETWORK error
// (timeout and tls too).
var (
	ErrInvalidArgument        = sentinel("invalid_argument", StatusInvalid)
	ErrInvalidHandle          = sentinel("invalid_handle", StatusInvalid)
	ErrNotSupported           = sentinel("not_supported", StatusInvalid)
	ErrInvalidScope           = sentinel("invalid_scope", StatusInvalid)
	ErrInvalidClient          = sentinel("invalid_client", StatusInvalid)
	ErrAccountRequired        = sentinel("account_required", StatusInvalid)
	ErrInvalidUsername        = sentinel("invalid_username", StatusAuth)
	ErrUserNotFound           = sentinel("user_not_found", StatusAuth)
	ErrInvalidCredentials     = sentinel("invalid_credentials", StatusAuth)
	ErrInvalidCode            = sentinel("invalid_code", StatusAuth)
	ErrInvalidPassword        = sentinel("invalid_password", StatusAuth)
	ErrUserAlreadyExists      = sentinel("user_already_exists", StatusAuth)
	ErrAttributesInvalid      = sentinel("attributes_invalid", StatusAuth)
	ErrUserHasNoPassword      = sentinel("user_has_no_password", StatusAuth)
	ErrInvalidContact         = sentinel("invalid_contact", StatusAuth)
	ErrContactBlocked         = sentinel("contact_blocked", StatusAuth)
	ErrAuthMethodBlocked      = sentinel("auth_method_blocked", StatusAuth)
	ErrAccessDenied           = sentinel("access_denied", StatusAuth)
	ErrNoAccount              = sentinel("no_account", StatusNotFound)
	ErrInteractionRequired    = family("interaction_required", StatusInteraction)
	ErrBrowserRequired        = sentinel("browser_required", StatusInteraction)
	ErrRefreshTokenExpired    = sentinel("refresh_token_expired", StatusInteraction)
	ErrPasswordChangeRequired = sentinel("password_change_required", StatusInteraction)
	ErrBrowserUnavailable     = sentinel("browser_unavailable", StatusInteraction)
	ErrNetwork                = family("network", StatusNetwork)
	ErrTimeout                = sentinel("timeout", StatusNetwork)
	ErrTLS                    = sentinel("tls", StatusNetwork)
	ErrServer                 = sentinel("server", StatusServer)
	ErrThrottled              = sentinel("throttled", StatusServer)
	ErrDeclinedScopes         = sentinel("declined_scopes", StatusServer)
	ErrPasswordResetFailed    = sentinel("password_reset_failed", StatusServer)
	ErrIDTokenInvalid         = sentinel("id_token_invalid", StatusServer)
	ErrFlowExpired            = sentinel("flow_expired", StatusState)
	ErrFlowInvalid            = sentinel("flow_invalid", StatusState)
	ErrCancelled              = sentinel("cancelled", StatusState)
	ErrReentrantCall          = sentinel("reentrant_call", StatusState)
	ErrOutOfMemory            = sentinel("out_of_memory", StatusNoMemory)
	ErrInternal               = sentinel("internal", StatusInternal)
	ErrCacheUnreadable        = sentinel("cache_unreadable", StatusStorage)
	ErrCacheWriteFailed       = sentinel("cache_write_failed", StatusStorage)
	ErrCacheInsecure          = sentinel("cache_insecure", StatusStorage)
	ErrCacheKeyInvalid        = sentinel("cache_key_invalid", StatusStorage)
	ErrKeyringUnavailable     = sentinel("keyring_unavailable", StatusStorage)
	ErrDPoPUnsupported        = sentinel("dpop_unsupported", StatusInvalid)
)

// errorFrom decodes an error document returned with status rc.
func errorFrom(rc int, doc []byte) *Error {
	e := &Error{Status: Status(rc)}
	var wrapper struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(doc, &wrapper) != nil || len(wrapper.Error) == 0 || json.Unmarshal(wrapper.Error, e) != nil {
		e.Code, e.Message = "internal", "undecodable error document for "+Status(rc).String()
	}
	if e.Code == "" {
		e.Code = "internal"
	}
	e.Status = Status(rc)
	e.Raw = doc
	return e
}

// argError is an invalid_argument the binding finds before calling the library.
func argError(field, message string) *Error {
	return &Error{Status: StatusInvalid, Code: "invalid_argument", Field: field, Message: message}
}

// checkStrings refuses strings that are not UTF-8: encoding/json would silently replace their bytes, and a
// password or code sent altered is worse than one refused.
func checkStrings(path string, v any) error {
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch x := v.(type) {
	case string:
		if !utf8.ValidString(x) {
			return argError(path, path+": not valid UTF-8")
		}
	case []string:
		for i, s := range x {
			if !utf8.ValidString(s) {
				f := path + "[" + itoa(i) + "]"
				return argError(f, f+": not valid UTF-8")
			}
		}
	case map[string]string:
		for _, k := range sortedKeys(x) {
			if err := checkStrings(at(k), k); err != nil {
				return err
			}
			if err := checkStrings(at(k), x[k]); err != nil {
				return err
			}
		}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if err := checkStrings(at(k), k); err != nil {
				return err
			}
			if err := checkStrings(at(k), x[k]); err != nil {
				return err
			}
		}
	case []any:
		for i, item := range x {
			if err := checkStrings(path+"["+itoa(i)+"]", item); err != nil {
				return err
			}
		}
	}
	return nil
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
