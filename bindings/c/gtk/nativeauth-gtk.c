/* nativeauth-gtk.c — Microsoft's native-auth tutorials as a GTK 4 desktop app in C: sign in with email + password or
 * an email one-time code, sign up, reset a password, then see the account and its ID-token claims, get tokens for two
 * APIs and call them, and sign out.
 *
 * The library is driven only through its asynchronous calls: every step is na_start(...) and returns at once; the
 * client's event fd (na_client_event_fd) is watched by GLib's main loop, and na_client_dispatch runs the completions
 * on the GTK thread, where they update the widgets. The window never waits for the network, and a Cancel button
 * (na_op_cancel) ends any wait.
 *
 *   nativeauth-gtk --authority URL --client-id ID --api1-url URL --api1-scope SCOPE --api2-url URL --api2-scope SCOPE
 *   nativeauth-gtk --emulator-ready ready.json        every setting from the local emulator's ready document
 *   nativeauth-gtk ... --script FILE [--screenshots DIR]      scripted (see script.c)
 * Settings may come from the environment instead: NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, API1_URL, API1_SCOPE,
 * API2_URL, API2_SCOPE, NATIVEAUTH_CA_BUNDLE, NATIVEAUTH_EMULATOR_READY (as the C examples, bindings/c/example.h). */
#include "app.h"

#include <glib-unix.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- Small helpers ------------------------------------------------------------------------------------------ */

void free_wiped(char *s) {
    if (!s) return;
    volatile char *p = s;
    while (*p) *p++ = '\0';
    free(s);
}

/* Overwrites a string member of a parsed result (a token) before the document is released. */
static void wipe_member(json_t *obj, const char *key) {
    const char *v = json_string_value(json_object_get(obj, key));
    if (v) {
        volatile char *p = (volatile char *)(uintptr_t)v;
        while (*p) *p++ = '\0';
    }
}

static const char *text_of(GtkWidget *editable) {
    return editable ? gtk_editable_get_text(GTK_EDITABLE(editable)) : "";
}

static void set_view_text(GtkWidget *view, const char *text) {
    gtk_text_buffer_set_text(gtk_text_view_get_buffer(GTK_TEXT_VIEW(view)), text ? text : "", -1);
}

static const char *str_member(json_t *obj, const char *key) {
    return json_string_value(json_object_get(obj, key));
}

/* ---- Status line, busy state --------------------------------------------------------------------------------- */

void app_set_status(App *app, const char *text, const char *error_code) {
    gtk_label_set_text(GTK_LABEL(app->status), text ? text : "");
    g_free(app->status_error);
    app->status_error = g_strdup(error_code);
    if (error_code && strcmp(error_code, "cancelled") != 0)
        gtk_widget_add_css_class(app->status, "error");
    else
        gtk_widget_remove_css_class(app->status, "error");
}

gboolean app_busy(App *app) { return app->op != NULL; }

static gboolean on_heartbeat(gpointer data) {
    ((App *)data)->ticks++;
    return G_SOURCE_CONTINUE;
}

/* While an operation runs: a spinner, what it waits for, and a Cancel button; the forms cannot start another. */
static void set_busy(App *app, const char *waiting_for) {
    gboolean busy = waiting_for != NULL;
    if (busy) app_set_status(app, waiting_for, NULL);
    gtk_spinner_set_spinning(GTK_SPINNER(app->spinner), busy);
    gtk_widget_set_visible(app->spinner, busy);
    gtk_widget_set_visible(app->cancel, busy);
    gtk_widget_set_sensitive(app->cancel, busy);
    if (busy) gtk_widget_grab_focus(app->cancel); /* Enter or Space cancels; the form's fields are insensitive */
    gtk_widget_set_sensitive(app->stack, !busy);
    if (busy && !app->heartbeat) {
        app->heartbeat = g_timeout_add(20, on_heartbeat, app);
    } else if (!busy && app->heartbeat) {
        g_source_remove(app->heartbeat);
        app->heartbeat = 0;
    }
}

/* Shows an error document as "code: message" ("Cancelled" for a cancelled wait) and returns its code. */
static const char *show_error(App *app, int rc, json_t *doc) {
    json_t *err = json_object_get(doc, "error");
    const char *code = str_member(err, "code"), *message = str_member(err, "message");
    char *text;
    if (!code) code = "internal";
    if (strcmp(code, "cancelled") == 0) {
        app_set_status(app, "Cancelled", code);
        return code;
    }
    text = g_strdup_printf("%s: %s", code, message ? message : na_status_str(rc));
    app_set_status(app, text, code);
    g_free(text);
    return code;
}

/* ---- Operations: na_start and its completions ----------------------------------------------------------------- */

typedef enum { OP_FLOW, OP_TOKEN, OP_API, OP_SIGN_OUT, OP_FORGET } OpKind;

typedef struct {
    App *app;
    OpKind kind;
    Form *form;
    int api;
} Pending;

static void on_flow_result(App *app, Form *f, int rc, json_t *doc);
static void on_token_result(App *app, int api, int rc, json_t *doc);
static void on_api_result(App *app, int api, int rc, json_t *doc);
static void on_sign_out_result(App *app, int rc, json_t *doc);

/* Every completion, on the GTK thread (inside na_client_dispatch). */
static void op_done(int rc, const char *result_json, void *user_data) {
    Pending *p = user_data;
    App *app = p->app;
    json_t *doc;
    if (p->kind == OP_FORGET || app->closing) { /* a flow given up, or the app is closing: nothing to show */
        g_free(p);
        return;
    }
    na_op_free(app->op);
    app->op = NULL;
    app->op_call = NULL;
    set_busy(app, NULL);
    doc = json_loads(result_json, 0, NULL);
    if (!doc) doc = json_pack("{s:{s:s,s:s}}", "error", "code", "internal", "message", "unreadable result document");
    switch (p->kind) {
    case OP_FLOW: on_flow_result(app, p->form, rc, doc); break;
    case OP_TOKEN: on_token_result(app, p->api, rc, doc); break;
    case OP_API: on_api_result(app, p->api, rc, doc); break;
    case OP_SIGN_OUT: on_sign_out_result(app, rc, doc); break;
    case OP_FORGET: break;
    }
    json_decref(doc);
    g_free(p);
    if (!app->op && app->script) script_idle(app->script); /* no follow-up step was started: the wait is over */
}

/* Starts call with req (consumed). waiting_for: the status line while it runs. */
static gboolean start_op(App *app, const char *call, json_t *req, OpKind kind, Form *form, int api,
                         const char *waiting_for) {
    char *text = json_dumps(req, JSON_COMPACT);
    Pending *p = g_new0(Pending, 1);
    na_op *op = NULL;
    int rc;
    json_decref(req);
    p->app = app;
    p->kind = kind;
    p->form = form;
    p->api = api;
    rc = text ? na_start(app->client, call, text, op_done, p, kind == OP_FORGET ? NULL : &op) : NA_ENOMEM;
    free_wiped(text); /* it may hold a password or a code; the library copied it */
    if (rc != NA_OK) {
        char *msg = g_strdup_printf("start_failed: na_start(\"%s\") answered %s", call, na_status_str(rc));
        g_free(p);
        if (kind != OP_FORGET) {
            app_set_status(app, msg, "start_failed");
            if (app->script) script_idle(app->script);
        }
        g_free(msg);
        return FALSE;
    }
    if (kind == OP_FORGET) return TRUE;
    app->op = op;
    app->op_call = call;
    set_busy(app, waiting_for);
    if (app->script) script_op_started(app->script);
    return TRUE;
}

/* A flow the app gives up (the user went back, or started again) is cancelled in the library, unwatched. */
static void forget_flow(App *app, const char *flow) {
    if (flow) start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s}", "v", 1, "flow", flow, "action", "cancel"),
                       OP_FORGET, NULL, 0, NULL);
}

/* The scopes a sign-in asks for: API 1's, as in the tutorial (API 2's token then comes from the refresh token). */
static json_t *sign_in_scopes(App *app) {
    return app->cfg.api_scope[0] ? json_pack("[s]", app->cfg.api_scope[0]) : json_array();
}

/* ---- Forms -------------------------------------------------------------------------------------------------- */

static const char *primary_label(Form *f) {
    switch (f->step) {
    case STEP_CODE: return "Verify code";
    case STEP_PASSWORD: return "Continue";
    case STEP_ATTRIBUTES: return "Submit details";
    case STEP_NEW_PASSWORD: return "Set new password";
    case STEP_START: break;
    }
    if (strcmp(f->name, "sign_up") == 0) return "Sign up";
    if (strcmp(f->name, "reset_password") == 0) return "Reset password";
    return "Sign in";
}

static void form_set_step(Form *f, FlowStep step) {
    f->step = step;
    gtk_widget_set_visible(f->code_row, step == STEP_CODE);
    if (f->attrs_row) gtk_widget_set_visible(f->attrs_row, step == STEP_ATTRIBUTES);
    if (f->new_pw_row) gtk_widget_set_visible(f->new_pw_row, step == STEP_NEW_PASSWORD);
    gtk_widget_set_sensitive(f->email, step == STEP_START);
    if (f->password) gtk_widget_set_sensitive(f->password, step == STEP_START || step == STEP_PASSWORD);
    gtk_button_set_label(GTK_BUTTON(f->primary), primary_label(f));
}

static void form_set_flow(Form *f, const char *flow) {
    g_free(f->flow);
    f->flow = g_strdup(flow);
}

static void clear_attributes(Form *f) {
    GtkWidget *child;
    if (!f->attrs_grid) return;
    while ((child = gtk_widget_get_first_child(f->attrs_grid)) != NULL) gtk_grid_remove(GTK_GRID(f->attrs_grid), child);
    g_ptr_array_set_size(f->attr_entries, 0);
}

/* Back to the form's first step; a flow still open in the library is given up. Entries keep the email. */
static void form_reset(App *app, Form *f) {
    forget_flow(app, f->flow);
    form_set_flow(f, NULL);
    gtk_editable_set_text(GTK_EDITABLE(f->code), "");
    if (f->new_pw) gtk_editable_set_text(GTK_EDITABLE(f->new_pw), "");
    clear_attributes(f);
    form_set_step(f, STEP_START);
}

static void clear_secrets(App *app) {
    for (int i = 0; i < 3; i++) {
        Form *f = &app->forms[i];
        if (f->password) gtk_editable_set_text(GTK_EDITABLE(f->password), "");
        if (f->new_pw) gtk_editable_set_text(GTK_EDITABLE(f->new_pw), "");
        gtk_editable_set_text(GTK_EDITABLE(f->code), "");
    }
}

Form *app_form(App *app, const char *name) {
    for (int i = 0; i < 3; i++)
        if (strcmp(app->forms[i].name, name) == 0) return &app->forms[i];
    return NULL;
}

const char *app_page(App *app) { return gtk_stack_get_visible_child_name(GTK_STACK(app->stack)); }

Form *app_current_form(App *app) { return app_form(app, app_page(app)); }

void app_go_to(App *app, const char *page) {
    Form *from = app_current_form(app), *to = app_form(app, page);
    if (app_busy(app)) return;
    if (from) form_reset(app, from);
    if (from && to && from != to && !*text_of(to->email))
        gtk_editable_set_text(GTK_EDITABLE(to->email), text_of(from->email));
    gtk_stack_set_visible_child_name(GTK_STACK(app->stack), page);
    app_set_status(app, "", NULL);
}

/* The main button of a form: the step the library asked for last. */
static void on_primary(GtkButton *button, gpointer data) {
    Form *f = data;
    App *app = f->app;
    json_t *req;
    (void)button;
    if (app_busy(app)) return;
    switch (f->step) {
    case STEP_START:
        req = json_pack("{s:i,s:s}", "v", 1, "username", text_of(f->email));
        if (f->password && *text_of(f->password))
            json_object_set_new(req, "password", json_string(text_of(f->password)));
        if (strcmp(f->name, "sign_in") == 0) {
            json_object_set_new(req, "scopes", sign_in_scopes(app));
            start_op(app, "sign_in", req, OP_FLOW, f, 0, "Signing in…");
        } else if (strcmp(f->name, "sign_up") == 0) {
            start_op(app, "sign_up", req, OP_FLOW, f, 0, "Signing up…");
        } else {
            start_op(app, "reset_password", req, OP_FLOW, f, 0, "Starting the password reset…");
        }
        break;
    case STEP_CODE:
        start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s,s:s}", "v", 1, "flow", f->flow, "action", "submit_code",
                                               "code", text_of(f->code)), OP_FLOW, f, 0, "Checking the code…");
        break;
    case STEP_PASSWORD:
    case STEP_NEW_PASSWORD:
        start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s,s:s}", "v", 1, "flow", f->flow, "action",
                                               "submit_password", "password",
                                               text_of(f->step == STEP_PASSWORD ? f->password : f->new_pw)),
                 OP_FLOW, f, 0, f->step == STEP_PASSWORD ? "Checking the password…" : "Setting the new password…");
        break;
    case STEP_ATTRIBUTES: {
        json_t *attrs = json_object();
        for (guint i = 0; i < f->attr_entries->len; i++) {
            GtkWidget *e = g_ptr_array_index(f->attr_entries, i);
            json_object_set_new(attrs, g_object_get_data(G_OBJECT(e), "attr-name"), json_string(text_of(e)));
        }
        start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s,s:o}", "v", 1, "flow", f->flow, "action",
                                               "submit_attributes", "attributes", attrs),
                 OP_FLOW, f, 0, "Sending your details…");
        break;
    }
    }
}

static void show_attributes(Form *f, json_t *required) {
    size_t i;
    json_t *a;
    clear_attributes(f);
    json_array_foreach(required, i, a) {
        const char *name = str_member(a, "name");
        GtkWidget *label, *entry;
        char *caption;
        if (!name) continue;
        caption = g_strdup_printf("%s%s", name, json_is_true(json_object_get(a, "required")) ? " *" : "");
        label = gtk_label_new(caption);
        g_free(caption);
        gtk_label_set_xalign(GTK_LABEL(label), 0);
        entry = gtk_entry_new();
        gtk_widget_set_hexpand(entry, TRUE);
        g_object_set_data_full(G_OBJECT(entry), "attr-name", g_strdup(name), g_free);
        g_signal_connect_swapped(entry, "activate", G_CALLBACK(gtk_widget_activate), f->primary);
        gtk_grid_attach(GTK_GRID(f->attrs_grid), label, 0, (int)i, 1, 1);
        gtk_grid_attach(GTK_GRID(f->attrs_grid), entry, 1, (int)i, 1, 1);
        g_ptr_array_add(f->attr_entries, entry);
    }
}

static void show_signed_in(App *app, json_t *account) {
    const char *username = str_member(account, "username");
    char *text = g_strdup_printf("Signed in as %s", username);
    char *claims = json_dumps(json_object_get(account, "claims"), JSON_INDENT(2) | JSON_SORT_KEYS);
    gtk_label_set_text(GTK_LABEL(app->user_label), username);
    set_view_text(app->claims_view, claims);
    gtk_label_set_text(GTK_LABEL(app->api_label), "Call an API to see its answer here.");
    set_view_text(app->api_view, "");
    gtk_stack_set_visible_child_name(GTK_STACK(app->stack), "signed_in");
    app_set_status(app, text, NULL);
    free(claims);
    g_free(text);
}

static void on_flow_result(App *app, Form *f, int rc, json_t *doc) {
    const char *status, *flow;
    if (rc != NA_OK) {
        const char *code = show_error(app, rc, doc);
        const char *kept = str_member(json_object_get(doc, "error"), "flow");
        /* invalid_code, invalid_password, … carry the flow: the same step may be tried again. Otherwise (and after
         * Cancel, which gives the attempt up) the form starts over; a flow handed back at the first step (wrong
         * password) is given up too, since the next try starts a new sign-in. */
        if (f->step == STEP_START || !kept || strcmp(code, "cancelled") == 0) {
            if (kept && (!f->flow || strcmp(kept, f->flow) != 0)) forget_flow(app, kept);
            form_reset(app, f);
        }
        return;
    }
    status = str_member(doc, "status");
    flow = str_member(doc, "flow");
    if (!status) status = "";
    form_set_flow(f, flow);
    if (strcmp(status, "signed_in") == 0) {
        wipe_member(json_object_get(doc, "token"), "access_token");
        form_set_flow(f, NULL);
        form_reset(app, f);
        clear_secrets(app);
        show_signed_in(app, json_object_get(doc, "account"));
    } else if (strcmp(status, "code_required") == 0) {
        char *hint = g_strdup_printf("Enter the %d-digit code sent to %s",
                                     (int)json_integer_value(json_object_get(doc, "code_length")),
                                     str_member(doc, "sent_to") ? str_member(doc, "sent_to") : "you");
        gtk_label_set_text(GTK_LABEL(f->code_hint), hint);
        gtk_editable_set_text(GTK_EDITABLE(f->code), "");
        form_set_step(f, STEP_CODE);
        app_set_status(app, hint, NULL);
        gtk_widget_grab_focus(f->code);
        g_free(hint);
    } else if (strcmp(status, "password_required") == 0) {
        gboolean reset = f->new_pw != NULL;
        form_set_step(f, reset ? STEP_NEW_PASSWORD : STEP_PASSWORD);
        app_set_status(app, reset ? "Choose a new password" : "Enter your password", NULL);
        gtk_widget_grab_focus(reset ? f->new_pw : f->password);
    } else if (strcmp(status, "attributes_required") == 0 && f->attrs_grid) {
        show_attributes(f, json_object_get(doc, "required_attributes"));
        form_set_step(f, STEP_ATTRIBUTES);
        app_set_status(app, "Tell us a little about yourself", NULL);
        if (f->attr_entries->len) gtk_widget_grab_focus(g_ptr_array_index(f->attr_entries, 0));
    } else if (strcmp(status, "mfa_required") == 0 && flow) {
        start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s}", "v", 1, "flow", flow, "action", "request_challenge"),
                 OP_FLOW, f, 0, "Sending a code for the second sign-in step…");
    } else if ((strcmp(status, "sign_up_completed") == 0 || strcmp(status, "password_reset_completed") == 0) && flow) {
        start_op(app, "flow_submit", json_pack("{s:i,s:s,s:s,s:o}", "v", 1, "flow", flow, "action", "sign_in",
                                               "scopes", sign_in_scopes(app)),
                 OP_FLOW, f, 0, strcmp(status, "sign_up_completed") == 0 ? "Account created; signing in…"
                                                                         : "Password changed; signing in…");
    } else if (strcmp(status, "sign_up_completed") == 0 || strcmp(status, "password_reset_completed") == 0) {
        form_set_flow(f, NULL);
        app_go_to(app, "sign_in");
        app_set_status(app, strcmp(status, "sign_up_completed") == 0 ? "Account created: please sign in"
                                                                      : "Password changed: please sign in", NULL);
    } else {
        char *text = g_strdup_printf("unsupported_step: the library asks for \"%s\", which this app does not offer",
                                     status);
        form_reset(app, f);
        app_set_status(app, text, "unsupported_step");
        g_free(text);
    }
}

/* ---- The signed-in view: APIs and sign-out --------------------------------------------------------------------- */

static void on_call_api(GtkButton *button, gpointer data) {
    App *app = data;
    int api = GPOINTER_TO_INT(g_object_get_data(G_OBJECT(button), "api"));
    char *waiting;
    if (app_busy(app)) return;
    if (!app->cfg.api_url[api] || !app->cfg.api_scope[api]) {
        app_set_status(app, "invalid_argument: this API has no URL or scope (--api1-url, --api1-scope, …)",
                       "invalid_argument");
        if (app->script) script_idle(app->script);
        return;
    }
    waiting = g_strdup_printf("Getting a token for API %d…", api + 1);
    start_op(app, "get_access_token", json_pack("{s:i,s:[s]}", "v", 1, "scopes", app->cfg.api_scope[api]), OP_TOKEN,
             NULL, api, waiting);
    g_free(waiting);
}

static void show_api_error(App *app, int api, int rc, json_t *doc) {
    const char *code = show_error(app, rc, doc);
    char *text = strcmp(code, "cancelled") == 0 ? g_strdup_printf("API %d: Cancelled", api + 1)
                                                : g_strdup_printf("API %d failed: %s", api + 1,
                                                                  gtk_label_get_text(GTK_LABEL(app->status)));
    gtk_label_set_text(GTK_LABEL(app->api_label), text);
    set_view_text(app->api_view, "");
    g_free(text);
}

static void on_token_result(App *app, int api, int rc, json_t *doc) {
    char *waiting;
    wipe_member(doc, "access_token");
    if (rc != NA_OK) {
        show_api_error(app, api, rc, doc);
        return;
    }
    waiting = g_strdup_printf("Token for API %d %s; calling API %d…", api + 1,
                              json_is_true(json_object_get(doc, "from_cache")) ? "from the cache" : "from the server",
                              api + 1);
    start_op(app, "call_api", json_pack("{s:i,s:s,s:[s]}", "v", 1, "url", app->cfg.api_url[api], "scopes",
                                        app->cfg.api_scope[api]), OP_API, NULL, api, waiting);
    g_free(waiting);
}

static void on_api_result(App *app, int api, int rc, json_t *doc) {
    json_t *body;
    char *text, *shown;
    if (rc != NA_OK) {
        show_api_error(app, api, rc, doc);
        return;
    }
    body = json_object_get(doc, "body");
    text = g_strdup_printf("API %d answered HTTP %d", api + 1, (int)json_integer_value(json_object_get(doc, "status")));
    shown = body ? json_dumps(body, JSON_INDENT(2) | JSON_ENCODE_ANY) : NULL;
    if (json_is_string(body)) { /* a text body is shown as it came */
        free(shown);
        shown = strdup(json_string_value(body));
    }
    gtk_label_set_text(GTK_LABEL(app->api_label), text);
    set_view_text(app->api_view, shown ? shown : "(no body)");
    app_set_status(app, text, NULL);
    free(shown);
    g_free(text);
}

static void on_sign_out(GtkButton *button, gpointer data) {
    App *app = data;
    (void)button;
    if (app_busy(app)) return;
    start_op(app, "sign_out", json_pack("{s:i}", "v", 1), OP_SIGN_OUT, NULL, 0, "Signing out…");
}

static void on_sign_out_result(App *app, int rc, json_t *doc) {
    if (rc != NA_OK) {
        show_error(app, rc, doc);
        return;
    }
    gtk_label_set_text(GTK_LABEL(app->user_label), "");
    set_view_text(app->claims_view, "");
    set_view_text(app->api_view, "");
    gtk_stack_set_visible_child_name(GTK_STACK(app->stack), "sign_in");
    app_set_status(app, "Signed out", NULL);
}

static void on_cancel(GtkButton *button, gpointer data) {
    App *app = data;
    (void)button;
    if (!app->op) return;
    gtk_widget_set_sensitive(app->cancel, FALSE);
    if (na_op_cancel(app->op) == NA_OK)
        app_set_status(app, "Cancelling…", NULL);
    else /* NA_ESTATE: past cancelling; its real result comes */
        app_set_status(app, "Too late to cancel: finishing…", NULL);
}

/* ---- The emulator's outbox (demo convenience) --------------------------------------------------------------- */

typedef struct {
    Form *form;
    gboolean then_submit;
} CodeFetch;

static void on_code_fetched(App *app, const char *code, GError *error, gpointer data) {
    CodeFetch *c = data;
    Form *f = c->form;
    gboolean submit = c->then_submit;
    g_free(c);
    if (app->closing) return;
    if (error) {
        char *text = g_strdup_printf("outbox: %s", error->message);
        app_set_status(app, text, "outbox");
        g_free(text);
        if (submit && app->script) script_idle(app->script);
        return;
    }
    gtk_editable_set_text(GTK_EDITABLE(f->code), code);
    app_set_status(app, "The code from the emulator's outbox is filled in", NULL);
    if (submit) on_primary(GTK_BUTTON(f->primary), f);
}

void app_fetch_code(App *app, Form *form, gboolean then_submit) {
    CodeFetch *c = g_new0(CodeFetch, 1);
    c->form = form;
    c->then_submit = then_submit;
    outbox_fetch_code(app, text_of(form->email), on_code_fetched, c);
}

static void on_code_fetch_clicked(GtkButton *button, gpointer data) {
    Form *f = data;
    (void)button;
    app_fetch_code(f->app, f, FALSE);
}

/* ---- The window --------------------------------------------------------------------------------------------- */

static GtkWidget *caption(const char *text) {
    GtkWidget *l = gtk_label_new(text);
    gtk_label_set_xalign(GTK_LABEL(l), 0);
    gtk_widget_add_css_class(l, "dim-label");
    return l;
}

static GtkWidget *labelled(GtkWidget *box, const char *text, GtkWidget *field) {
    GtkWidget *row = gtk_box_new(GTK_ORIENTATION_VERTICAL, 4);
    gtk_box_append(GTK_BOX(row), caption(text));
    gtk_box_append(GTK_BOX(row), field);
    gtk_box_append(GTK_BOX(box), row);
    return row;
}

static void on_link(GtkButton *button, gpointer data) {
    app_go_to(data, g_object_get_data(G_OBJECT(button), "page"));
}

static GtkWidget *link_button(App *app, const char *label, const char *page) {
    GtkWidget *b = gtk_button_new_with_label(label);
    gtk_widget_add_css_class(b, "flat");
    g_object_set_data(G_OBJECT(b), "page", (gpointer)page);
    g_signal_connect(b, "clicked", G_CALLBACK(on_link), app);
    return b;
}

static GtkWidget *password_entry(Form *f) {
    GtkWidget *e = gtk_password_entry_new();
    gtk_password_entry_set_show_peek_icon(GTK_PASSWORD_ENTRY(e), TRUE);
    g_signal_connect_swapped(e, "activate", G_CALLBACK(gtk_widget_activate), f->primary);
    return e;
}

static void build_form(App *app, Form *f, const char *name, const char *title) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10), *heading, *links, *code_line;
    gboolean sign_in = strcmp(name, "sign_in") == 0, sign_up = strcmp(name, "sign_up") == 0;
    f->app = app;
    f->name = name;
    f->page = box;
    f->attr_entries = g_ptr_array_new();
    f->primary = gtk_button_new_with_label("");
    gtk_widget_add_css_class(f->primary, "suggested-action");
    g_signal_connect(f->primary, "clicked", G_CALLBACK(on_primary), f);

    heading = gtk_label_new(title);
    gtk_widget_add_css_class(heading, "title-2");
    gtk_label_set_xalign(GTK_LABEL(heading), 0);
    gtk_box_append(GTK_BOX(box), heading);

    f->email = gtk_entry_new();
    gtk_entry_set_placeholder_text(GTK_ENTRY(f->email), "name@contoso.com");
    gtk_entry_set_input_purpose(GTK_ENTRY(f->email), GTK_INPUT_PURPOSE_EMAIL);
    g_signal_connect_swapped(f->email, "activate", G_CALLBACK(gtk_widget_activate), f->primary);
    labelled(box, "Email", f->email);

    if (sign_in || sign_up) {
        f->password = password_entry(f);
        f->password_row = labelled(box, sign_in ? "Password (leave empty to get a one-time code by email)"
                                                : "Password", f->password);
    }
    if (sign_up) {
        f->attrs_grid = gtk_grid_new();
        gtk_grid_set_row_spacing(GTK_GRID(f->attrs_grid), 6);
        gtk_grid_set_column_spacing(GTK_GRID(f->attrs_grid), 12);
        f->attrs_row = labelled(box, "Your details", f->attrs_grid);
    }

    f->code = gtk_entry_new();
    gtk_entry_set_input_purpose(GTK_ENTRY(f->code), GTK_INPUT_PURPOSE_DIGITS);
    gtk_widget_set_hexpand(f->code, TRUE);
    g_signal_connect_swapped(f->code, "activate", G_CALLBACK(gtk_widget_activate), f->primary);
    code_line = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    gtk_box_append(GTK_BOX(code_line), f->code);
    if (app->cfg.control_url) { /* only against the local emulator: read its outbox instead of a mailbox */
        f->code_fetch = gtk_button_new_with_label("Get code from emulator");
        g_signal_connect(f->code_fetch, "clicked", G_CALLBACK(on_code_fetch_clicked), f);
        gtk_box_append(GTK_BOX(code_line), f->code_fetch);
    }
    f->code_row = labelled(box, "One-time code", code_line);
    f->code_hint = caption("");
    gtk_box_insert_child_after(GTK_BOX(f->code_row), f->code_hint, gtk_widget_get_first_child(f->code_row));

    if (!sign_in && !sign_up) {
        f->new_pw = password_entry(f);
        f->new_pw_row = labelled(box, "New password", f->new_pw);
    }
    gtk_box_append(GTK_BOX(box), f->primary);

    links = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    if (sign_in) {
        gtk_box_append(GTK_BOX(links), link_button(app, "Create an account", "sign_up"));
        gtk_box_append(GTK_BOX(links), link_button(app, "Forgot password?", "reset_password"));
    } else {
        gtk_box_append(GTK_BOX(links), link_button(app, "Back to sign in", "sign_in"));
    }
    gtk_box_append(GTK_BOX(box), links);
    form_set_step(f, STEP_START);
    gtk_stack_add_named(GTK_STACK(app->stack), box, name);
}

static GtkWidget *text_view(int height) {
    GtkWidget *view = gtk_text_view_new(), *scroll = gtk_scrolled_window_new();
    gtk_text_view_set_editable(GTK_TEXT_VIEW(view), FALSE);
    gtk_text_view_set_monospace(GTK_TEXT_VIEW(view), TRUE);
    gtk_text_view_set_wrap_mode(GTK_TEXT_VIEW(view), GTK_WRAP_WORD_CHAR);
    gtk_scrolled_window_set_child(GTK_SCROLLED_WINDOW(scroll), view);
    gtk_scrolled_window_set_min_content_height(GTK_SCROLLED_WINDOW(scroll), height);
    gtk_widget_set_vexpand(scroll, TRUE);
    return scroll;
}

static void build_signed_in(App *app) {
    GtkWidget *box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 10), *buttons, *scroll;
    gtk_box_append(GTK_BOX(box), caption("Signed in as"));
    app->user_label = gtk_label_new("");
    gtk_widget_add_css_class(app->user_label, "title-2");
    gtk_label_set_xalign(GTK_LABEL(app->user_label), 0);
    gtk_box_append(GTK_BOX(box), app->user_label);
    gtk_box_append(GTK_BOX(box), caption("ID token claims"));
    scroll = text_view(150);
    app->claims_view = gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(scroll));
    gtk_box_append(GTK_BOX(box), scroll);

    buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6);
    for (int i = 0; i < 2; i++) {
        char label[32];
        snprintf(label, sizeof label, "Call API %d", i + 1);
        app->call_api[i] = gtk_button_new_with_label(label);
        g_object_set_data(G_OBJECT(app->call_api[i]), "api", GINT_TO_POINTER(i));
        g_signal_connect(app->call_api[i], "clicked", G_CALLBACK(on_call_api), app);
        gtk_box_append(GTK_BOX(buttons), app->call_api[i]);
    }
    app->sign_out = gtk_button_new_with_label("Sign out");
    gtk_widget_add_css_class(app->sign_out, "destructive-action");
    gtk_widget_set_hexpand(app->sign_out, TRUE);
    gtk_widget_set_halign(app->sign_out, GTK_ALIGN_END);
    g_signal_connect(app->sign_out, "clicked", G_CALLBACK(on_sign_out), app);
    gtk_box_append(GTK_BOX(buttons), app->sign_out);
    gtk_box_append(GTK_BOX(box), buttons);

    app->api_label = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(app->api_label), 0);
    gtk_label_set_wrap(GTK_LABEL(app->api_label), TRUE);
    gtk_box_append(GTK_BOX(box), app->api_label);
    scroll = text_view(150);
    app->api_view = gtk_scrolled_window_get_child(GTK_SCROLLED_WINDOW(scroll));
    gtk_box_append(GTK_BOX(box), scroll);
    gtk_stack_add_named(GTK_STACK(app->stack), box, "signed_in");
}

static gboolean on_close_request(GtkWindow *window, gpointer data) {
    (void)window;
    g_main_loop_quit(((App *)data)->loop);
    return TRUE; /* destroyed after the client is freed */
}

static void build_window(App *app) {
    GtkWidget *outer = gtk_box_new(GTK_ORIENTATION_VERTICAL, 12), *title, *bar;
    app->window = gtk_window_new();
    gtk_window_set_title(GTK_WINDOW(app->window), "NativeAuth — Contoso");
    gtk_window_set_default_size(GTK_WINDOW(app->window), 560, 680);
    g_signal_connect(app->window, "close-request", G_CALLBACK(on_close_request), app);
    gtk_widget_set_margin_start(outer, 18);
    gtk_widget_set_margin_end(outer, 18);
    gtk_widget_set_margin_top(outer, 18);
    gtk_widget_set_margin_bottom(outer, 12);

    title = gtk_label_new(NULL);
    gtk_label_set_markup(GTK_LABEL(title), "<b>Contoso</b> · Microsoft Entra External ID native authentication");
    gtk_label_set_xalign(GTK_LABEL(title), 0);
    gtk_box_append(GTK_BOX(outer), title);

    app->stack = gtk_stack_new();
    gtk_widget_set_vexpand(app->stack, TRUE);
    build_form(app, &app->forms[0], "sign_in", "Sign in");
    build_form(app, &app->forms[1], "sign_up", "Create an account");
    build_form(app, &app->forms[2], "reset_password", "Reset your password");
    build_signed_in(app);
    gtk_stack_set_visible_child_name(GTK_STACK(app->stack), "sign_in");
    gtk_box_append(GTK_BOX(outer), app->stack);

    bar = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8);
    app->spinner = gtk_spinner_new();
    app->status = gtk_label_new("");
    gtk_label_set_xalign(GTK_LABEL(app->status), 0);
    gtk_label_set_wrap(GTK_LABEL(app->status), TRUE);
    gtk_label_set_selectable(GTK_LABEL(app->status), TRUE);
    gtk_widget_set_hexpand(app->status, TRUE);
    app->cancel = gtk_button_new_with_label("Cancel");
    g_signal_connect(app->cancel, "clicked", G_CALLBACK(on_cancel), app);
    gtk_box_append(GTK_BOX(bar), app->spinner);
    gtk_box_append(GTK_BOX(bar), app->status);
    gtk_box_append(GTK_BOX(bar), app->cancel);
    gtk_box_append(GTK_BOX(outer), bar);
    set_busy(app, NULL);
    gtk_window_set_child(GTK_WINDOW(app->window), outer);
}

/* ---- Configuration and the client ------------------------------------------------------------------------------ */

static const char *setting(int argc, char **argv, const char *flag, const char *env) {
    const char *v;
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], flag) == 0) return argv[i + 1];
    v = getenv(env);
    return (v && *v) ? v : NULL;
}

static const char *or_default(const char *v, const char *fallback) { return v ? v : fallback; }

/* Flags, else the environment, else the emulator's ready document (its first two APIs, their first scopes). */
static int read_config(Config *c, int argc, char **argv) {
    const char *ready_path = setting(argc, argv, "--emulator-ready", "NATIVEAUTH_EMULATOR_READY");
    json_t *r = NULL, *apis = NULL;
    if (ready_path) {
        json_error_t e;
        r = c->ready = json_load_file(ready_path, 0, &e);
        if (!r) {
            fprintf(stderr, "--emulator-ready %s: %s\n", ready_path, e.text);
            return 0;
        }
        apis = json_object_get(r, "apis");
        c->control_url = str_member(r, "controls");
        c->control_token = str_member(r, "control_token");
    }
    c->authority = or_default(setting(argc, argv, "--authority", "NATIVEAUTH_AUTHORITY"), str_member(r, "authority"));
    c->client_id = or_default(setting(argc, argv, "--client-id", "NATIVEAUTH_CLIENT_ID"), str_member(r, "client_id"));
    c->ca_bundle = setting(argc, argv, "--ca-bundle", "NATIVEAUTH_CA_BUNDLE");
    for (int i = 0; i < 2; i++) {
        char flag[32], env[32];
        json_t *api = json_array_get(apis, (size_t)i);
        snprintf(flag, sizeof flag, "--api%d-url", i + 1);
        snprintf(env, sizeof env, "API%d_URL", i + 1);
        c->api_url[i] = or_default(setting(argc, argv, flag, env), str_member(api, "url"));
        snprintf(flag, sizeof flag, "--api%d-scope", i + 1);
        snprintf(env, sizeof env, "API%d_SCOPE", i + 1);
        c->api_scope[i] = or_default(setting(argc, argv, flag, env),
                                     json_string_value(json_array_get(json_object_get(api, "scopes"), 0)));
    }
    c->script_path = setting(argc, argv, "--script", "NATIVEAUTH_GTK_SCRIPT");
    c->shot_dir = or_default(setting(argc, argv, "--screenshots", "NATIVEAUTH_GTK_SCREENSHOTS"), "build/gtk");
    if (!c->authority || !c->client_id) {
        fprintf(stderr, "missing setting: --authority and --client-id (or NATIVEAUTH_AUTHORITY, NATIVEAUTH_CLIENT_ID, "
                        "or --emulator-ready FILE)\n");
        return 0;
    }
    return 1;
}

static na_client *open_client(const Config *c) {
    json_t *config = json_pack("{s:i,s:s,s:s,s:[s,s],s:[s]}", "v", 1, "authority", c->authority, "client_id",
                               c->client_id, "challenge_types", "password", "oob", "capabilities", "mfa_required");
    char *text, *err = NULL;
    na_client *client = NULL;
    int rc;
    if (c->ca_bundle) json_object_set_new(config, "ca_bundle", json_string(c->ca_bundle));
    text = json_dumps(config, JSON_COMPACT);
    json_decref(config);
    rc = na_client_new(text, &client, &err); /* no network I/O: fine on the GTK thread */
    free(text);
    if (rc != NA_OK) fprintf(stderr, "na_client_new failed (%s): %s\n", na_status_str(rc), err ? err : "");
    na_string_free(err);
    return client;
}

static gboolean on_event_fd(gint fd, GIOCondition condition, gpointer data) {
    App *app = data;
    (void)fd;
    (void)condition;
    na_client_dispatch(app->client); /* runs the waiting completions (op_done) here, on the GTK thread */
    return G_SOURCE_CONTINUE;
}

static gboolean on_quit_signal(gpointer data) { /* Ctrl-C in a terminal: leave as the window's close button does */
    g_main_loop_quit(((App *)data)->loop);
    return G_SOURCE_CONTINUE;
}

static gboolean start_script(gpointer data) {
    script_start(((App *)data)->script);
    return G_SOURCE_REMOVE;
}

int main(int argc, char **argv) {
    App app;
    GError *error = NULL;
    int fd = -1;
    memset(&app, 0, sizeof app);
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            printf("usage: %s [--emulator-ready FILE] [--authority URL --client-id ID] [--api1-url URL --api1-scope S]"
                   "\n          [--api2-url URL --api2-scope S] [--ca-bundle FILE] [--script FILE [--screenshots DIR]]"
                   "\n", argv[0]);
            return 0;
        }
    if (na_abi_version() != NA_ABI_VERSION) {
        fprintf(stderr, "libnativeauth ABI %d, built for %d\n", na_abi_version(), NA_ABI_VERSION);
        return 1;
    }
    if (!read_config(&app.cfg, argc, argv)) return 2;
    if (!gtk_init_check()) {
        fprintf(stderr, "cannot open a display (set DISPLAY or WAYLAND_DISPLAY; tests use Xvfb)\n");
        return 1;
    }
    app.client = open_client(&app.cfg);
    if (!app.client) return 1;
    if (na_client_event_fd(app.client, &fd) != NA_OK) {
        fprintf(stderr, "na_client_event_fd failed\n");
        na_client_free(app.client);
        return 1;
    }
    app.fd_source = g_unix_fd_add(fd, G_IO_IN, on_event_fd, &app);
    app.loop = g_main_loop_new(NULL, FALSE);
    g_unix_signal_add(SIGINT, on_quit_signal, &app);
    g_unix_signal_add(SIGTERM, on_quit_signal, &app);
    build_window(&app);
    if (app.cfg.script_path) {
        app.script = script_new(&app, app.cfg.script_path, &error);
        if (!app.script) {
            fprintf(stderr, "--script: %s\n", error->message);
            g_error_free(error);
            app.exit_code = 2;
        }
    }
    gtk_window_present(GTK_WINDOW(app.window));
    if (app.script) g_idle_add(start_script, &app);
    if (app.exit_code == 0) g_main_loop_run(app.loop);

    /* Leaving: the operation in flight is cancelled, every completion still due runs (and only frees its context),
     * then the client is freed. */
    app.closing = TRUE;
    if (app.op) {
        na_op_cancel(app.op);
        na_op_free(app.op);
        app.op = NULL;
    }
    if (app.heartbeat) g_source_remove(app.heartbeat);
    g_source_remove(app.fd_source);
    na_client_free(app.client);
    if (app.script) script_free(app.script);
    for (int i = 0; i < 3; i++) {
        g_free(app.forms[i].flow);
        g_ptr_array_unref(app.forms[i].attr_entries);
    }
    g_free(app.status_error);
    gtk_window_destroy(GTK_WINDOW(app.window));
    g_main_loop_unref(app.loop);
    json_decref(app.cfg.ready);
    return app.exit_code;
}
