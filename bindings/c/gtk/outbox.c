/* outbox.c — the local emulator "emails" one-time codes into an outbox its control endpoint shows
 * (GET <controls>/outbox with the ready document's X-Emulator-Token). The app reads the last code there when
 * it runs against the emulator ("Get code from emulator", and the script's code_from_emulator), so a demo needs no
 * mailbox. A plain HTTP/1.1 GET over GIO, asynchronous like everything else on the GTK thread; never a real server's
 * business (the controls exist only on the emulator, on a loopback address). */
#include "app.h"

#include <string.h>

typedef struct {
    App *app;
    outbox_done_fn done;
    gpointer data;
    GSocketConnection *conn;
    char *request;
    GByteArray *answer;
    char *email;
    guint8 buf[4096];
} Fetch;

static void finish(Fetch *f, const char *code, GError *error) {
    f->done(f->app, code, error, f->data);
    if (f->conn) g_object_unref(f->conn);
    g_free(f->request);
    g_byte_array_unref(f->answer);
    g_free(f->email);
    g_free(f);
}

static void fail(Fetch *f, GError *error, const char *what) {
    GError *e = error ? error : g_error_new_literal(G_IO_ERROR, G_IO_ERROR_FAILED, what);
    finish(f, NULL, e);
    g_error_free(e);
}

/* The answer is complete: status line, headers, then {"messages":[{"to","code",…}…]}; the last message counts. */
static void parse_answer(Fetch *f) {
    const char *all = (const char *)f->answer->data;
    const char *body = g_strstr_len(all, (gssize)f->answer->len, "\r\n\r\n");
    json_t *doc, *messages;
    const char *code;
    if (!body || f->answer->len < 12 || strncmp(all + 9, "200", 3) != 0) {
        fail(f, NULL, "the emulator's outbox did not answer 200 (is --emulator-ready the running emulator's?)");
        return;
    }
    body += 4;
    doc = json_loadb(body, f->answer->len - (gsize)(body - all), 0, NULL);
    messages = json_object_get(doc, "messages");
    code = NULL;
    for (size_t i = json_array_size(messages); i-- > 0 && !code;) { /* the newest sent to the form's address */
        json_t *m = json_array_get(messages, i);
        if (g_ascii_strcasecmp(json_string_value(json_object_get(m, "to")) ? json_string_value(json_object_get(m,
                               "to")) : "", f->email) == 0)
            code = json_string_value(json_object_get(m, "code"));
    }
    if (!code) /* else the newest of all: a second factor's code goes to another address (the MFA method's) */
        code = json_string_value(json_object_get(json_array_get(messages, json_array_size(messages) - 1), "code"));
    if (code)
        finish(f, code, NULL);
    else
        fail(f, NULL, "the emulator has sent no code yet");
    json_decref(doc);
}

/* Whether the whole answer is here: its headers and Content-Length bytes of body (else it ends with the connection). */
static gboolean complete(Fetch *f) {
    const char *all = (const char *)f->answer->data, *end, *cl;
    char *head;
    gboolean done = FALSE;
    end = g_strstr_len(all, (gssize)f->answer->len, "\r\n\r\n");
    if (!end) return FALSE;
    head = g_ascii_strdown(all, end - all);
    cl = strstr(head, "\r\ncontent-length:");
    if (cl) done = f->answer->len >= (gsize)(end + 4 - all) + g_ascii_strtoull(cl + 17, NULL, 10);
    g_free(head);
    return done;
}

static void on_read(GObject *source, GAsyncResult *res, gpointer data) {
    Fetch *f = data;
    GError *error = NULL;
    gssize n = g_input_stream_read_finish(G_INPUT_STREAM(source), res, &error);
    if (n < 0) {
        fail(f, error, NULL);
        return;
    }
    if (n == 0) { /* Connection: close — the end of the answer */
        parse_answer(f);
        return;
    }
    g_byte_array_append(f->answer, f->buf, (guint)n);
    if (complete(f)) {
        parse_answer(f);
        return;
    }
    if (f->answer->len > (1u << 20)) {
        fail(f, NULL, "the outbox answer is too large");
        return;
    }
    g_input_stream_read_async(g_io_stream_get_input_stream(G_IO_STREAM(f->conn)), f->buf, sizeof f->buf,
                              G_PRIORITY_DEFAULT, NULL, on_read, f);
}

static void on_written(GObject *source, GAsyncResult *res, gpointer data) {
    Fetch *f = data;
    GError *error = NULL;
    if (!g_output_stream_write_all_finish(G_OUTPUT_STREAM(source), res, NULL, &error)) {
        fail(f, error, NULL);
        return;
    }
    g_input_stream_read_async(g_io_stream_get_input_stream(G_IO_STREAM(f->conn)), f->buf, sizeof f->buf,
                              G_PRIORITY_DEFAULT, NULL, on_read, f);
}

static void on_connected(GObject *source, GAsyncResult *res, gpointer data) {
    Fetch *f = data;
    GError *error = NULL;
    f->conn = g_socket_client_connect_to_host_finish(G_SOCKET_CLIENT(source), res, &error);
    g_object_unref(source);
    if (!f->conn) {
        fail(f, error, NULL);
        return;
    }
    g_output_stream_write_all_async(g_io_stream_get_output_stream(G_IO_STREAM(f->conn)), f->request,
                                    strlen(f->request), G_PRIORITY_DEFAULT, NULL, on_written, f);
}

void outbox_fetch_code(App *app, const char *email, outbox_done_fn done, gpointer data) {
    Fetch *f = g_new0(Fetch, 1);
    GUri *uri = NULL;
    char *host_port;
    f->app = app;
    f->done = done;
    f->data = data;
    f->answer = g_byte_array_new();
    if (app->cfg.control_url) uri = g_uri_parse(app->cfg.control_url, G_URI_FLAGS_NONE, NULL);
    if (!uri || g_strcmp0(g_uri_get_scheme(uri), "http") != 0 || !app->cfg.control_token) {
        if (uri) g_uri_unref(uri);
        fail(f, NULL, "no emulator controls (plain http) known: start the app with --emulator-ready FILE");
        return;
    }
    f->email = g_strdup(email);
    host_port = g_strdup_printf("%s:%d", g_uri_get_host(uri), g_uri_get_port(uri) > 0 ? g_uri_get_port(uri) : 80);
    f->request = g_strdup_printf("GET %s/outbox HTTP/1.1\r\nHost: %s\r\nX-Emulator-Token: %s\r\n"
                                 "Accept: application/json\r\nConnection: close\r\n\r\n",
                                 g_uri_get_path(uri), host_port, app->cfg.control_token);
    g_socket_client_connect_to_host_async(g_socket_client_new(), host_port, 80, NULL, on_connected, f);
    g_free(host_port);
    g_uri_unref(uri);
}
