/* The smallest h2o (libh2o-evloop) server: answers every request 200 with a fixed body of
 * BODY bytes, on 127.0.0.1:PORT, one event loop per thread (THREADS), all accepting on one
 * listening socket. For comparing HTTP libraries only (bench/http-libs.sh). */
#include <h2o.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

static h2o_globalconf_t config;
static char *payload;
static size_t payload_len;
static int listen_fd;

static int on_req(h2o_handler_t *self, h2o_req_t *req) {
    static h2o_generator_t generator = {NULL, NULL};
    req->res.status = 200;
    req->res.reason = "OK";
    h2o_add_header(&req->pool, &req->res.headers, H2O_TOKEN_CONTENT_TYPE, NULL, H2O_STRLIT("image/png"));
    req->res.content_length = payload_len;
    h2o_start_response(req, &generator);
    h2o_iovec_t body = h2o_iovec_init(payload, payload_len);
    h2o_send(req, &body, 1, H2O_SEND_STATE_FINAL);
    return 0;
}

struct worker { h2o_context_t ctx; h2o_accept_ctx_t accept_ctx; };

static void on_accept(h2o_socket_t *listener, const char *err) {
    struct worker *w = listener->data;
    h2o_socket_t *sock;
    if (err != NULL) return;
    while ((sock = h2o_evloop_socket_accept(listener)) != NULL) h2o_accept(&w->accept_ctx, sock);
}

static void *run(void *arg) {
    struct worker *w = calloc(1, sizeof(*w));
    h2o_context_init(&w->ctx, h2o_evloop_create(), &config);
    w->accept_ctx.ctx = &w->ctx;
    w->accept_ctx.hosts = config.hosts;
    h2o_socket_t *sock = h2o_evloop_socket_create(w->ctx.loop, listen_fd, H2O_SOCKET_FLAG_DONT_READ);
    sock->data = w;
    h2o_socket_read_start(sock, on_accept);
    while (h2o_evloop_run(w->ctx.loop, INT32_MAX) == 0) {}
    return NULL;
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 18090, threads = argc > 2 ? atoi(argv[2]) : 2;
    payload_len = argc > 3 ? (size_t)atoi(argv[3]) : 7000;
    payload = malloc(payload_len);
    memset(payload, 'x', payload_len);
    h2o_config_init(&config);
    /* An idle keep-alive connection is closed after this long (h2o's default is 10 s): 30 s, as
     * libmicrohttpd's connection timeout in mhd-fixed.c. */
    config.http1.req_timeout = 30 * 1000;
    h2o_hostconf_t *host = h2o_config_register_host(&config, h2o_iovec_init(H2O_STRLIT("default")), 65535);
    h2o_pathconf_t *path = h2o_config_register_path(host, "/", 0);
    h2o_create_handler(path, sizeof(h2o_handler_t))->on_req = on_req;
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    int yes = 1;
    listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof(yes));
    if (bind(listen_fd, (struct sockaddr *)&addr, sizeof(addr)) != 0 || listen(listen_fd, 4096) != 0) { perror("listen"); return 1; }
    pthread_t tids[64];
    for (int i = 0; i < threads && i < 64; i++) pthread_create(&tids[i], NULL, run, NULL);
    for (int i = 0; i < threads && i < 64; i++) pthread_join(tids[i], NULL);
    return 0;
}
