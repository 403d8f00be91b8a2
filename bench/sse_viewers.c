/* Many SSE viewers in one process, on epoll: the C twin of bench/sse_viewers.py (same arguments, same protocol
 * on standard input and output, same JSON result), so that a benchmark's clients cost a few microseconds per
 * message instead of a Python callback's tens and the figure is the server's, not the clients'.
 *
 *   sse_viewers --url http://127.0.0.1:8000 [--url ...] --clients N [--offset K] [--timeout S]
 *
 * Each viewer GETs /api/public/events from url (offset + i) mod n; when its connection ends it reconnects to the
 * next url with Last-Event-ID. Prints "ready N" once every viewer has its first bytes (or the timeout passed);
 * then reads "until N", waits until every viewer has seen id >= N (or the timeout), reads one JSON line of commit
 * times {"id": unix_time, ...} and prints one JSON line: clients, complete, gaps (per viewer), duplicates,
 * reconnects, snapshots, received, errors and a histogram of commit-to-receipt latency in 0.1 ms buckets.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define BUCKET 1e-4

typedef struct {
    char host[64];
    int port;
} url_t;

typedef struct {
    int fd, url, state; /* state: 0 idle (reconnect due at `due`), 1 connecting, 2 head, 3 body */
    int chunked;
    long need;          /* bytes left of the current chunk incl. its CRLF; -1: a size line comes next */
    char *raw;          /* bytes not parsed yet */
    size_t raw_len, raw_cap;
    char *body;         /* de-chunked text not yet split into blocks */
    size_t body_len, body_cap;
    long last, first;   /* -1: none yet */
    int got_bytes;
    long *ids;          /* positive: a message; negative: a snapshot up to that id */
    double *times;
    size_t n, cap;
    long snapshots, reconnects;
    double due;
} viewer_t;

static url_t urls[16];
static int n_urls;
static viewer_t *vs;
static int n_viewers;
static int ep;
static char errors[10][160];
static int n_errors;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void append(char **buf, size_t *len, size_t *cap, const char *data, size_t n) {
    if (*len + n > *cap) {
        size_t c = *cap ? *cap : 4096;
        while (c < *len + n) c *= 2;
        *buf = realloc(*buf, c);
        *cap = c;
    }
    memcpy(*buf + *len, data, n);
    *len += n;
}

static void error(int i, const char *what) {
    if (n_errors < 10)
        snprintf(errors[n_errors++], sizeof errors[0], "%s:%d: %s", urls[vs[i].url % n_urls].host, urls[vs[i].url % n_urls].port, what);
}

static void start(int i) {
    viewer_t *v = &vs[i];
    url_t *u = &urls[v->url % n_urls];
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)u->port);
    inet_pton(AF_INET, u->host, &a.sin_addr);
    v->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    int one = 1;
    setsockopt(v->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    v->raw_len = v->body_len = 0;
    v->need = -1;
    v->state = 1;
    if (connect(v->fd, (struct sockaddr *)&a, sizeof a) < 0 && errno != EINPROGRESS) {
        error(i, strerror(errno));
    }
    struct epoll_event e = {.events = EPOLLOUT, .data.u32 = (unsigned)i};
    epoll_ctl(ep, EPOLL_CTL_ADD, v->fd, &e);
}

static void drop(int i) {
    viewer_t *v = &vs[i];
    if (v->fd >= 0) {
        epoll_ctl(ep, EPOLL_CTL_DEL, v->fd, NULL);
        close(v->fd);
    }
    v->fd = -1;
    v->state = 0;
    v->reconnects++;
    v->url++;
    v->due = now() + 0.05 * (double)(v->reconnects < 20 ? v->reconnects : 20);
}

static void block(viewer_t *v, const char *b, size_t n, double t) {
    long id = -1;
    int snapshot = 0;
    size_t p = 0;
    while (p < n) {
        const char *line = b + p;
        const char *nl = memchr(line, '\n', n - p);
        size_t len = nl ? (size_t)(nl - line) : n - p;
        if (len > 4 && memcmp(line, "id: ", 4) == 0) id = strtol(line + 4, NULL, 10);
        else if (len >= 24 && memcmp(line, "data: {\"type\":\"snapshot\"", 24) == 0) snapshot = 1;
        p += len + 1;
    }
    if (id < 0) return;
    if (v->n == v->cap) {
        v->cap = v->cap ? v->cap * 2 : 256;
        v->ids = realloc(v->ids, v->cap * sizeof *v->ids);
        v->times = realloc(v->times, v->cap * sizeof *v->times);
    }
    if (snapshot) {
        v->snapshots++;
        if (v->first < 0) v->first = id;
        v->ids[v->n] = -id;
    } else {
        if (v->first < 0) v->first = id - 1;
        v->ids[v->n] = id;
    }
    v->times[v->n++] = t;
    v->last = id;
}

static void body(viewer_t *v, const char *data, size_t n, double t) {
    append(&v->body, &v->body_len, &v->body_cap, data, n);
    size_t start = 0;
    for (size_t k = 0; k + 1 < v->body_len; k++) {
        if (v->body[k] == '\n' && v->body[k + 1] == '\n') {
            block(v, v->body + start, k - start, t);
            start = k + 2;
            k++;
        }
    }
    memmove(v->body, v->body + start, v->body_len - start);
    v->body_len -= start;
}

/* returns 0 to keep the connection, -1 to drop it */
static int readable(int i) {
    viewer_t *v = &vs[i];
    char buf[65536];
    for (;;) {
        ssize_t got = read(v->fd, buf, sizeof buf);
        if (got == 0) return -1;
        if (got < 0) return (errno == EAGAIN || errno == EWOULDBLOCK) ? 0 : -1;
        double t = now();
        v->got_bytes = 1;
        append(&v->raw, &v->raw_len, &v->raw_cap, buf, (size_t)got);
        size_t pos = 0;
        if (v->state == 2) {
            char *end = memmem(v->raw, v->raw_len, "\r\n\r\n", 4);
            if (!end) continue;
            if (v->raw_len < 12 || memcmp(v->raw, "HTTP/1.1 200", 12) != 0) {
                error(i, "status is not 200");
                return -1;
            }
            *end = 0;
            v->chunked = strcasestr(v->raw, "transfer-encoding: chunked") != NULL;
            v->state = 3;
            pos = (size_t)(end - v->raw) + 4;
        }
        if (!v->chunked) {
            body(v, v->raw + pos, v->raw_len - pos, t);
            pos = v->raw_len;
        } else {
            while (pos < v->raw_len) {
                if (v->need < 0) {
                    char *eol = memmem(v->raw + pos, v->raw_len - pos, "\r\n", 2);
                    if (!eol) break;
                    long size = strtol(v->raw + pos, NULL, 16);
                    pos = (size_t)(eol - v->raw) + 2;
                    if (size == 0) return -1; /* the server ended the response */
                    v->need = size + 2;
                }
                size_t take = v->raw_len - pos < (size_t)v->need ? v->raw_len - pos : (size_t)v->need;
                if (take == 0) break;
                /* the chunk's own closing CRLF is not body */
                size_t payload = (size_t)v->need > 2 ? (size_t)v->need - 2 : 0;
                size_t keep = take < payload ? take : payload;
                if (keep) body(v, v->raw + pos, keep, t);
                pos += take;
                v->need -= (long)take;
                if (v->need == 0) v->need = -1;
            }
        }
        memmove(v->raw, v->raw + pos, v->raw_len - pos);
        v->raw_len -= pos;
    }
}

static void writable(int i) {
    viewer_t *v = &vs[i];
    int err = 0;
    socklen_t len = sizeof err;
    getsockopt(v->fd, SOL_SOCKET, SO_ERROR, &err, &len);
    if (err) {
        error(i, strerror(err));
        drop(i);
        return;
    }
    char req[512];
    url_t *u = &urls[v->url % n_urls];
    int n;
    if (v->last >= 0)
        n = snprintf(req, sizeof req,
                     "GET /api/public/events HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n"
                     "Last-Event-ID: %ld\r\n\r\n", u->host, u->port, v->last);
    else
        n = snprintf(req, sizeof req,
                     "GET /api/public/events HTTP/1.1\r\nHost: %s:%d\r\nAccept: text/event-stream\r\n\r\n", u->host,
                     u->port);
    if (write(v->fd, req, (size_t)n) != n) {
        error(i, "request not sent");
        drop(i);
        return;
    }
    v->state = 2;
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = (unsigned)i};
    epoll_ctl(ep, EPOLL_CTL_MOD, v->fd, &e);
}

static void poll_once(int timeout_ms) {
    struct epoll_event evs[1024];
    int n = epoll_wait(ep, evs, 1024, timeout_ms);
    for (int k = 0; k < n; k++) {
        int i = (int)evs[k].data.u32;
        if (vs[i].fd < 0) continue;
        if (vs[i].state == 1) writable(i);
        else if (readable(i) < 0) drop(i);
    }
    double t = now();
    for (int i = 0; i < n_viewers; i++)
        if (vs[i].state == 0 && vs[i].due <= t) start(i);
}

static int count_ready(void) {
    int r = 0;
    for (int i = 0; i < n_viewers; i++) r += vs[i].got_bytes;
    return r;
}

static int all_until(long until) {
    for (int i = 0; i < n_viewers; i++)
        if (vs[i].last < until) return 0;
    return 1;
}

static int cmp_long(const void *a, const void *b) {
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    int clients = 1, offset = 0;
    double timeout = 120;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--url") && n_urls < 16) {
            const char *h = strstr(argv[i + 1], "://");
            h = h ? h + 3 : argv[i + 1];
            const char *colon = strchr(h, ':');
            size_t hl = colon ? (size_t)(colon - h) : strlen(h);
            if (hl >= sizeof urls[0].host) hl = sizeof urls[0].host - 1;
            memcpy(urls[n_urls].host, h, hl);
            urls[n_urls].host[hl] = 0;
            urls[n_urls].port = colon ? atoi(colon + 1) : 80;
            n_urls++;
        } else if (!strcmp(argv[i], "--clients")) clients = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--offset")) offset = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--timeout")) timeout = atof(argv[i + 1]);
    }
    if (!n_urls) {
        fprintf(stderr, "sse_viewers: --url is required\n");
        return 2;
    }
    struct rlimit rl;
    getrlimit(RLIMIT_NOFILE, &rl);
    rl.rlim_cur = rl.rlim_max;
    setrlimit(RLIMIT_NOFILE, &rl);
    ep = epoll_create1(0);
    n_viewers = clients;
    vs = calloc((size_t)clients, sizeof *vs);
    double t0 = now();
    for (int i = 0; i < clients; i++) { /* connections open 200 at a time, 10 ms apart */
        vs[i].fd = -1;
        vs[i].url = offset + i;
        vs[i].last = vs[i].first = -1;
        vs[i].state = 0;
        vs[i].due = t0 + 0.01 * (double)(i / 200);
    }
    double deadline = now() + timeout;
    while (count_ready() < n_viewers && now() < deadline) poll_once(10);
    printf("ready %d\n", count_ready());
    fflush(stdout);

    struct epoll_event e = {.events = EPOLLIN, .data.u32 = 0xffffffffu};
    epoll_ctl(ep, EPOLL_CTL_ADD, 0, &e);
    char line[256];
    size_t line_len = 0;
    long until = 0;
    for (;;) { /* keep serving until "until N" arrives on standard input */
        struct epoll_event evs[1024];
        int n = epoll_wait(ep, evs, 1024, 10);
        int got_line = 0;
        for (int k = 0; k < n; k++) {
            if (evs[k].data.u32 == 0xffffffffu) {
                char c;
                while (read(0, &c, 1) == 1) {
                    if (c == '\n') {
                        got_line = 1;
                        break;
                    }
                    if (line_len + 1 < sizeof line) line[line_len++] = c;
                }
                continue;
            }
            int i = (int)evs[k].data.u32;
            if (vs[i].fd < 0) continue;
            if (vs[i].state == 1) writable(i);
            else if (readable(i) < 0) drop(i);
        }
        double t = now();
        for (int i = 0; i < n_viewers; i++)
            if (vs[i].state == 0 && vs[i].due <= t) start(i);
        if (got_line) break;
    }
    epoll_ctl(ep, EPOLL_CTL_DEL, 0, NULL);
    line[line_len] = 0;
    if (!strncmp(line, "until ", 6)) until = atol(line + 6);
    deadline = now() + timeout;
    while (!all_until(until) && now() < deadline) poll_once(5);
    for (int i = 0; i < n_viewers; i++)
        if (vs[i].fd >= 0) close(vs[i].fd);

    /* commit times: {"id": time, ...} */
    size_t cap = 1 << 20, len = 0;
    char *json = malloc(cap);
    int c;
    while ((c = getchar()) != EOF && c != '\n') {
        if (len + 1 >= cap) json = realloc(json, cap *= 2);
        json[len++] = (char)c;
    }
    json[len] = 0;
    long max_id = 0;
    for (int i = 0; i < n_viewers; i++)
        if (vs[i].last > max_id) max_id = vs[i].last;
    double *commit = calloc((size_t)max_id + 2, sizeof *commit);
    for (char *p = json; (p = strchr(p, '"')) != NULL;) {
        long id = strtol(p + 1, &p, 10);
        p = strchr(p, ':');
        if (!p) break;
        double t = strtod(p + 1, &p);
        if (id >= 0 && id <= max_id) commit[id] = t;
    }
    long nb = 200000; /* 20 s of 0.1 ms buckets; later receipts go to the last */
    long *hist = calloc((size_t)nb, sizeof *hist);
    long received = 0, duplicates = 0, snapshots = 0, reconnects = 0, complete = 0;
    printf("{\"clients\": %d, \"gaps\": [", n_viewers);
    for (int i = 0; i < n_viewers; i++) {
        viewer_t *v = &vs[i];
        long *pos = malloc((v->n + 1) * sizeof *pos);
        size_t np = 0;
        for (size_t k = 0; k < v->n; k++) {
            if (v->ids[k] <= 0) continue;
            pos[np++] = v->ids[k];
            received++;
            double ct = v->ids[k] <= max_id ? commit[v->ids[k]] : 0;
            if (ct > 0) {
                long b = (long)((v->times[k] - ct) / BUCKET);
                if (b < 0) b = 0;
                if (b >= nb) b = nb - 1;
                hist[b]++;
            }
        }
        qsort(pos, np, sizeof *pos, cmp_long);
        long distinct = 0, in_range = 0;
        for (size_t k = 0; k < np; k++) {
            if (k && pos[k] == pos[k - 1]) {
                duplicates++;
                continue;
            }
            distinct++;
            if (pos[k] > v->first && pos[k] <= v->last) in_range++;
        }
        (void)distinct;
        long gaps = (v->first >= 0 && v->last >= 0) ? (v->last - v->first) - in_range : 0;
        printf(i ? ", %ld" : "%ld", gaps);
        free(pos);
        snapshots += v->snapshots;
        reconnects += v->reconnects;
        complete += v->last >= until;
    }
    printf("], \"complete\": %ld, \"duplicates\": %ld, \"reconnects\": %ld, \"snapshots\": %ld, \"received\": %ld",
           complete, duplicates, reconnects, snapshots, received);
    printf(", \"errors\": [");
    for (int k = 0; k < n_errors; k++) {
        printf(k ? ", \"" : "\"");
        for (const char *p = errors[k]; *p; p++)
            if (*p != '"' && *p != '\\') putchar(*p);
        putchar('"');
    }
    printf("], \"hist\": {");
    int first = 1;
    for (long b = 0; b < nb; b++)
        if (hist[b]) {
            printf(first ? "\"%ld\": %ld" : ", \"%ld\": %ld", b, hist[b]);
            first = 0;
        }
    printf("}}\n");
    fflush(stdout);
    return 0;
}
