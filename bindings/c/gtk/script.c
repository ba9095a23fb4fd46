/* script.c — --script FILE: a line-based script that fills the window's fields and presses its buttons (the very
 * handlers a person's clicks run), one step at a time. A step that starts an operation ends when the app is idle
 * again — its completion came through the event fd and the main loop, never after a sleep. After every step one
 * JSON line on stdout says what the widgets show; secrets typed into the window are never printed.
 *
 *   # comment                         blank lines and comments are skipped
 *   sign_in EMAIL [PASSWORD]          the sign-in form (no password: an email one-time code)
 *   sign_up EMAIL PASSWORD            the sign-up form
 *   reset_password EMAIL              the password-reset form
 *   submit_code CODE                  the code field of the form on screen, then its button
 *   code_from_emulator                "Get code from emulator" (the emulator's outbox), then the form's button
 *   password PASSWORD                 the (new) password the form asks for, then its button
 *   attribute NAME VALUE              fills an attribute field the sign-up asked for
 *   submit_attributes                 the sign-up form's button
 *   page sign_in|sign_up|reset_password     the form's link
 *   call_api 1|2, sign_out            the signed-in view's buttons
 *   screenshot NAME                   the window as DIR/NAME.png (--screenshots DIR, default build/gtk)
 *   expect_error CODE                 the next step must end showing that error (else the script fails)
 *   cancel_next_wait MS [NAME]        MS after the next step's operation starts, with it still running: record what
 *                                     the window shows (and screenshot NAME), then press Cancel; the step must end
 *                                     "Cancelled"
 *   timeout SECONDS                   the longest a step may take (default 60)
 * The script stops at the first step that fails ({"ok":false,"failure":…}, exit 1); after the last step it prints
 * {"done":true,…} and the app exits 0. */
#include "app.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct Script {
    App *app;
    char **lines;
    guint next, line_no;
    char *current;       /* the step as printed: its secrets masked */
    json_t *extra;       /* what the step adds to its JSON line */
    gboolean waiting;    /* the step waits for the app to become idle */
    gboolean acted;      /* the step pressed a button: its outcome is the status line's */
    char *expect_error;  /* armed by expect_error */
    char *armed_error;   /* the current step's expected error */
    int cancel_ms;       /* armed by cancel_next_wait */
    char *cancel_shot;
    guint cancel_timer, watchdog, timeout_s;
    gint64 started;
    int steps;
    gboolean stopped;
    gboolean wait_shot_pending; /* cancel_next_wait's screenshot is being taken */
};

static void run_next(Script *s);

static void emit(json_t *line) {
    char *text = json_dumps(line, JSON_COMPACT);
    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(text);
    json_decref(line);
}

static char *view_text(GtkWidget *view) {
    GtkTextBuffer *b = gtk_text_view_get_buffer(GTK_TEXT_VIEW(view));
    GtkTextIter start, end;
    gtk_text_buffer_get_bounds(b, &start, &end);
    return gtk_text_buffer_get_text(b, &start, &end, FALSE);
}

static const char *label_text(GtkWidget *label) { return gtk_label_get_text(GTK_LABEL(label)); }

/* What the window shows: the page, the status line, and the page's own widgets. */
static json_t *describe(App *app) {
    json_t *d = json_pack("{s:s,s:s,s:o,s:b}", "page", app_page(app), "status", label_text(app->status), "error",
                          app->status_error ? json_string(app->status_error) : json_null(), "busy", app_busy(app));
    Form *f = app_current_form(app);
    if (f) {
        json_t *fields = json_array();
        json_array_append_new(fields, json_string("email"));
        if (f->password_row && gtk_widget_get_visible(f->password_row))
            json_array_append_new(fields, json_string("password"));
        if (gtk_widget_get_visible(f->code_row)) {
            json_array_append_new(fields, json_string("code"));
            json_object_set_new(d, "code_hint", json_string(label_text(f->code_hint)));
        }
        if (f->attrs_row && gtk_widget_get_visible(f->attrs_row))
            for (guint i = 0; i < f->attr_entries->len; i++)
                json_array_append_new(fields, json_string(g_object_get_data(
                                                  G_OBJECT(g_ptr_array_index(f->attr_entries, i)), "attr-name")));
        if (f->new_pw_row && gtk_widget_get_visible(f->new_pw_row))
            json_array_append_new(fields, json_string("new_password"));
        json_object_set_new(d, "fields", fields);
        json_object_set_new(d, "button", json_string(gtk_button_get_label(GTK_BUTTON(f->primary))));
    } else {
        char *claims = view_text(app->claims_view), *body = view_text(app->api_view);
        json_t *parsed = json_loads(claims, 0, NULL);
        json_object_set_new(d, "username", json_string(label_text(app->user_label)));
        json_object_set_new(d, "claims", parsed ? parsed : json_string(claims));
        json_object_set_new(d, "api", json_string(label_text(app->api_label)));
        json_object_set_new(d, "api_body", json_string(body));
        g_free(claims);
        g_free(body);
    }
    return d;
}

static gboolean quit_loop(gpointer data) {
    g_main_loop_quit(((App *)data)->loop);
    return G_SOURCE_REMOVE;
}

static void stop(Script *s, int exit_code) {
    s->app->exit_code = exit_code;
    s->stopped = TRUE; /* nothing more runs */
    g_idle_add(quit_loop, s->app);
}

static gboolean next_idle(gpointer data) {
    run_next(data);
    return G_SOURCE_REMOVE;
}

/* The step is over: one JSON line, then the next step from the main loop (or the end). */
static void step_done(Script *s, const char *failure) {
    App *app = s->app;
    json_t *line;
    const char *error = app->status_error;
    if (!s->current) return;
    line = describe(app);
    s->wait_shot_pending = FALSE;
    if (s->watchdog) g_source_remove(s->watchdog);
    if (s->cancel_timer) g_source_remove(s->cancel_timer);
    s->watchdog = s->cancel_timer = 0;
    s->waiting = FALSE;
    if (!failure && s->acted) {
        if (s->armed_error && g_strcmp0(error, s->armed_error) != 0)
            failure = "the step did not end with the expected error";
        else if (!s->armed_error && error)
            failure = "the step ended with an error";
    }
    json_object_set_new(line, "step", json_string(s->current));
    json_object_set_new(line, "ok", json_boolean(!failure));
    if (failure) json_object_set_new(line, "failure", json_string(failure));
    json_object_set_new(line, "elapsed_ms", json_integer((g_get_monotonic_time() - s->started) / 1000));
    if (s->acted) json_object_set_new(line, "main_loop_ticks", json_integer(app->ticks));
    json_object_update(line, s->extra);
    json_decref(s->extra);
    s->extra = NULL;
    g_clear_pointer(&s->current, g_free);
    g_clear_pointer(&s->armed_error, g_free);
    emit(line);
    s->steps++;
    if (failure) {
        stop(s, 1);
        return;
    }
    g_idle_add(next_idle, s);
}

void script_idle(Script *s) {
    if (s->waiting && !app_busy(s->app)) step_done(s, NULL);
}

static gboolean on_watchdog(gpointer data) {
    Script *s = data;
    s->watchdog = 0;
    step_done(s, "the step timed out");
    return G_SOURCE_REMOVE;
}

/* ---- Cancel during a wait ------------------------------------------------------------------------------------ */

static void press_cancel(Script *s) {
    App *app = s->app;
    json_t *during = describe(app);
    json_object_set_new(during, "cancel_visible", json_boolean(gtk_widget_get_mapped(app->cancel)));
    json_object_set_new(during, "cancel_sensitive", json_boolean(gtk_widget_is_sensitive(app->cancel)));
    json_object_set_new(during, "spinning", json_boolean(gtk_spinner_get_spinning(GTK_SPINNER(app->spinner))));
    json_object_set_new(during, "operation", json_string(app->op_call ? app->op_call : ""));
    json_object_set_new(during, "main_loop_ticks", json_integer(app->ticks)); /* the loop ran during the wait */
    json_object_set_new(during, "waited_ms", json_integer((g_get_monotonic_time() - s->started) / 1000));
    json_object_set_new(s->extra, "during_wait", during);
    g_signal_emit_by_name(app->cancel, "clicked");
}

static void on_wait_shot(App *app, const char *path, int width, int height, GError *error, gpointer data) {
    Script *s = data;
    (void)width;
    (void)height;
    if (!s->wait_shot_pending) return; /* the step ended meanwhile */
    s->wait_shot_pending = FALSE;
    if (error) {
        step_done(s, error->message);
        return;
    }
    json_object_set_new(s->extra, "wait_screenshot", json_string(path));
    if (app_busy(app))
        press_cancel(s);
    else
        step_done(s, "the operation ended before Cancel was pressed");
}

static char *shot_path(Script *s, const char *name) {
    char *file = g_strdup_printf("%s.png", name), *path = g_build_filename(s->app->cfg.shot_dir, file, NULL);
    g_free(file);
    return path;
}

static gboolean on_cancel_timer(gpointer data) {
    Script *s = data;
    s->cancel_timer = 0;
    if (!app_busy(s->app)) return G_SOURCE_REMOVE; /* it already ended: step_done says so */
    if (s->cancel_shot) {
        char *path = shot_path(s, s->cancel_shot);
        s->wait_shot_pending = TRUE;
        screenshot_async(s->app, path, on_wait_shot, s);
        g_free(path);
    } else {
        press_cancel(s);
    }
    return G_SOURCE_REMOVE;
}

void script_op_started(Script *s) {
    if (s->waiting && s->cancel_ms >= 0 && !s->cancel_timer) {
        s->cancel_timer = g_timeout_add((guint)s->cancel_ms, on_cancel_timer, s);
        s->cancel_ms = -1;
    }
}

/* ---- Screenshots (in-process: the window's own rendering) ----------------------------------------------------- */

typedef struct {
    App *app;
    char *path;
    shot_done_fn done;
    gpointer data;
    gulong handler;
    int attempts;
} Shot;

static void shot_free(Shot *sh) {
    g_free(sh->path);
    g_free(sh);
}

/* The widget paintable holds the window's last rendered frame (nothing once something asked for a redraw), so the
 * picture is taken right after a frame was painted; if a redraw came first, at the next frame. */
static gboolean take_shot(Shot *sh) {
    GtkWidget *w = sh->app->window;
    int width = gtk_widget_get_width(w), height = gtk_widget_get_height(w);
    GdkPaintable *paintable = gtk_widget_paintable_new(w);
    GtkSnapshot *snapshot = gtk_snapshot_new();
    GskRenderNode *node;
    GdkTexture *texture = NULL;
    GError *error = NULL;
    char *dir = g_path_get_dirname(sh->path);
    gdk_paintable_snapshot(paintable, snapshot, width, height);
    node = gtk_snapshot_free_to_node(snapshot);
    g_object_unref(paintable);
    if (!node && ++sh->attempts < 20) {
        g_free(dir);
        return FALSE;
    }
    if (node)
        texture = gsk_renderer_render_texture(gtk_native_get_renderer(GTK_NATIVE(w)), node,
                                              &GRAPHENE_RECT_INIT(0, 0, (float)width, (float)height));
    if (g_mkdir_with_parents(dir, 0755) != 0)
        error = g_error_new(G_FILE_ERROR, g_file_error_from_errno(errno), "cannot create %s", dir);
    else if (!texture)
        error = g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, "the window rendered nothing");
    else if (!gdk_texture_save_to_png(texture, sh->path))
        error = g_error_new(G_IO_ERROR, G_IO_ERROR_FAILED, "cannot write %s", sh->path);
    sh->done(sh->app, sh->path, width, height, error, sh->data);
    if (error) g_error_free(error);
    if (texture) g_object_unref(texture);
    if (node) gsk_render_node_unref(node);
    g_free(dir);
    return TRUE;
}

static void on_after_paint(GdkFrameClock *clock, gpointer data) {
    Shot *sh = data;
    if (!take_shot(sh)) {
        gtk_widget_queue_draw(sh->app->window);
        return;
    }
    g_signal_handler_disconnect(clock, sh->handler);
    shot_free(sh);
}

/* The window has no frame clock before it is realized: asked again a little later (the step's timeout bounds it). */
static gboolean shot_later(gpointer data) {
    Shot *sh = data;
    screenshot_async(sh->app, sh->path, sh->done, sh->data);
    shot_free(sh);
    return G_SOURCE_REMOVE;
}

void screenshot_async(App *app, const char *path, shot_done_fn done, gpointer data) {
    Shot *sh = g_new0(Shot, 1);
    GdkFrameClock *clock = gtk_widget_get_frame_clock(app->window);
    sh->app = app;
    sh->path = g_strdup(path);
    sh->done = done;
    sh->data = data;
    if (!clock) {
        g_timeout_add(50, shot_later, sh);
        return;
    }
    /* after the next frame is painted, so the picture shows the window as it now is */
    sh->handler = g_signal_connect(clock, "after-paint", G_CALLBACK(on_after_paint), sh);
    gtk_widget_queue_draw(app->window);
}

static void on_step_shot(App *app, const char *path, int width, int height, GError *error, gpointer data) {
    Script *s = data;
    (void)app;
    if (!error) json_object_set_new(s->extra, "file", json_pack("{s:s,s:i,s:i}", "path", path, "width", width,
                                                                 "height", height));
    step_done(s, error ? error->message : NULL);
}

/* ---- Steps -------------------------------------------------------------------------------------------------- */

static void set_text(GtkWidget *editable, const char *text) {
    if (editable) gtk_editable_set_text(GTK_EDITABLE(editable), text ? text : "");
}

/* Presses a button and waits for the app to be idle again (at once when the press started nothing). */
static void press(Script *s, GtkWidget *button) {
    s->waiting = TRUE;
    s->acted = TRUE;
    g_signal_emit_by_name(button, "clicked"); /* what a click emits: the same handler */
    if (s->waiting && !app_busy(s->app)) step_done(s, NULL);
}

static Form *form_on_screen(Script *s, const char *want) {
    Form *f = app_current_form(s->app);
    if (want && (!f || strcmp(f->name, want) != 0)) {
        if (!f) return NULL; /* the signed-in view has no links to the forms */
        app_go_to(s->app, want);
        f = app_current_form(s->app);
    }
    return f;
}

/* How many leading words of a command may be printed; the rest are secrets. */
static int public_words(const char *cmd) {
    if (strcmp(cmd, "sign_in") == 0 || strcmp(cmd, "sign_up") == 0) return 2;
    if (strcmp(cmd, "submit_code") == 0 || strcmp(cmd, "password") == 0) return 1;
    return 1000;
}

static char *masked_step(char **argv) {
    GString *out = g_string_new(NULL);
    int keep = public_words(argv[0]);
    for (int i = 0; argv[i]; i++) {
        if (i) g_string_append_c(out, ' ');
        g_string_append(out, i < keep ? argv[i] : "****");
    }
    return g_string_free(out, FALSE);
}

static const char *run_step(Script *s, int argc, char **argv) {
    App *app = s->app;
    const char *cmd = argv[0];
    Form *f;
    if (strcmp(cmd, "sign_in") == 0 && (argc == 2 || argc == 3)) {
        if (!(f = form_on_screen(s, "sign_in"))) return "sign_in: not on a form (sign_out first)";
        set_text(f->email, argv[1]);
        set_text(f->password, argc == 3 ? argv[2] : "");
        press(s, f->primary);
    } else if (strcmp(cmd, "sign_up") == 0 && argc == 3) {
        if (!(f = form_on_screen(s, "sign_up"))) return "sign_up: not on a form (sign_out first)";
        set_text(f->email, argv[1]);
        set_text(f->password, argv[2]);
        press(s, f->primary);
    } else if (strcmp(cmd, "reset_password") == 0 && argc == 2) {
        if (!(f = form_on_screen(s, "reset_password"))) return "reset_password: not on a form (sign_out first)";
        set_text(f->email, argv[1]);
        press(s, f->primary);
    } else if (strcmp(cmd, "submit_code") == 0 && argc == 2) {
        if (!(f = form_on_screen(s, NULL)) || f->step != STEP_CODE) return "submit_code: no code is asked for";
        set_text(f->code, argv[1]);
        press(s, f->primary);
    } else if (strcmp(cmd, "code_from_emulator") == 0 && argc == 1) {
        if (!(f = form_on_screen(s, NULL)) || f->step != STEP_CODE) return "code_from_emulator: no code is asked for";
        s->waiting = s->acted = TRUE;
        app_fetch_code(app, f, TRUE); /* ends through script_idle: the code's check, or the fetch's failure */
    } else if (strcmp(cmd, "password") == 0 && argc == 2) {
        if (!(f = form_on_screen(s, NULL)) || (f->step != STEP_PASSWORD && f->step != STEP_NEW_PASSWORD))
            return "password: no password is asked for";
        set_text(f->step == STEP_PASSWORD ? f->password : f->new_pw, argv[1]);
        press(s, f->primary);
    } else if (strcmp(cmd, "attribute") == 0 && argc == 3) {
        GtkWidget *entry = NULL;
        if (!(f = form_on_screen(s, NULL)) || f->step != STEP_ATTRIBUTES) return "attribute: no attributes asked for";
        for (guint i = 0; i < f->attr_entries->len; i++)
            if (g_strcmp0(g_object_get_data(G_OBJECT(g_ptr_array_index(f->attr_entries, i)), "attr-name"),
                          argv[1]) == 0)
                entry = g_ptr_array_index(f->attr_entries, i);
        if (!entry) return "attribute: the sign-up did not ask for it";
        set_text(entry, argv[2]);
        step_done(s, NULL);
    } else if (strcmp(cmd, "submit_attributes") == 0 && argc == 1) {
        if (!(f = form_on_screen(s, NULL)) || f->step != STEP_ATTRIBUTES) return "submit_attributes: not asked for";
        press(s, f->primary);
    } else if (strcmp(cmd, "page") == 0 && argc == 2) {
        if (!app_form(app, argv[1]) || !app_current_form(app)) return "page: no such form, or not on a form";
        app_go_to(app, argv[1]);
        step_done(s, NULL);
    } else if (strcmp(cmd, "call_api") == 0 && argc == 2 && (strcmp(argv[1], "1") == 0 || strcmp(argv[1], "2") == 0)) {
        if (strcmp(app_page(app), "signed_in") != 0) return "call_api: not signed in";
        press(s, app->call_api[argv[1][0] - '1']);
    } else if (strcmp(cmd, "sign_out") == 0 && argc == 1) {
        if (strcmp(app_page(app), "signed_in") != 0) return "sign_out: not signed in";
        press(s, app->sign_out);
    } else if (strcmp(cmd, "screenshot") == 0 && argc == 2) {
        char *path = shot_path(s, argv[1]);
        s->waiting = TRUE;
        screenshot_async(app, path, on_step_shot, s);
        g_free(path);
    } else if (strcmp(cmd, "expect_error") == 0 && argc == 2) {
        g_free(s->expect_error);
        s->expect_error = g_strdup(argv[1]);
        step_done(s, NULL);
    } else if (strcmp(cmd, "cancel_next_wait") == 0 && (argc == 2 || argc == 3)) {
        s->cancel_ms = atoi(argv[1]);
        g_free(s->cancel_shot);
        s->cancel_shot = argc == 3 ? g_strdup(argv[2]) : NULL;
        g_free(s->expect_error);
        s->expect_error = g_strdup("cancelled");
        step_done(s, NULL);
    } else if (strcmp(cmd, "timeout") == 0 && argc == 2 && atoi(argv[1]) > 0) {
        s->timeout_s = (guint)atoi(argv[1]);
        step_done(s, NULL);
    } else {
        return "unknown step, or wrong number of words";
    }
    return NULL;
}

static void run_next(Script *s) {
    while (!s->stopped && s->lines[s->next]) {
        char *line = g_strstrip(s->lines[s->next++]), **argv = NULL;
        int argc = 0;
        const char *failure;
        GError *error = NULL;
        s->line_no++;
        if (!*line || *line == '#') continue;
        if (!g_shell_parse_argv(line, &argc, &argv, &error)) {
            char *where = g_strdup_printf("line %u", s->line_no);
            emit(json_pack("{s:s,s:b,s:s}", "step", where, "ok", 0, "failure", error->message));
            g_free(where);
            g_error_free(error);
            stop(s, 1);
            return;
        }
        s->current = masked_step(argv);
        s->extra = json_object();
        s->acted = s->waiting = FALSE;
        s->started = g_get_monotonic_time();
        s->app->ticks = 0;
        /* expect_error and cancel_next_wait arm the step after them */
        if (strcmp(argv[0], "expect_error") != 0 && strcmp(argv[0], "cancel_next_wait") != 0) {
            s->armed_error = s->expect_error;
            s->expect_error = NULL;
        }
        s->watchdog = g_timeout_add_seconds(s->timeout_s, on_watchdog, s);
        failure = run_step(s, argc, argv);
        if (failure) step_done(s, failure);
        g_strfreev(argv);
        return; /* the next step runs once this one is done */
    }
    if (s->stopped) return;
    emit(json_pack("{s:b,s:i}", "done", 1, "steps", s->steps));
    g_idle_add(quit_loop, s->app);
}

Script *script_new(App *app, const char *path, GError **error) {
    char *contents;
    Script *s;
    if (!g_file_get_contents(path, &contents, NULL, error)) return NULL;
    s = g_new0(Script, 1);
    s->app = app;
    s->lines = g_strsplit(contents, "\n", -1);
    s->cancel_ms = -1;
    s->timeout_s = 60;
    g_free(contents);
    return s;
}

void script_start(Script *s) { run_next(s); }

void script_free(Script *s) {
    if (s->watchdog) g_source_remove(s->watchdog);
    if (s->cancel_timer) g_source_remove(s->cancel_timer);
    g_strfreev(s->lines);
    g_free(s->current);
    g_free(s->expect_error);
    g_free(s->armed_error);
    g_free(s->cancel_shot);
    json_decref(s->extra);
    g_free(s);
}
