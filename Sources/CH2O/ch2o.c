// The glue over h2o 2.2.5's HTTP/1 server. libh2o-evloop is opened with dlopen (never linked, as the
// other system libraries: docs/decisions/dlopen-libraries.md) and every function is called through
// the table `h2o` below; so is picohttpparser's phr_parse_request, which the library carries.
//
// How a connection goes:
// - Each loop thread accepts from its own dup of the listening socket (accept4 here, not h2o's
//   accept: `opened` decides before h2o sees the socket), and hands the socket to h2o_http1_accept.
// - h2o lowercases the header names in its input buffer and takes Host, Content-Length,
//   Transfer-Encoding, Expect and Upgrade out of req->headers; the API gives the head as sent. So
//   every read and write callback h2o sets on the socket is wrapped (`glue_on_read`,
//   `glue_on_write`): before h2o parses a head, the wrapper copies it while it is still raw.
//   After each of h2o's callbacks returns, the wrappers are put back where h2o set its own again.
// - A request's `struct ch2o_request` lives in the request's memory pool with a dispose callback:
//   h2o runs it when it disposes the request, once the answer is written out or the connection
//   went; that is where the body is released and `completed` called.
// - `closed` comes from the socket's on_close hook, after h2o disposed the last request.
// - ch2o_stop writes each loop's eventfd (an h2o socket on the loop); the loop closes its listener
//   and every connection (through h2o's own I/O-error path: glue_abort), turns a few more times so
//   that h2o frees the closed sockets, disposes its context and loop, and ends; ch2o_stop joins.
#define _GNU_SOURCE  // accept4
#include "include/ch2o.h"

#include "../CLinux/system_libraries.h"
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

// libh2o-evloop's build (its pkg-config --cflags): h2o's own loop, not libuv's
#define H2O_USE_LIBUV 0
#include <h2o.h>
#include <h2o/http1.h>

// picohttpparser's (the header is not installed; the library exports the function).
struct phr_header {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
};

// Declared with the headers' own prototypes (typeof names no symbol): the compiler checks every call.
#define H2O_FUNCTION(name) __typeof__(&h2o_##name) name
static struct {
    const char *error;
    void *library;
    H2O_FUNCTION(config_init);
    H2O_FUNCTION(config_dispose);
    H2O_FUNCTION(config_register_host);
    H2O_FUNCTION(create_handler);
    H2O_FUNCTION(evloop_create);
    H2O_FUNCTION(evloop_destroy);
    H2O_FUNCTION(evloop_run);
    H2O_FUNCTION(evloop_socket_create);
    H2O_FUNCTION(context_init);
    H2O_FUNCTION(context_dispose);
    H2O_FUNCTION(socket_read_start);
    H2O_FUNCTION(socket_read_stop);
    H2O_FUNCTION(socket_close);
    H2O_FUNCTION(http1_accept);
    H2O_FUNCTION(start_response);
    H2O_FUNCTION(send);
    H2O_FUNCTION(mem_init_pool);
    H2O_FUNCTION(mem_alloc_pool);
    H2O_FUNCTION(mem_alloc_shared);
    H2O_FUNCTION(add_header_by_str);
    H2O_FUNCTION(buffer_consume);
    int (*phr_parse_request)(const char *, size_t, const char **, size_t *, const char **, size_t *, int *,
                             struct phr_header *, size_t *, size_t);
} h2o;
#undef H2O_FUNCTION
static pthread_once_t h2o_once = PTHREAD_ONCE_INIT;
static char h2o_error[512];

static void h2o_load(void) {
    void *library = dlopen(MAPGATE_SYSTEM_LIBRARY_FOLDER "libh2o-evloop.so.0.13", RTLD_NOW | RTLD_LOCAL);
    const char *missing = library ? NULL : dlerror();
#define RESOLVE(field, name) \
    if (!missing && !(*(void **)&h2o.field = dlsym(library, name))) missing = dlerror();
    RESOLVE(config_init, "h2o_config_init")
    RESOLVE(config_dispose, "h2o_config_dispose")
    RESOLVE(config_register_host, "h2o_config_register_host")
    RESOLVE(create_handler, "h2o_create_handler")
    RESOLVE(evloop_create, "h2o_evloop_create")
    RESOLVE(evloop_destroy, "h2o_evloop_destroy")
    RESOLVE(evloop_run, "h2o_evloop_run")
    RESOLVE(evloop_socket_create, "h2o_evloop_socket_create")
    RESOLVE(context_init, "h2o_context_init")
    RESOLVE(context_dispose, "h2o_context_dispose")
    RESOLVE(socket_read_start, "h2o_socket_read_start")
    RESOLVE(socket_read_stop, "h2o_socket_read_stop")
    RESOLVE(socket_close, "h2o_socket_close")
    RESOLVE(http1_accept, "h2o_http1_accept")
    RESOLVE(start_response, "h2o_start_response")
    RESOLVE(send, "h2o_send")
    RESOLVE(mem_init_pool, "h2o_mem_init_pool")
    RESOLVE(mem_alloc_pool, "h2o_mem_alloc_pool")
    RESOLVE(mem_alloc_shared, "h2o_mem_alloc_shared")
    RESOLVE(add_header_by_str, "h2o_add_header_by_str")
    RESOLVE(buffer_consume, "h2o_buffer_consume")
    RESOLVE(phr_parse_request, "phr_parse_request")
#undef RESOLVE
    if (missing) {
        snprintf(h2o_error, sizeof h2o_error, "%s", missing);
        h2o.error = h2o_error;
    }
    h2o.library = library;
}

const char *ch2o_load_error(void) {
    pthread_once(&h2o_once, h2o_load);
    return h2o.error;
}

// MARK: - Types

#define CH2O_CHUNK_SIZE 65536
// The longest head read (request line and fields); mapgate's own checks refuse heads far
// shorter (HTTPDaemonContext.headTooLarge: about 3.3 KB of fields).
#define CH2O_MAX_HEAD 8192
#define CH2O_ACCEPTS_PER_WAKE 16

// A request head as the client wrote it, copied before h2o lowercased its names: malloc'd, the
// fields then the bytes after the struct.
struct glue_head {
    size_t length;  // from the request line to the empty line included
    const char *method;
    size_t method_length;
    const char *target;
    size_t target_length;
    int minor_version;
    size_t count;
    struct ch2o_header fields[];
};

struct glue_loop;

// One accepted connection: small, as an idle keep-alive connection must stay cheap.
struct glue_conn {
    struct glue_conn *previous, *next;  // the loop's open connections
    struct glue_loop *loop;
    h2o_socket_t *sock;
    void *context;                      // `opened`'s answer
    h2o_socket_cb h2o_read, h2o_write;  // h2o's own callbacks, under the wrappers
    struct glue_head *head;             // the next request's raw head, once seen
    struct ch2o_request *request;       // the request in flight (until h2o disposes it)
    size_t request_end;                 // where that request's bytes end in the input buffer
    uint64_t received;                  // bytes read from the socket so far (each read's bytes_read)
    unsigned busy;                      // wrappers under way: the struct outlives the socket till they return
    int fd;
    unsigned char closed, drop, refused;
};

struct ch2o_request {
    h2o_generator_t generator;
    h2o_req_t *req;
    struct glue_conn *conn;
    struct glue_head *head;
    int answered;
    int final_sent;  // the answer's last bytes are handed to h2o: its next write completion is the answer's end
    ch2o_release_callback release;
    void *release_cls;
    ch2o_read_callback read;  // a stream's
    uint64_t length, offset;
    char *chunk;
};

struct glue_loop {
    struct ch2o_server *server;
    pthread_t thread;
    int thread_started;
    int listen_fd, wake_fd;  // a dup of the listening socket, an eventfd: both closed by h2o
    h2o_evloop_t *loop;
    h2o_context_t ctx;
    h2o_accept_ctx_t accept_ctx;
    h2o_socket_t *listener, *waker;
    struct glue_conn *conns;
    int stopping;
    int spare;  // a descriptor held for when there is none left (glue_on_accept)
    int listener_paused;  // out of descriptors, spare too: the listener is not watched (glue_loop_main)
    int quiesced;         // its listener is closed (ch2o_quiesce): under the server's lock
};

struct glue_handler {
    h2o_handler_t super;
    struct ch2o_server *server;
};

struct ch2o_server {
    struct ch2o_callbacks callbacks;
    h2o_globalconf_t config;
    int loop_count;
    struct glue_loop *loops;
    int quiesce_requested;  // atomic: no more accepting (a loop busy in a handler sees it before its wake-up)
    int stop_requested;     // atomic: a loop's wake-up is ch2o_stop's, else ch2o_quiesce's
    pthread_mutex_t lock;
    pthread_cond_t quiesced;  // a loop closed its listener
};

// MARK: - The raw head

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c + 32 : c; }

static int same_ignoring_case(const char *a, const char *b, size_t length) {
    for (size_t i = 0; i < length; ++i)
        if (lower((unsigned char)a[i]) != lower((unsigned char)b[i])) return 0;
    return 1;
}

// Whether a field announces a body: Content-Length, Transfer-Encoding or Expect.
static int announces_body(const struct ch2o_header *f) {
    return (f->name_length == 14 && same_ignoring_case(f->name, "content-length", 14))
        || (f->name_length == 17 && same_ignoring_case(f->name, "transfer-encoding", 17))
        || (f->name_length == 6 && same_ignoring_case(f->name, "expect", 6));
}

// The raw head (the copy) against the bytes h2o parsed: the same but for the case of the names,
// and for the first letter of a field hide_body turned into 'X'.
static int same_head(const char *copy, const char *live, size_t length) {
    for (size_t i = 0; i < length; ++i) {
        int a = lower((unsigned char)copy[i]), b = lower((unsigned char)live[i]);
        if (a != b && !(b == 'x' && (a == 'c' || a == 't' || a == 'e'))) return 0;
    }
    return 1;
}

// Parses the head at the start of `bytes` as h2o will (same parser, same window) and copies it;
// NULL while it is incomplete or when it cannot be parsed (h2o answers or closes then).
static struct glue_head *head_copy(const char *bytes, size_t size, int *invalid) {
    struct phr_header found[H2O_MAX_HEADERS];
    size_t count = H2O_MAX_HEADERS, method_length, target_length;
    const char *method, *target;
    int minor_version;
    if (size == 0) return NULL;
    if (size > H2O_MAX_REQLEN) size = H2O_MAX_REQLEN;
    int length = h2o.phr_parse_request(bytes, size, &method, &method_length, &target, &target_length, &minor_version,
                                       found, &count, 0);
    if (length <= 0) {
        if (invalid) *invalid = length == -1;
        return NULL;
    }
    struct glue_head *head = malloc(sizeof *head + count * sizeof(struct ch2o_header) + (size_t)length);
    if (!head) return NULL;
    char *copy = (char *)(head->fields + count);
    memcpy(copy, bytes, (size_t)length);
#define MOVED(p) (copy + ((p) - bytes))
    head->length = (size_t)length;
    head->method = MOVED(method);
    head->method_length = method_length;
    head->target = MOVED(target);
    head->target_length = target_length;
    head->minor_version = minor_version;
    head->count = count;
    for (size_t i = 0; i < count; ++i) {
        // picohttpparser gives an obs-fold continuation line no name
        head->fields[i].name = found[i].name ? MOVED(found[i].name) : "";
        head->fields[i].name_length = found[i].name ? found[i].name_len : 0;
        head->fields[i].value = MOVED(found[i].value);
        head->fields[i].value_length = found[i].value_len;
    }
#undef MOVED
    return head;
}

// No route takes a body, and a request that announces one is refused and its connection closed,
// before any of it is read. h2o would read a whole body (and answer `Expect: 100-continue` with
// its 100) before the request reaches the handler: so the names of those fields, in the bytes h2o
// is about to parse (`live`, where `head` was copied from), get an 'X' for their first letter, and
// h2o sees a request without a body. The handler sees the fields as sent (the copy).
static void hide_body(struct glue_head *head, char *live) {
    const char *copy = (const char *)(head->fields + head->count);
    for (size_t i = 0; i < head->count; ++i)
        if (announces_body(head->fields + i)) live[head->fields[i].name - copy] = 'X';
}

// A head read again from the bytes h2o parsed: the fields hide_body renamed get their names back
// (a client's own `Xontent-Length` is taken for a Content-Length too: refused, as a body is).
static void show_body(struct glue_head *head) {
    static const char *const names[] = {"content-length", "transfer-encoding", "expect"};
    for (size_t i = 0; i < head->count; ++i) {
        struct ch2o_header *f = head->fields + i;
        for (size_t n = 0; n < 3; ++n)
            if (f->name_length == strlen(names[n]) && lower((unsigned char)f->name[0]) == 'x' && same_ignoring_case(f->name + 1, names[n] + 1, f->name_length - 1))
                *(char *)f->name = names[n][0];
    }
}

// The head of the request h2o is handing over: the copy taken while it was raw when it is the
// same head (h2o only changed the case of the names), else what is left in the buffer.
static struct glue_head *head_for_request(struct glue_conn *c, h2o_req_t *req) {
    struct glue_head *head = c->head;
    h2o_buffer_t *input = c->sock->input;
    c->head = NULL;
    if (head && (input->size < head->length || !same_head((char *)(head->fields + head->count), input->bytes, head->length))) {
        free(head);
        head = NULL;
    }
    if (!head && (head = head_copy(input->bytes, input->size, NULL))) show_body(head);
    if (!head && (head = calloc(1, sizeof *head))) {  // never seen: h2o's view of it
        head->method = req->input.method.base;
        head->method_length = req->input.method.len;
        head->target = req->input.path.base;
        head->target_length = req->input.path.len;
        head->minor_version = req->version & 0xff;
    }
    return head;
}

// Whether a Connection field lists `close`: h2o only looks for keep-alive, so `close, keep-alive`
// would stay open.
static int head_says_close(const struct glue_head *head) {
    for (size_t i = 0; i < head->count; ++i) {
        const struct ch2o_header *f = head->fields + i;
        if (f->name_length != 10 || !same_ignoring_case(f->name, "connection", 10)) continue;
        const char *p = f->value, *end = f->value + f->value_length;
        while (p < end) {
            while (p < end && (*p == ' ' || *p == '\t' || *p == ',')) ++p;
            const char *token = p;
            while (p < end && *p != ',') ++p;
            const char *token_end = p;
            while (token_end > token && (token_end[-1] == ' ' || token_end[-1] == '\t')) --token_end;
            if (token_end - token == 5 && same_ignoring_case(token, "close", 5)) return 1;
        }
    }
    return 0;
}

// MARK: - The wrappers around h2o's socket callbacks

static void glue_on_read(h2o_socket_t *sock, const char *err);
static void glue_on_write(h2o_socket_t *sock, const char *err);

// Puts the wrappers back over whatever callbacks h2o set since.
static void glue_wrap(struct glue_conn *c) {
    h2o_socket_t *sock = c->sock;
    if (sock->_cb.read && sock->_cb.read != glue_on_read) {
        c->h2o_read = sock->_cb.read;
        sock->_cb.read = glue_on_read;
    }
    if (sock->_cb.write && sock->_cb.write != glue_on_write) {
        c->h2o_write = sock->_cb.write;
        sock->_cb.write = glue_on_write;
    }
}

static void glue_enter(struct glue_conn *c) { ++c->busy; }

// After one of h2o's callbacks (or h2o_http1_accept) returned: a ch2o_drop asked during it is done
// now, with h2o no longer under way; a connection closed during it is freed now.
static void glue_leave(struct glue_conn *c) {
    if (c->busy == 1 && !c->closed && c->drop && c->h2o_read) {
        c->drop = 0;
        c->h2o_read(c->sock, "ch2o: dropped");  // h2o's reqread_on_read: an error closes the connection
    }
    if (--c->busy != 0) return;
    if (c->closed) {
        free(c);
        return;
    }
    glue_wrap(c);
}

// The version a request line names, when it is `HTTP/` and two digits other than HTTP/1.x's
// (picohttpparser reads HTTP/1.x only: `GET / HTTP/2.0` is a version not supported, not a
// malformed head); NULL otherwise.
static const char *unsupported_version(const char *bytes, size_t size) {
    size_t end = 0, limit = size < CH2O_MAX_HEAD ? size : CH2O_MAX_HEAD;
    while (end < limit && bytes[end] != '\r' && bytes[end] != '\n') ++end;
    if (end == limit || end < 9) return NULL;
    const char *v = bytes + end - 8;
    int digits = v[5] >= '0' && v[5] <= '9' && v[7] >= '0' && v[7] <= '9';
    return v[-1] == ' ' && memcmp(v, "HTTP/", 5) == 0 && digits && v[6] == '.' && v[5] != '1' ? v : NULL;
}

// Whether the request line is not complete yet and ends in the start of a version other than
// HTTP/1.x (` HTTP/2` of ` HTTP/2.0`, sent in pieces): picohttpparser already refuses it, where the
// whole line will be a 505, not a 400.
static int unsupported_version_coming(const char *bytes, size_t size) {
    if (size >= CH2O_MAX_HEAD || memchr(bytes, '\n', size) || memchr(bytes, '\r', size)) return 0;
    const char *space = memrchr(bytes, ' ', size);
    if (!space) return 0;
    const char *v = space + 1;
    size_t n = (size_t)(bytes + size - v);
    static const char pattern[] = "HTTP/d.d";
    if (n < 6 || n >= 8) return 0;  // the major digit is in, the minor one is not
    for (size_t i = 0; i < n; ++i)
        if (pattern[i] == 'd' ? !(v[i] >= '0' && v[i] <= '9') : v[i] != pattern[i]) return 0;
    return v[5] != '1';
}

// The next head, from the bytes h2o is about to parse: copied (its body hidden from h2o) once
// complete. 0 then, and while it is incomplete; -1 when h2o must not see it yet
// (`unsupported_version_coming`, when the caller `can_wait`); else the status it is refused with
// (`refuse_head`): 400 when it cannot be parsed, 505 for a version other than HTTP/1.x, 414 when it
// is still incomplete past CH2O_MAX_HEAD and its request line alone is, else 431.
static int take_head(struct glue_conn *c, char *bytes, size_t size, int can_wait) {
    int invalid = 0;
    // A head past CH2O_MAX_HEAD: h2o would read one of up to 417,792 bytes, a connection's worth of
    // memory many times over. Refused here, as libmicrohttpd refuses a head past its pool: one
    // still coming, and a whole one too (spaces before a field's value, which the parser drops,
    // made one of 64 KiB pass the HTTP layer's own limit: found by an attack).
    int too_large = size > CH2O_MAX_HEAD ? (memchr(bytes, '\n', CH2O_MAX_HEAD) ? 431 : 414) : 0;
    int status;
    if ((c->head = head_copy(bytes, size, &invalid))) {
        if (c->head->length <= CH2O_MAX_HEAD) {
            hide_body(c->head, bytes);
            return 0;
        }
        free(c->head);
        c->head = NULL;
        status = too_large;
    } else if (invalid && can_wait && unsupported_version_coming(bytes, size)) {
        return -1;
    } else {
        // a request line past the limit is 414 whatever else is wrong with it
        status = invalid ? (too_large == 414 ? 414 : unsupported_version(bytes, size) ? 505 : 400) : too_large;
    }
    struct ch2o_server *s = c->loop->server;
    if (!status || c->refused) return status;
    c->refused = 1;
    if (s->callbacks.refused) {
        // the target: between the request line's first space and the next (or the line's end)
        size_t end = 0, limit = size < 8192 ? size : 8192;
        while (end < limit && bytes[end] != '\r' && bytes[end] != '\n') ++end;
        const char *space = memchr(bytes, ' ', end);
        const char *target = space ? space + 1 : bytes + end;
        const char *target_end = memchr(target, ' ', (size_t)(bytes + end - target));
        if (!target_end) target_end = bytes + end;
        s->callbacks.refused(s->callbacks.cls, c->context, status, target, (size_t)(target_end - target));
    }
    return status;
}

// Empty lines before a request line are ignored (RFC 9112 §2.2 asks for at least one;
// picohttpparser skips one, libmicrohttpd any number): taken out of the input before h2o parses it.
// How many bytes of empty lines `bytes` starts with.
static size_t empty_lines(const char *bytes, size_t size) {
    size_t n = 0;
    while (n < size) {
        if (bytes[n] == '\n') ++n;
        else if (bytes[n] == '\r' && n + 1 < size && bytes[n + 1] == '\n') n += 2;
        else break;
    }
    return n;
}

static void skip_empty_lines(h2o_socket_t *sock) {
    size_t n = empty_lines(sock->input->bytes, sock->input->size);
    if (n) h2o.buffer_consume(&sock->input, n);
}

static const char *refuse_head(struct glue_conn *c, int status, const char *bytes, size_t size);
static const char *reason_phrase(int status);

static void glue_on_read(h2o_socket_t *sock, const char *err) {
    struct glue_conn *c = sock->on_close.data;
    c->received += sock->bytes_read;  // this read's bytes (h2o's evloop sets it before each callback)
    // h2o has not parsed a complete head yet (it lowercases names only once it has one): copy it raw
    int refused = 0;
    if (!err && !c->head && !c->request) {
        skip_empty_lines(sock);
        refused = take_head(c, sock->input->bytes, sock->input->size, 1);
        if (refused < 0) return;  // h2o reads it once the line is whole
    }
    if (refused) err = refuse_head(c, refused, sock->input->bytes, sock->input->size);
    glue_enter(c);
    c->h2o_read(sock, err);
    glue_leave(c);
}

// Writes the answer of a head refused by take_head (`bytes`: the head), with the Date every
// answer carries (RFC 9110 §6.6.1), and returns the error that makes h2o's callback close the
// connection (h2o's own 400 would have no Date).
static const char *refuse_head(struct glue_conn *c, int status, const char *bytes, size_t size) {
    char date[64], text[96], answer[384];
    time_t now = time(NULL);
    struct tm utc;
    strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &utc));
    const char *version = status == 505 ? unsupported_version(bytes, size) : NULL;
    if (version) snprintf(text, sizeof text, "HTTP version %.8s is not supported (HTTP/1.1 is)\n", version);
    else snprintf(text, sizeof text, "%s\n", status == 414 ? "request target too long" : status == 431 ? "request header fields too large" : "malformed request head (RFC 9112)");
    int length = snprintf(answer, sizeof answer,
                          "HTTP/1.1 %d %s\r\nDate: %s\r\nConnection: close\r\nContent-Type: text/plain\r\nContent-Length: %zu\r\n\r\n%s",
                          status, reason_phrase(status), date, strlen(text), text);
    if (length > 0 && send(c->fd, answer, (size_t)length, MSG_DONTWAIT | MSG_NOSIGNAL) < 0) { /* the close says enough */ }
    return "ch2o: head refused";  // h2o's callbacks close the connection on an error
}

static void glue_on_write(h2o_socket_t *sock, const char *err) {
    struct glue_conn *c = sock->on_close.data;
    // A pipelined head after the request being answered: h2o parses it within this callback once
    // the answer is written out whole (on_send_complete; a stream's earlier chunks end in another
    // callback: a refusal there went into the answer's body), before any read, so it is copied
    // here while still raw. Not when the connection closes after this answer: what follows is
    // never read.
    struct ch2o_request *r = c->request;
    if (!err && !c->head && r && r->final_sent && r->req->http1_is_persistent && sock->input->size > c->request_end) {
        char *next = sock->input->bytes + c->request_end;
        size_t size = sock->input->size - c->request_end;
        // empty lines before it taken out (h2o only consumes the request's bytes before them)
        size_t empty = empty_lines(next, size);
        if (empty) {
            memmove(next, next + empty, size - empty);
            size -= empty;
            sock->input->size -= empty;
        }
        // (a version still coming is refused as it is: h2o parses it within this callback)
        int refused = take_head(c, next, size, 0);
        if (refused) {
            // the answer before it is written out whole (this callback says so): the refusal
            // follows it, and h2o closes (h2o 2.2.5's on_send_complete ignores `err`: it went on
            // to read the refused head, and answered it once it was whole)
            err = refuse_head(c, refused, next, size);
            r->req->http1_is_persistent = 0;
        }
    }
    glue_enter(c);
    c->h2o_write(sock, err);
    glue_leave(c);
}

static void glue_on_close(void *data) {
    struct glue_conn *c = data;
    struct glue_loop *l = c->loop;
    c->closed = 1;
    if (c->previous) c->previous->next = c->next;
    else l->conns = c->next;
    if (c->next) c->next->previous = c->previous;
    free(c->head);
    c->head = NULL;
    l->server->callbacks.closed(l->server->callbacks.cls, c->context);
    if (!c->busy) free(c);
}

// Closes a connection whatever it is doing, through h2o's own callback for an I/O error (h2o's
// close_connection is not exported): the write under way if any, else the read.
static void glue_abort(struct glue_conn *c, const char *why) {
    h2o_socket_t *sock = c->sock;
    if (c->request) c->request->req->http1_is_persistent = 0;
    glue_enter(c);
    if (sock->_cb.write) {
        h2o_socket_cb cb = sock->_cb.write;
        sock->_cb.write = NULL;  // as the loop does before calling it
        cb(sock, why);
    } else if (sock->_cb.read) {
        sock->_cb.read(sock, why);
    } else if (c->h2o_read) {
        c->h2o_read(sock, why);
    }
    glue_leave(c);
}

// MARK: - Requests

static const char *reason_phrase(int status) {
    switch (status) {
    case 100: return "Continue";
    case 101: return "Switching Protocols";
    case 200: return "OK";
    case 201: return "Created";
    case 202: return "Accepted";
    case 203: return "Non-Authoritative Information";
    case 204: return "No Content";
    case 205: return "Reset Content";
    case 206: return "Partial Content";
    case 300: return "Multiple Choices";
    case 301: return "Moved Permanently";
    case 302: return "Found";
    case 303: return "See Other";
    case 304: return "Not Modified";
    case 307: return "Temporary Redirect";
    case 308: return "Permanent Redirect";
    case 400: return "Bad Request";
    case 401: return "Unauthorized";
    case 403: return "Forbidden";
    case 404: return "Not Found";
    case 405: return "Method Not Allowed";
    case 406: return "Not Acceptable";
    case 408: return "Request Timeout";
    case 409: return "Conflict";
    case 410: return "Gone";
    case 411: return "Length Required";
    case 412: return "Precondition Failed";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 415: return "Unsupported Media Type";
    case 416: return "Range Not Satisfiable";
    case 417: return "Expectation Failed";
    case 421: return "Misdirected Request";
    case 426: return "Upgrade Required";
    case 428: return "Precondition Required";
    case 429: return "Too Many Requests";
    case 431: return "Request Header Fields Too Large";
    case 500: return "Internal Server Error";
    case 501: return "Not Implemented";
    case 502: return "Bad Gateway";
    case 503: return "Service Unavailable";
    case 504: return "Gateway Timeout";
    case 505: return "HTTP Version Not Supported";
    default: break;
    }
    switch (status / 100) {
    case 1: return "Informational";
    case 2: return "Success";
    case 3: return "Redirection";
    case 4: return "Client Error";
    default: return "Server Error";
    }
}

// Run by h2o when it disposes the request (its pool): the answer was written out, or the
// connection went.
static void request_disposed(void *data) {
    struct ch2o_request *r = data;
    struct glue_conn *c = r->conn;
    struct ch2o_server *s = c->loop->server;
    if (r->release) r->release(r->release_cls);
    if (c->request == r) c->request = NULL;
    free(r->head);
    r->head = NULL;
    // h2o disposes the request before it consumes its bytes: what is after them came pipelined
    size_t pending = !c->closed && c->sock->input->size > c->request_end ? c->sock->input->size - c->request_end : 0;
    s->callbacks.completed(s->callbacks.cls, c->context, pending, c->received);
}

static int glue_on_req(h2o_handler_t *self, h2o_req_t *req) {
    struct ch2o_server *s = ((struct glue_handler *)self)->server;
    h2o_socket_t *sock = req->conn->callbacks->get_socket(req->conn);
    struct glue_conn *c = sock->on_close.data;
    struct ch2o_request *r = h2o.mem_alloc_shared(&req->pool, sizeof *r, request_disposed);
    memset(r, 0, sizeof *r);
    r->req = req;
    r->conn = c;
    r->head = head_for_request(c, req);
    c->request = r;
    // where this request's bytes end (head, then the body h2o read): a pipelined head follows
    c->request_end = r->head ? r->head->length : 0;
    h2o_buffer_t *input = sock->input;
    if (req->entity.base && req->entity.base >= input->bytes && req->entity.base + req->entity.len <= input->bytes + input->size)
        c->request_end = (size_t)(req->entity.base + req->entity.len - input->bytes);
    // HTTP/1.1 stays open unless `close` is listed; h2o closes when a Connection field lacks
    // keep-alive (`Connection: TE`), and keeps open `close, keep-alive`.
    if (r->head && head_says_close(r->head)) req->http1_is_persistent = 0;
    else if (r->head && r->head->minor_version >= 1 && !req->conn->ctx->shutdown_requested) req->http1_is_persistent = 1;
    s->callbacks.request(s->callbacks.cls, c->context, r);
    if (!r->answered) ch2o_drop(r);
    return 0;
}

const char *ch2o_request_method(struct ch2o_request *r, size_t *length) {
    *length = r->head ? r->head->method_length : 0;
    return r->head ? r->head->method : "";
}

const char *ch2o_request_target(struct ch2o_request *r, size_t *length) {
    *length = r->head ? r->head->target_length : 0;
    return r->head ? r->head->target : "";
}

int ch2o_request_version(struct ch2o_request *r) {
    return 0x100 + (r->head ? r->head->minor_version : r->req->version & 0xff);
}

size_t ch2o_request_headers(struct ch2o_request *r, const struct ch2o_header **fields) {
    *fields = r->head ? r->head->fields : NULL;
    return r->head ? r->head->count : 0;
}

static int request_is_head(struct ch2o_request *r) {
    return r->head && r->head->method_length == 4 && memcmp(r->head->method, "HEAD", 4) == 0;
}

// Status, fields (copied into the pool: h2o keeps pointers) and framing of an answer.
static void respond_start(struct ch2o_request *r, int status, const struct ch2o_header *headers, size_t header_count,
                          uint64_t content_length, int close) {
    h2o_req_t *req = r->req;
    r->answered = 1;
    req->res.status = status;
    req->res.reason = reason_phrase(status);
    // A 204 has no Content-Length (RFC 9110 §8.6), and h2o sends none for an unknown length there
    req->res.content_length = status == 204 ? SIZE_MAX : (size_t)content_length;
    if (close) req->http1_is_persistent = 0;
    size_t bytes = 0;
    for (size_t i = 0; i < header_count; ++i) bytes += headers[i].name_length + headers[i].value_length;
    char *copy = bytes ? h2o.mem_alloc_pool(&req->pool, bytes) : NULL;
    for (size_t i = 0; i < header_count; ++i) {
        char *name = copy;
        memcpy(name, headers[i].name, headers[i].name_length);
        char *value = name + headers[i].name_length;
        memcpy(value, headers[i].value, headers[i].value_length);
        copy = value + headers[i].value_length;
        // not as a token: the name goes out with the caller's case
        h2o.add_header_by_str(&req->pool, &req->res.headers, name, headers[i].name_length, 0, name, value, headers[i].value_length);
    }
}

static void stream_stop(h2o_generator_t *generator, h2o_req_t *req) {
    (void)generator;
    (void)req;  // the release comes with the request's disposal
}

// Reads the next chunk into r->chunk: its length, or 0 when the read failed.
static size_t stream_read(struct ch2o_request *r) {
    uint64_t left = r->length - r->offset;
    size_t max = left < CH2O_CHUNK_SIZE ? (size_t)left : CH2O_CHUNK_SIZE;
    ssize_t got = r->read(r->release_cls, r->offset, r->chunk, max);
    return got > 0 && (size_t)got <= max ? (size_t)got : 0;
}

// Sends a chunk read, the last one as final.
static void stream_send(struct ch2o_request *r, size_t length) {
    r->offset += length;
    h2o_iovec_t buffer = h2o_iovec_init(r->chunk, length);
    r->final_sent = r->offset == r->length;
    h2o.send(r->req, &buffer, 1, r->final_sent ? H2O_SEND_STATE_FINAL : H2O_SEND_STATE_IN_PROGRESS);
}

// A read that fails after the head went out cuts the answer short: h2o closes the connection
// after what was sent.
static void stream_next(struct ch2o_request *r) {
    size_t length = stream_read(r);
    if (length) {
        stream_send(r, length);
        return;
    }
    r->req->http1_is_persistent = 0;
    h2o.send(r->req, NULL, 0, H2O_SEND_STATE_ERROR);  // may close the connection (and dispose r) at once
}

static void stream_proceed(h2o_generator_t *generator, h2o_req_t *req) {
    (void)req;
    stream_next((struct ch2o_request *)generator);
}

void ch2o_respond(struct ch2o_request *r, int status, const struct ch2o_header *headers, size_t header_count,
                  uint64_t content_length, const void *body, size_t body_length,
                  ch2o_release_callback release, void *release_cls, int close) {
    if (r->answered) {  // a second answer: nothing is sent
        if (release) release(release_cls);
        return;
    }
    r->release = release;
    r->release_cls = release_cls;
    respond_start(r, status, headers, header_count, content_length, close);
    r->generator.stop = stream_stop;
    h2o.start_response(r->req, &r->generator);
    // h2o 2.2.5 would send a HEAD answer's body
    h2o_iovec_t buffer = h2o_iovec_init(body, request_is_head(r) ? 0 : body_length);
    r->final_sent = 1;
    h2o.send(r->req, &buffer, buffer.len ? 1 : 0, H2O_SEND_STATE_FINAL);
}

void ch2o_respond_stream(struct ch2o_request *r, int status, const struct ch2o_header *headers, size_t header_count,
                         uint64_t length, ch2o_read_callback read, ch2o_release_callback release, void *cls, int close) {
    if (r->answered) {
        if (release) release(cls);
        return;
    }
    r->release = release;
    r->release_cls = cls;
    r->read = read;
    r->length = length;
    int body = length != 0 && !request_is_head(r);
    size_t first = 0;
    if (body) {
        // the first chunk before the head: when it cannot be read, nothing at all is sent
        r->chunk = h2o.mem_alloc_pool(&r->req->pool, length < CH2O_CHUNK_SIZE ? (size_t)length : CH2O_CHUNK_SIZE);
        if (!(first = stream_read(r))) {
            ch2o_drop(r);
            return;
        }
    }
    respond_start(r, status, headers, header_count, length, close);
    r->generator.proceed = stream_proceed;
    r->generator.stop = stream_stop;
    h2o.start_response(r->req, &r->generator);
    if (body) stream_send(r, first);
    else {
        r->final_sent = 1;
        h2o.send(r->req, NULL, 0, H2O_SEND_STATE_FINAL);
    }
}

void ch2o_drop(struct ch2o_request *r) {
    struct glue_conn *c = r->conn;
    if (r->answered) return;
    r->answered = 1;
    r->req->http1_is_persistent = 0;
    c->drop = 1;  // done once h2o's callback under way returns (glue_leave)
    if (!c->busy) {  // not under one of h2o's callbacks (never so far): at once
        glue_enter(c);
        glue_leave(c);
    }
}

// MARK: - Loops

static void glue_accepted(struct glue_loop *l, int fd) {
    struct ch2o_server *s = l->server;
    void *context = s->callbacks.opened(s->callbacks.cls, fd);
    if (!context) {
        close(fd);
        return;
    }
    struct glue_conn *c = calloc(1, sizeof *c);
    if (!c) {
        close(fd);
        s->callbacks.closed(s->callbacks.cls, context);
        return;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);  // as h2o's own accept does
    h2o_socket_t *sock = h2o.evloop_socket_create(l->loop, fd, H2O_SOCKET_FLAG_IS_ACCEPTED_CONNECTION);
    c->loop = l;
    c->fd = fd;
    c->sock = sock;
    c->context = context;
    c->next = l->conns;
    if (l->conns) l->conns->previous = c;
    l->conns = c;
    sock->on_close.cb = glue_on_close;
    sock->on_close.data = c;
    struct timeval now;
    gettimeofday(&now, NULL);
    glue_enter(c);
    h2o.http1_accept(&l->accept_ctx, sock, now);
    glue_leave(c);
}

static void glue_close_listener(struct glue_loop *l);

static void glue_on_accept(h2o_socket_t *listener, const char *err) {
    struct glue_loop *l = listener->data;
    if (err || l->stopping) return;
    // quiesced while the loop was in a handler: the listener's event may come before the wake-up's
    if (__atomic_load_n(&l->server->quiesce_requested, __ATOMIC_ACQUIRE)) {
        glue_close_listener(l);
        return;
    }
    // a few per wake-up: the other loops watch the same socket and take their share
    for (int i = 0; i < CH2O_ACCEPTS_PER_WAKE; ++i) {
        int fd = accept4(l->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0 && (errno == EMFILE || errno == ENFILE)) {
            // No descriptor left: the waiting connection would keep the listening socket readable
            // and the loop turning at full speed. The spare is given up to take it and close it
            // (the client sees its connection closed, not a wait), then held again.
            if (l->spare >= 0) {
                close(l->spare);
                fd = accept4(l->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                if (fd >= 0) close(fd);
                l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
                continue;
            }
            // Another thread took the freed descriptor: the listener is left alone a while.
            h2o.socket_read_stop(listener);
            l->listener_paused = 1;
            return;
        }
        if (fd < 0) {
            if (errno == EINTR || errno == ECONNABORTED) continue;
            return;  // EAGAIN: another loop took it
        }
        glue_accepted(l, fd);
    }
}

// No more accepting: the loop's dup of the listening socket is closed, never shut down (the socket
// may be shared: ch2o_quiesce), and ch2o_quiesce is told.
static void glue_close_listener(struct glue_loop *l) {
    struct ch2o_server *s = l->server;
    if (l->listener) {
        h2o.socket_close(l->listener);  // out of the loop's epoll set, then closed
        l->listener = NULL;
        l->listen_fd = -1;
    }
    pthread_mutex_lock(&s->lock);
    l->quiesced = 1;
    pthread_cond_broadcast(&s->quiesced);
    pthread_mutex_unlock(&s->lock);
}

// ch2o_quiesce's wake-up: no more accepting. ch2o_stop's: that, every connection closed, then the
// loop ends.
static void glue_on_wake(h2o_socket_t *waker, const char *err) {
    struct glue_loop *l = waker->data;
    uint64_t count;
    (void)err;
    if (read(l->wake_fd, &count, sizeof count) < 0 && errno == EAGAIN) return;
    glue_close_listener(l);
    if (!__atomic_load_n(&l->server->stop_requested, __ATOMIC_ACQUIRE)) return;
    l->stopping = 1;
    h2o.socket_close(l->waker);
    // What h2o_context_request_shutdown does for HTTP/1 (no more keep-alive); not called itself: its
    // HTTP/2 half links a graceful-shutdown timer that nothing unlinks, and h2o_context_dispose
    // then asserts that its timeouts are empty.
    l->ctx.shutdown_requested = 1;
    struct glue_conn *c = l->conns, *next;
    for (; c; c = next) {
        next = c->next;
        glue_abort(c, "ch2o: server stopping");
    }
}

// h2o keeps freed buffers and pool chunks in per-thread recycle lists, lost with the thread (up to
// 16 of each a loop, each start): emptied here, on the loop thread, before it ends.
static void glue_free_thread_buffers(void) {
    // the socket input buffers': the list is in the exported thread-local prototype (dlsym gives
    // this thread's)
    h2o_buffer_prototype_t *prototype = dlsym(h2o.library, "h2o_socket_buffer_prototype");
    if (prototype) {
        h2o_mem_recycle_t *recycle = &prototype->allocator;
        struct recycled { struct recycled *next; };  // memory.c's st_h2o_mem_recycle_chunk_t
        while (recycle->_link) {
            struct recycled *chunk = (struct recycled *)recycle->_link;
            recycle->_link = (void *)chunk->next;
            --recycle->cnt;
            free(chunk);
        }
    }
    // the pools': that list is static in memory.c, so its chunks are taken out through pools of one
    // small allocation each (a pool's first chunk comes from the list, or from malloc once it is
    // empty) and freed directly (a chunk is the block malloc gave)
    enum { RECYCLED_POOL_CHUNKS = 32 };  // the list keeps 16
    h2o_mem_pool_t pools[RECYCLED_POOL_CHUNKS];
    for (int i = 0; i < RECYCLED_POOL_CHUNKS; ++i) {
        h2o.mem_init_pool(pools + i);
        h2o.mem_alloc_pool(pools + i, 1);
    }
    for (int i = 0; i < RECYCLED_POOL_CHUNKS; ++i) free(pools[i].chunks);
}

static void *glue_loop_main(void *data) {
    struct glue_loop *l = data;
    // every h2o object of the loop is made on its thread: sockets take this thread's buffer prototype
    l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
    l->loop = h2o.evloop_create();
    h2o.context_init(&l->ctx, l->loop, &l->server->config);
    l->accept_ctx.ctx = &l->ctx;
    l->accept_ctx.hosts = l->server->config.hosts;
    l->listener = h2o.evloop_socket_create(l->loop, l->listen_fd, H2O_SOCKET_FLAG_DONT_READ);
    l->listener->data = l;
    h2o.socket_read_start(l->listener, glue_on_accept);
    l->waker = h2o.evloop_socket_create(l->loop, l->wake_fd, H2O_SOCKET_FLAG_DONT_READ);
    l->waker->data = l;
    h2o.socket_read_start(l->waker, glue_on_wake);
    while (!l->stopping) {
        h2o.evloop_run(l->loop, l->listener_paused ? 100 : INT32_MAX);
        // out of descriptors: ten times a second, a spare again, and the listener watched again
        if (l->listener_paused && !l->stopping && l->listener) {
            if (l->spare < 0) l->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
            if (l->spare >= 0) {
                l->listener_paused = 0;
                h2o.socket_read_start(l->listener, glue_on_accept);
            }
        }
    }
    // the closed sockets are freed by the loop's next turns
    for (int i = 0; i < 3; ++i) h2o.evloop_run(l->loop, 0);
    h2o.context_dispose(&l->ctx);
    free(l->ctx.queue);  // h2o 2.2.5's h2o_multithread_destroy_queue closes the queue but never frees it
    h2o.evloop_destroy(l->loop);
    glue_free_thread_buffers();
    if (l->spare >= 0) close(l->spare);
    return NULL;
}

// MARK: - Start and stop

static void set_error(char *error, size_t error_size, const char *text) {
    if (error && error_size) snprintf(error, error_size, "%s", text);
}

static void server_free(struct ch2o_server *s) {
    for (int i = 0; i < s->loop_count; ++i) {
        struct glue_loop *l = s->loops + i;
        if (l->thread_started) continue;  // its fds are h2o's
        if (l->listen_fd >= 0) close(l->listen_fd);
        if (l->wake_fd >= 0) close(l->wake_fd);
    }
    h2o.config_dispose(&s->config);
    pthread_mutex_destroy(&s->lock);
    pthread_cond_destroy(&s->quiesced);
    free(s->loops);
    free(s);
}

struct ch2o_server *ch2o_start(int listen_fd, int threads, int idle_timeout_seconds, struct ch2o_callbacks callbacks, char *error, size_t error_size) {
    const char *load_error = ch2o_load_error();
    if (load_error) {
        set_error(error, error_size, load_error);
        return NULL;
    }
    if (threads < 1 || idle_timeout_seconds < 1 || !callbacks.opened || !callbacks.request || !callbacks.completed || !callbacks.closed) {
        set_error(error, error_size, "ch2o_start: a thread count and an idle timeout of at least 1, and every callback, are needed");
        return NULL;
    }
    struct ch2o_server *s = calloc(1, sizeof *s);
    struct glue_loop *loops = calloc((size_t)threads, sizeof *loops);
    if (!s || !loops) {
        free(s);
        free(loops);
        set_error(error, error_size, "out of memory");
        return NULL;
    }
    s->callbacks = callbacks;
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->quiesced, NULL);
    s->loops = loops;
    s->loop_count = threads;
    h2o.config_init(&s->config);
    s->config.server_name = h2o_iovec_init("", 0);  // no Server field
    s->config.http1.req_timeout = (uint64_t)idle_timeout_seconds * 1000;
    // No route takes a body, and h2o reads a whole body before the handler sees the request: a
    // client may make it hold no more than this (past it, h2o answers 413 itself).
    s->config.max_request_entity_size = 64 << 10;
    s->config.http1.upgrade_to_http2 = 0;  // HTTP/1 only: no h2c upgrade, no HTTP/2 preface
    h2o_hostconf_t *host = h2o.config_register_host(&s->config, h2o_iovec_init("default", 7), 65535);
    // on the host's fallback path: every request reaches it, whatever its path
    struct glue_handler *handler = (struct glue_handler *)h2o.create_handler(&host->fallback_path, sizeof *handler);
    handler->super.on_req = glue_on_req;
    handler->server = s;
    for (int i = 0; i < threads; ++i) loops[i].listen_fd = loops[i].wake_fd = -1;
    for (int i = 0; i < threads; ++i) {
        loops[i].server = s;
        loops[i].listen_fd = fcntl(listen_fd, F_DUPFD_CLOEXEC, 0);
        loops[i].wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (loops[i].listen_fd < 0 || loops[i].wake_fd < 0) {
            char text[256];
            snprintf(text, sizeof text, "cannot make a loop's descriptors: %s", strerror(errno));
            set_error(error, error_size, text);
            ch2o_stop(s);
            return NULL;
        }
    }
    // The loops take no signal (a write to a closed connection raises SIGPIPE on the writing thread).
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    int failed = 0;
    for (int i = 0; i < threads && !failed; ++i) {
        failed = pthread_create(&loops[i].thread, NULL, glue_loop_main, loops + i);
        loops[i].thread_started = !failed;
    }
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (failed) {
        char text[256];
        snprintf(text, sizeof text, "cannot start a loop thread: %s", strerror(failed));
        set_error(error, error_size, text);
        ch2o_stop(s);
        return NULL;
    }
    return s;
}

// Wakes every loop that runs (glue_on_wake).
static void wake_loops(struct ch2o_server *s) {
    for (int i = 0; i < s->loop_count; ++i) {
        struct glue_loop *l = s->loops + i;
        if (!l->thread_started) continue;
        uint64_t one = 1;
        while (write(l->wake_fd, &one, sizeof one) < 0 && errno == EINTR) {}
    }
}

void ch2o_quiesce(struct ch2o_server *s) {
    if (!s) return;
    __atomic_store_n(&s->quiesce_requested, 1, __ATOMIC_RELEASE);
    wake_loops(s);
    pthread_mutex_lock(&s->lock);
    for (int i = 0; i < s->loop_count; ++i)
        while (s->loops[i].thread_started && !s->loops[i].quiesced) pthread_cond_wait(&s->quiesced, &s->lock);
    pthread_mutex_unlock(&s->lock);
}

void ch2o_stop(struct ch2o_server *s) {
    if (!s) return;
    __atomic_store_n(&s->stop_requested, 1, __ATOMIC_RELEASE);
    wake_loops(s);
    for (int i = 0; i < s->loop_count; ++i)
        if (s->loops[i].thread_started) pthread_join(s->loops[i].thread, NULL);
    server_free(s);
}
