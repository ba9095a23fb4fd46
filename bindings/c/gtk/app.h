/* app.h — the NativeAuth GTK 4 sample app: shared state of its three parts.
 *   nativeauth-gtk.c  configuration, the window, the button handlers and the library's asynchronous calls
 *   script.c          --script FILE: drives the same handlers line by line, prints JSON lines, takes screenshots
 *   outbox.c          asks the local emulator for the last one-time code it "emailed" (a demo convenience)
 * The library is driven only through na_start and the client's event fd, dispatched on the GTK thread. */
#ifndef NATIVEAUTH_GTK_APP_H
#define NATIVEAUTH_GTK_APP_H

#include <gtk/gtk.h>
#include <jansson.h>
#include <nativeauth.h>

typedef struct {
    const char *authority, *client_id, *ca_bundle;
    const char *api_url[2], *api_scope[2];
    const char *control_url, *control_token; /* the emulator's controls (from its ready document), or NULL */
    const char *script_path, *shot_dir;
    json_t *ready; /* the emulator's ready document, which owns the strings above taken from it */
} Config;

/* The step a form's main button performs next. */
typedef enum { STEP_START, STEP_PASSWORD, STEP_CODE, STEP_ATTRIBUTES, STEP_NEW_PASSWORD } FlowStep;

/* One of the three forms: sign in, sign up, reset password. Rows are shown as the library asks for them. */
typedef struct Form {
    struct App *app;
    const char *name;  /* the stack page name: "sign_in", "sign_up", "reset_password" */
    const char *start; /* the na_start call of its first step */
    GtkWidget *page, *email, *password, *password_row;
    GtkWidget *code_row, *code_hint, *code, *code_fetch;
    GtkWidget *attrs_row, *attrs_grid;
    GPtrArray *attr_entries; /* the attribute entries the library asked for, each with its "attr-name" data */
    GtkWidget *new_pw_row, *new_pw;
    GtkWidget *primary;
    FlowStep step;
    char *flow; /* the library's flow handle while a flow waits for input */
} Form;

typedef struct Script Script;

typedef struct App {
    Config cfg;
    na_client *client;
    guint fd_source;
    na_op *op;           /* the operation in flight (at most one), or NULL */
    const char *op_call; /* its na_start call name */
    gboolean closing;
    int exit_code;
    GMainLoop *loop;
    guint heartbeat;  /* a timer (20 ms) counting main-loop ticks while an operation waits: the loop kept running */
    unsigned ticks;

    GtkWidget *window, *stack, *spinner, *status, *cancel;
    Form forms[3];
    GtkWidget *user_label, *claims_view, *api_label, *api_view;
    GtkWidget *call_api[2], *sign_out;
    char *status_error; /* the error code the status line shows, or NULL */

    Script *script;
} App;

/* nativeauth-gtk.c */
Form *app_form(App *app, const char *name);
Form *app_current_form(App *app); /* the form on screen, or NULL on the signed-in page */
void app_go_to(App *app, const char *page); /* the links' handler: leaves the form on screen, shows page */
void app_fetch_code(App *app, Form *form, gboolean then_submit); /* the "Get code from emulator" handler */
const char *app_page(App *app);
void app_set_status(App *app, const char *text, const char *error_code);
gboolean app_busy(App *app);

/* script.c */
Script *script_new(App *app, const char *path, GError **error);
void script_start(Script *s);
void script_op_started(Script *s);
void script_idle(Script *s); /* the app finished its operation (or a step that needs none) */
void script_free(Script *s);
typedef void (*shot_done_fn)(App *app, const char *path, int width, int height, GError *error, gpointer data);
void screenshot_async(App *app, const char *path, shot_done_fn done, gpointer data);

/* outbox.c: the last code the emulator sent to email; done gets the code (valid during the call) or an error. */
typedef void (*outbox_done_fn)(App *app, const char *code, GError *error, gpointer data);
void outbox_fetch_code(App *app, const char *email, outbox_done_fn done, gpointer data);

/* A string that may have held a secret (a request with a password or code) is wiped before it is freed. */
void free_wiped(char *s);

#endif
