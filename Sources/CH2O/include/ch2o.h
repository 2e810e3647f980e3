// The glue over h2o 2.2.5's HTTP/1 server (libh2o-evloop), opened with dlopen as the other system
// libraries are: this header names no h2o or OpenSSL type, so Swift imports it without them.
// Every callback runs on the loop thread that owns the connection.
#ifndef CH2O_H
#define CH2O_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

// NULL when libh2o-evloop is loaded (opened once, by the first caller); else why not (dlerror's text).
const char *ch2o_load_error(void);

struct ch2o_server;
struct ch2o_request;   // one request; valid from the request callback until it is answered (ch2o_respond*, ch2o_drop)

// One header field line as the client wrote it (an obs-fold continuation line: an empty name).
struct ch2o_header { const char *name; size_t name_length; const char *value; size_t value_length; };

struct ch2o_callbacks {
    void *cls;   // passed to every callback
    // A connection was accepted on a loop thread (fd: its socket, already non-blocking). h2o closes
    // it just before `closed`: a caller that uses the number from another thread must check it is
    // still the same socket (HTTPConnectionRecord.isItsSocket). Returns the
    // connection's context pointer, handed back with each of its requests and at its close; NULL
    // refuses the connection (the glue closes the socket at once, without a word).
    void *(*opened)(void *cls, int fd);
    // A request's head is in (on the connection's loop thread). The callee answers it before
    // returning, with exactly one of ch2o_respond, ch2o_respond_stream, ch2o_drop.
    void (*request)(void *cls, void *connection, struct ch2o_request *request);
    // The request's exchange is over: its answer was written out to the socket whole, or the
    // connection went before. Called once per request that reached `request`, after it answered.
    // `pending`: bytes already read after this request (the start of a pipelined head), 0 if none;
    // `received`: every byte read from the connection's socket so far (so the HTTP layer need not
    // ask the kernel after each answer).
    void (*completed)(void *cls, void *connection, size_t pending, uint64_t received);
    // The connection is closed (called once per connection `opened` accepted; never before the
    // `completed` of its last request).
    void (*closed)(void *cls, void *connection);
    // A head refused before the HTTP layer sees it, with `status` (the glue answers and closes):
    // 400 when it cannot be parsed, 505 for a version other than HTTP/1.x, 431 (414 for a request
    // line that long) when it is past 8 KiB. `target` is what stands between the request line's first two spaces, as sent
    // (possibly empty). At most once per connection; NULL: not told.
    void (*refused)(void *cls, void *connection, int status, const char *target, size_t target_length);
};

// Starts `threads` event loops (each its own thread with its own h2o context) serving HTTP/1.x on
// the listening socket `listen_fd` (bound, listening, non-blocking; the server does not close it:
// the caller does after ch2o_stop). `idle_timeout_seconds`: h2o's http1 request timeout (idle
// keep-alive and head). On failure returns NULL and writes why into error.
struct ch2o_server *ch2o_start(int listen_fd, int threads, int idle_timeout_seconds, struct ch2o_callbacks callbacks, char *error, size_t error_size);
// No new connection: each loop closes its dup of the listening socket (never shutting it down: a
// socket shared with a holder goes on listening, and the connections waiting in its queue are the
// next server's). Returns once no loop takes any more; the connections already taken go on until
// ch2o_stop. Called from any thread but the loops', at most once, before ch2o_stop.
void ch2o_quiesce(struct ch2o_server *server);
// Stops: no new connection, every open connection closed (each gets its `completed`/`closed`),
// every loop thread joined, everything freed. Must be safe while requests are under way and
// while clients hold thousands of idle keep-alive connections. Called from any thread but the loops'.
void ch2o_stop(struct ch2o_server *server);

// The request as the client sent it:
const char *ch2o_request_method(struct ch2o_request *r, size_t *length);
// The request target exactly as sent (not normalized, not decoded).
const char *ch2o_request_target(struct ch2o_request *r, size_t *length);
// The version as sent: major*256+minor (0x101 for HTTP/1.1). If h2o folds HTTP/1.2..1.9 into 1.1,
// return what the client actually wrote (read the raw head).
int ch2o_request_version(struct ch2o_request *r);
// Every header field line as sent, in order, duplicates included: Host, Content-Length,
// Transfer-Encoding, Expect, Connection too. Names keep their case. Valid until the request is
// answered. Returns the count; *fields points at them.
size_t ch2o_request_headers(struct ch2o_request *r, const struct ch2o_header **fields);

typedef void (*ch2o_release_callback)(void *cls);
// Answers with `status` (a reason phrase from the status), the given header fields in order (the
// glue adds Content-Length itself: `content_length`; the caller never passes one), and
// `body_length` bytes at `body` sent WITHOUT COPY; `release(release_cls)` is called once h2o no
// longer needs the bytes (after they are written, or the connection went; also if the answer fails).
// `content_length` may differ from body_length: a HEAD answer or a 304 passes body_length 0 and
// the representation's length as content_length (Content-Length: that value, no body sent).
// `close`: nonzero closes the connection after this answer (send `Connection: close`).
// An HTTP/1.0 request without keep-alive closes as usual; HTTP/1.0 with `Connection: keep-alive`
// may stay open (framed by Content-Length).
void ch2o_respond(struct ch2o_request *r, int status, const struct ch2o_header *headers, size_t header_count,
                  uint64_t content_length, const void *body, size_t body_length,
                  ch2o_release_callback release, void *release_cls, int close);
// The body produced as the client takes it: read(cls, offset, buffer, max) returns the bytes it
// wrote (>0), or <=0 to cut the answer short (the connection is then closed). Called on the loop
// thread, at most `length` bytes in all; release(cls) once done. Chunks of up to 64 KiB.
// The first chunk is read before the head is sent: if that read fails, nothing is sent at all.
// A HEAD request (or `length` 0) reads nothing: the head alone, Content-Length `length`.
typedef ssize_t (*ch2o_read_callback)(void *cls, uint64_t offset, void *buffer, size_t max);
void ch2o_respond_stream(struct ch2o_request *r, int status, const struct ch2o_header *headers, size_t header_count,
                         uint64_t length, ch2o_read_callback read, ch2o_release_callback release, void *cls, int close);
// Closes the connection without an answer.
void ch2o_drop(struct ch2o_request *r);

#endif
