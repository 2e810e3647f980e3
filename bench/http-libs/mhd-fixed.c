/* The smallest libmicrohttpd server set up as mapgate's is (epoll thread pool of THREADS,
 * answer queued on the second call): answers every request 200 with a fixed body of BODY
 * bytes on 127.0.0.1:PORT. For comparing HTTP libraries only (bench/http-libs.sh). */
#include <microhttpd.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *payload;
static size_t payload_len;

static enum MHD_Result on_req(void *cls, struct MHD_Connection *c, const char *url, const char *method, const char *version,
                              const char *upload, size_t *upload_size, void **con_cls) {
    static int marker;
    if (*con_cls == NULL) { *con_cls = &marker; return MHD_YES; }
    *upload_size = 0;
    struct MHD_Response *r = MHD_create_response_from_buffer(payload_len, payload, MHD_RESPMEM_PERSISTENT);
    MHD_add_response_header(r, "Content-Type", "image/png");
    enum MHD_Result ok = MHD_queue_response(c, 200, r);
    MHD_destroy_response(r);
    return ok;
}

int main(int argc, char **argv) {
    int port = argc > 1 ? atoi(argv[1]) : 18091, threads = argc > 2 ? atoi(argv[2]) : 2;
    payload_len = argc > 3 ? (size_t)atoi(argv[3]) : 7000;
    payload = malloc(payload_len);
    memset(payload, 'x', payload_len);
    struct sockaddr_in addr = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    struct MHD_Daemon *d = MHD_start_daemon(MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO, port, NULL, NULL, on_req, NULL,
        MHD_OPTION_SOCK_ADDR, &addr, MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)threads, MHD_OPTION_CONNECTION_LIMIT, 20000u,
        MHD_OPTION_CONNECTION_TIMEOUT, 30u, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)8192, MHD_OPTION_END);
    if (d == NULL) { fprintf(stderr, "cannot start\n"); return 1; }
    pause();
    return 0;
}
