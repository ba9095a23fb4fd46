package nativeauth

// #include <nativeauth.h>
import "C"

import (
	"context"
	"encoding/json"
)

// State is a result of a sign-in, sign-up or password reset: *SignedIn, or a state that needs more input and has
// methods to continue (*CodeRequired, *PasswordRequired, *AttributesRequired, *MFARequired,
// *RegistrationRequired, *SignUpCompleted, *PasswordResetCompleted, and for the browser and device-code sign-ins
// *BrowserPending and *DeviceCodeRequired). Switch on its type:
//
//	switch s := state.(type) {
//	case *nativeauth.SignedIn:
//	case *nativeauth.CodeRequired:
//	}
type State interface {
	// Status is the C document's "status": "signed_in", "code_required", "password_required", …
	Status() string
	isState()
}

// Flow is what every state that continues holds: an opaque handle naming library-held state (the server's
// continuation token never leaves the library). A flow is driven by one call at a time and is forgotten after 15
// idle minutes ("flow_expired"). A state's methods may be called from any goroutine.
type Flow struct {
	// FlowType is "sign_in", "sign_up", "reset_password", "interactive" or "device_code".
	FlowType string `json:"flow_type"`
	ID       string `json:"flow"`
	client   *Client
}

func (*Flow) isState() {}

// Cancel forgets the flow. It may be called from another goroutine while a call waits on the flow: that call then
// answers ErrCancelled.
func (f *Flow) Cancel(ctx context.Context) error {
	_, err := f.client.call(ctx, opFlowSubmit, map[string]any{"flow": f.ID, "action": "cancel"})
	return err
}

// submit continues the flow with request; self is the state the caller holds, attached to retryable errors.
// When ctx ends during the call, the call is cancelled (see Client.call): a step whose request was aborted keeps
// its flow (the error carries self to retry on, as after a network error); a cancelled wait ends the flow.
func (f *Flow) submit(ctx context.Context, self State, req map[string]any) (State, error) {
	req["flow"] = f.ID
	raw, err := f.client.call(ctx, opFlowSubmit, req)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Flow == f.ID {
			e.State = self // retryable: the same state continues
		}
		return nil, err
	}
	defer wipe(raw)
	return f.client.state(raw)
}

// SignedIn: the user is signed in; Token is the access token for the sign-in's scopes.
type SignedIn struct {
	// FlowType is the flow that signed the user in: "sign_in", "sign_up", "reset_password", "interactive" or
	// "device_code".
	FlowType string  `json:"flow_type"`
	Account  Account `json:"account"`
	Token    Token   `json:"token"`
}

// Status is "signed_in".
func (*SignedIn) Status() string { return "signed_in" }
func (*SignedIn) isState()       {}

// CodeRequired: a one-time code was sent (SentTo is masked, e.g. "o***a@co**o.com").
type CodeRequired struct {
	Flow
	SentTo         string `json:"sent_to"`
	Channel        string `json:"channel"` // "email"
	CodeLength     int    `json:"code_length"`
	ResendInterval int    `json:"resend_interval,omitempty"`
}

// Status is "code_required".
func (*CodeRequired) Status() string { return "code_required" }

// SubmitCode submits the one-time code. A wrong code answers ErrInvalidCode with this state in Error.State.
func (s *CodeRequired) SubmitCode(ctx context.Context, code string) (State, error) {
	return s.submit(ctx, s, map[string]any{"action": "submit_code", "code": code})
}

// ResendCode sends a new code; the previous one stops working.
func (s *CodeRequired) ResendCode(ctx context.Context) (*CodeRequired, error) {
	next, err := s.submit(ctx, s, map[string]any{"action": "resend_code"})
	if err != nil {
		return nil, err
	}
	return expect[*CodeRequired](next)
}

// PasswordRequired: the sign-in password, the sign-up password, or the new password of a reset.
type PasswordRequired struct{ Flow }

// Status is "password_required".
func (*PasswordRequired) Status() string { return "password_required" }

// SubmitPassword submits the password. A wrong sign-in password answers ErrInvalidCredentials with this state in
// Error.State; a password the policy refuses answers ErrInvalidPassword (Error.Reason says why).
func (s *PasswordRequired) SubmitPassword(ctx context.Context, password string) (State, error) {
	return s.submit(ctx, s, map[string]any{"action": "submit_password", "password": password})
}

// RequiredAttribute is a sign-up attribute the server asks for.
type RequiredAttribute struct {
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
	Regex    string `json:"regex,omitempty"`
}

// AttributesRequired: sign-up attributes are missing.
type AttributesRequired struct {
	Flow
	RequiredAttributes []RequiredAttribute `json:"required_attributes"`
}

// Status is "attributes_required".
func (*AttributesRequired) Status() string { return "attributes_required" }

// SubmitAttributes submits sign-up attributes (values are strings; numbers and booleans are turned into strings).
func (s *AttributesRequired) SubmitAttributes(ctx context.Context, attributes map[string]any) (State, error) {
	return s.submit(ctx, s, map[string]any{"action": "submit_attributes", "attributes": attributes})
}

// AuthMethod is a strong-authentication method (MFA or registration).
type AuthMethod struct {
	ID            string `json:"id"`
	Channel       string `json:"channel,omitempty"`
	LoginHint     string `json:"login_hint,omitempty"`
	ChallengeType string `json:"challenge_type,omitempty"`
}

// MFARequired: a second factor is needed (the client needs Capabilities "mfa_required").
type MFARequired struct {
	Flow
	Methods []AuthMethod `json:"methods"`
}

// Status is "mfa_required".
func (*MFARequired) Status() string { return "mfa_required" }

// RequestChallenge sends a code to method (nil: the first one, named explicitly — the C call without a method
// leaves the choice to the server).
func (s *MFARequired) RequestChallenge(ctx context.Context, method *AuthMethod) (*CodeRequired, error) {
	req := map[string]any{"action": "request_challenge"}
	if method == nil && len(s.Methods) > 0 {
		method = &s.Methods[0]
	}
	if method != nil {
		req["method_id"] = method.ID
	}
	next, err := s.submit(ctx, s, req)
	if err != nil {
		return nil, err
	}
	return expect[*CodeRequired](next)
}

// RegistrationRequired: a strong-authentication method must be registered (Capabilities
// "registration_required").
type RegistrationRequired struct {
	Flow
	Methods []AuthMethod `json:"methods"`
}

// Status is "registration_required".
func (*RegistrationRequired) Status() string { return "registration_required" }

// RegisterMethod registers contact (an email address) with method (nil: the default): the answer is
// *CodeRequired, or *SignedIn when the contact needs no verification.
func (s *RegistrationRequired) RegisterMethod(ctx context.Context, contact string, method *AuthMethod) (State,
	error) {
	req := map[string]any{"action": "register_method", "contact": contact}
	if method != nil {
		req["method_id"] = method.ID
	}
	return s.submit(ctx, s, req)
}

// SignUpCompleted: the account exists. SignIn signs the new user in without asking again; when the server did not
// allow that, ID is empty and the app signs in with Client.SignIn.
type SignUpCompleted struct{ Flow }

// Status is "sign_up_completed".
func (*SignUpCompleted) Status() string { return "sign_up_completed" }

// SignIn signs the new user in (opts: scopes and claims).
func (s *SignUpCompleted) SignIn(ctx context.Context, opts *SignInOptions) (State, error) {
	return s.signIn(ctx, s, opts)
}

// PasswordResetCompleted: the password was reset; SignIn signs the user in with it.
type PasswordResetCompleted struct{ Flow }

// Status is "password_reset_completed".
func (*PasswordResetCompleted) Status() string { return "password_reset_completed" }

// SignIn signs the user in (opts: scopes and claims).
func (s *PasswordResetCompleted) SignIn(ctx context.Context, opts *SignInOptions) (State, error) {
	return s.signIn(ctx, s, opts)
}

func (f *Flow) signIn(ctx context.Context, self State, opts *SignInOptions) (State, error) {
	if f.ID == "" {
		return nil, &Error{Status: StatusState, Code: "flow_invalid",
			Message: "the server allowed no automatic sign-in: call Client.SignIn"}
	}
	req := map[string]any{"action": "sign_in"}
	if opts != nil {
		if opts.Scopes != nil {
			req["scopes"] = opts.Scopes
		}
		if len(opts.Claims) > 0 {
			req["claims"] = opts.Claims
		}
	}
	return f.submit(ctx, self, req)
}

// SignInOptions are the optional members of a sign-in. A nil *SignInOptions means none.
type SignInOptions struct {
	// Scopes: the first access token is for these ("openid profile offline_access" are always added).
	Scopes        []string
	Claims        json.RawMessage
	CorrelationID string
}

// SignIn signs a user in. With a password (email + password accounts) the answer is usually *SignedIn. With
// password "" it is *PasswordRequired (password accounts) or *CodeRequired (email one-time-code accounts). MFA
// and registration answer *MFARequired and *RegistrationRequired.
// Errors: ErrUserNotFound, ErrInvalidCredentials (a wrong password: Error.State is a *PasswordRequired to retry
// with), ErrInvalidUsername, ErrBrowserRequired, ErrInvalidClient, network and server errors.
func (c *Client) SignIn(ctx context.Context, username, password string, opts *SignInOptions) (State, error) {
	req := map[string]any{"username": username}
	if password != "" {
		req["password"] = password
	}
	if opts != nil {
		if opts.Scopes != nil {
			req["scopes"] = opts.Scopes
		}
		if len(opts.Claims) > 0 {
			req["claims"] = opts.Claims
		}
		if opts.CorrelationID != "" {
			req["correlation_id"] = opts.CorrelationID
		}
	}
	raw, err := c.call(ctx, opSignIn, req)
	if err != nil {
		if e, ok := err.(*Error); ok && e.Flow != "" {
			e.State = &PasswordRequired{Flow{FlowType: "sign_in", ID: e.Flow, client: c}}
		}
		return nil, err
	}
	defer wipe(raw)
	return c.state(raw)
}

// SignUpOptions are the optional members of a sign-up. A nil *SignUpOptions means none.
type SignUpOptions struct {
	Password      string         // "": asked for after the email is verified (*PasswordRequired)
	Attributes    map[string]any // e.g. {"displayName": "Ann", "city": "Oslo"}
	CorrelationID string
}

// SignUp starts a sign-up: the answer is *CodeRequired (the email is verified first), then the flow goes on
// through *PasswordRequired, *AttributesRequired and *SignUpCompleted.
// Errors: ErrUserAlreadyExists, ErrInvalidUsername, ErrInvalidPassword, ErrAttributesInvalid, ErrBrowserRequired.
func (c *Client) SignUp(ctx context.Context, username string, opts *SignUpOptions) (State, error) {
	req := map[string]any{"username": username}
	if opts != nil {
		if opts.Password != "" {
			req["password"] = opts.Password
		}
		if opts.Attributes != nil {
			req["attributes"] = opts.Attributes
		}
		if opts.CorrelationID != "" {
			req["correlation_id"] = opts.CorrelationID
		}
	}
	return c.start(ctx, opSignUp, req)
}

// ResetPassword starts a self-service password reset: *CodeRequired, then *PasswordRequired (the new password;
// submitting it waits while the server completes the reset — a context ending cancels that wait), then
// *PasswordResetCompleted. Errors: ErrUserNotFound, ErrUserHasNoPassword, ErrPasswordResetFailed.
func (c *Client) ResetPassword(ctx context.Context, username string) (State, error) {
	return c.start(ctx, opResetPassword, map[string]any{"username": username})
}

func (c *Client) start(ctx context.Context, op string, req map[string]any) (State, error) {
	raw, err := c.call(ctx, op, req)
	if err != nil {
		return nil, err
	}
	defer wipe(raw)
	return c.state(raw)
}

// state decodes a state document.
func (c *Client) state(raw []byte) (State, error) {
	var head struct {
		Status string `json:"status"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return nil, &Error{Status: StatusInternal, Code: "internal", Message: "undecodable state: " + err.Error()}
	}
	var s State
	var flow *Flow
	switch head.Status {
	case "signed_in":
		s = &SignedIn{}
	case "code_required":
		x := &CodeRequired{}
		s, flow = x, &x.Flow
	case "password_required":
		x := &PasswordRequired{}
		s, flow = x, &x.Flow
	case "attributes_required":
		x := &AttributesRequired{}
		s, flow = x, &x.Flow
	case "mfa_required":
		x := &MFARequired{}
		s, flow = x, &x.Flow
	case "registration_required":
		x := &RegistrationRequired{}
		s, flow = x, &x.Flow
	case "sign_up_completed":
		x := &SignUpCompleted{}
		s, flow = x, &x.Flow
	case "password_reset_completed":
		x := &PasswordResetCompleted{}
		s, flow = x, &x.Flow
	case "browser_pending":
		x := &BrowserPending{}
		s, flow = x, &x.Flow
	case "device_code_required":
		x := &DeviceCodeRequired{}
		s, flow = x, &x.Flow
	default:
		return nil, &Error{Status: StatusInternal, Code: "internal",
			Message: "a state this binding does not know: " + head.Status}
	}
	if err := json.Unmarshal(raw, s); err != nil {
		return nil, &Error{Status: StatusInternal, Code: "internal", Message: "undecodable state: " + err.Error()}
	}
	if flow != nil {
		flow.client = c
	}
	return s, nil
}

func expect[T State](s State) (T, error) {
	t, ok := s.(T)
	if !ok {
		var zero T
		return zero, &Error{Status: StatusInternal, Code: "internal",
			Message: "unexpected state from the library: " + s.Status()}
	}
	return t, nil
}
