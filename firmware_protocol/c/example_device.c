/*
 * An example dealing machine on the host: the odp library behind a pseudo-terminal, "dealing" the card
 * orders read from a file. It is the walk-through of ../README.md and the device the test suite and
 * `dealer machine conformance` talk to.
 *
 *   example_device --link PATH --cards FILE [--serial TEXT] [--pace-ms N]
 *
 * FILE: one deck order a line, 52 card indexes 0..51 (each once) separated by spaces; '#' starts a comment.
 * START_DEAL takes the next line (cycling) as the order the shuffler produced and deals round-robin into
 * N, E, S, W; MAKE_BOARD feeds the next line's order, each card into the pocket the board's deal gives it.
 * The program creates a pty, points PATH at its slave, prints "ready PATH" and serves until SIGTERM.
 * Everything POSIX is in this file; the firmware logic (judge, command, event, mechanism_step) is what a
 * microcontroller build keeps, with the pty replaced by its UART.
 */
#define _XOPEN_SOURCE 600
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "odp.h"

enum { IDLE = 0, DEALING = 1, DUPLICATING = 2, FAULT = 3 };
#define CAPS 7u /* READER | SHUFFLER | DUPLICATOR */
#define MAX_DECKS 1024

static struct {
    odp_dev_t dev;
    int fd;
    uint8_t state, fault, kind, copy;
    uint16_t board;
    uint32_t deal_id;
    uint8_t order[52], target[13], record[13];
    uint8_t pos;
    uint32_t next_card_at, pace_ms;
    char serial[17];
} m;

static uint8_t decks[MAX_DECKS][52];
static size_t n_decks, next_deck;
static volatile sig_atomic_t stop;

static uint32_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint32_t)((uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u);
}

/* ---- the link: bytes out (a UART with nobody listening loses them, so does this) ---------------------- */
static void link_write(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    while (len > 0) {
        ssize_t n = write(m.fd, data, len);
        if (n <= 0) return;
        data += n;
        len -= (size_t)n;
    }
}

/* ---- firmware logic -------------------------------------------------------------------------------------- */
static void stop_operation(void) {
    if (m.state == DEALING || m.state == DUPLICATING) m.state = IDLE;
}

static uint8_t judge(void *ctx, uint8_t type, const uint8_t *p, uint8_t len, const char **detail) {
    (void)ctx;
    (void)len;
    if ((type == ODP_START_DEAL || type == ODP_MAKE_BOARD) && m.state != IDLE) {
        *detail = "not accepted in this state";
        return ODP_NAK_BAD_STATE;
    }
    if (type == ODP_START_DEAL && odp_get_u32(p) == 0xFFFFFFFFu) {
        *detail = "deal_id must be set";
        return ODP_NAK_BAD_FIELD;
    }
    if (type == ODP_MAKE_BOARD) {
        uint8_t count[4] = {0, 0, 0, 0}, c;
        for (c = 0; c < 52; c++) count[odp_record_get(p + 7, c)]++;
        if (odp_get_u32(p) == 0xFFFFFFFFu || odp_get_u16(p + 4) == 0 || p[6] == 0 || count[0] != 13 ||
            count[1] != 13 || count[2] != 13 || count[3] != 13) {
            *detail = "bad deal_id, board, copy or deal";
            return ODP_NAK_BAD_FIELD;
        }
    }
    /* commands that queue an answer need room for it (PROTOCOL.md 5.5) */
    if ((type == ODP_GET_INFO || type == ODP_GET_STATUS || type == ODP_START_DEAL || type == ODP_MAKE_BOARD) &&
        odp_dev_queue_free(&m.dev) < 2) {
        *detail = "send queue full";
        return ODP_NAK_BUSY;
    }
    return ODP_NAK_NONE;
}

static void command(void *ctx, uint8_t type, const uint8_t *p, uint8_t len, uint32_t now) {
    uint8_t out[40];
    (void)ctx;
    (void)len;
    memset(out, 0, sizeof out);
    switch (type) {
    case ODP_GET_INFO:
        out[0] = CAPS;
        out[1] = 4;
        out[2] = 1; /* firmware 1.1.0 */
        out[3] = 1;
        out[4] = 0;
        memcpy(out + 5, m.serial, strlen(m.serial));
        memcpy(out + 21, "odp example", 11);
        odp_dev_send(&m.dev, ODP_DEVICE_INFO, out, 37, now);
        break;
    case ODP_GET_STATUS:
        out[0] = m.state;
        odp_put_u32(out + 1, (m.state == DEALING || m.state == DUPLICATING) ? m.deal_id : 0xFFFFFFFFu);
        out[5] = m.pos;
        out[6] = m.fault;
        odp_dev_send(&m.dev, ODP_STATUS, out, 7, now);
        break;
    case ODP_START_DEAL:
    case ODP_MAKE_BOARD:
        m.deal_id = odp_get_u32(p);
        m.kind = type == ODP_START_DEAL ? 0 : 1;
        m.board = m.kind ? odp_get_u16(p + 4) : 0;
        m.copy = m.kind ? p[6] : 0;
        if (m.kind) memcpy(m.target, p + 7, 13);
        memcpy(m.order, decks[next_deck], 52);
        next_deck = (next_deck + 1) % n_decks;
        memset(m.record, 0, 13);
        m.pos = 0;
        m.state = m.kind ? DUPLICATING : DEALING;
        m.next_card_at = now + m.pace_ms;
        odp_put_u32(out, m.deal_id);
        out[4] = m.kind;
        odp_put_u16(out + 5, m.board);
        out[7] = m.copy;
        odp_dev_send(&m.dev, ODP_DEAL_START, out, 8, now);
        break;
    case ODP_ABORT:
        stop_operation();
        break;
    case ODP_RESET:
        stop_operation();
        m.state = IDLE;
        m.fault = 0;
        break;
    default: /* HEARTBEAT: the ACK is the answer */
        break;
    }
}

static void event(void *ctx, enum odp_event ev) {
    (void)ctx;
    if (ev == ODP_EV_HELLO || ev == ODP_EV_SESSION_LOST) stop_operation(); /* the deal is void */
}

/* One card a step, when the pace allows and the send queue has room for it and the end message. */
static void mechanism_step(uint32_t now) {
    uint8_t out[24], card, pocket;
    if (m.state != DEALING && m.state != DUPLICATING) return;
    if ((int32_t)(now - m.next_card_at) < 0 || odp_dev_queue_free(&m.dev) < 2) return;
    card = m.order[m.pos];
    pocket = m.state == DEALING ? (uint8_t)(m.pos % 4u) : odp_record_get(m.target, card);
    odp_record_set(m.record, card, pocket);
    odp_put_u32(out, m.deal_id);
    out[4] = m.pos;
    out[5] = card;
    out[6] = pocket;
    out[7] = 255;
    odp_dev_send(&m.dev, ODP_CARD_READ, out, 8, now);
    m.pos++;
    m.next_card_at = now + m.pace_ms;
    if (m.pos < 52) return;
    odp_put_u32(out, m.deal_id);
    if (m.state == DEALING) {
        out[4] = 52;
        memcpy(out + 5, m.record, 13);
        odp_dev_send(&m.dev, ODP_DEAL_END, out, 18, now);
    } else {
        odp_put_u16(out + 4, m.board);
        out[6] = m.copy;
        out[7] = 52;
        memcpy(out + 8, m.record, 13);
        odp_dev_send(&m.dev, ODP_BOARD_DONE, out, 21, now);
    }
    m.state = IDLE;
}

/* ---- host plumbing ------------------------------------------------------------------------------------ */
static int load_decks(const char *path) {
    FILE *f = fopen(path, "r");
    char line[1024];
    unsigned lineno = 0;
    if (!f) {
        fprintf(stderr, "%s: cannot open: %s\n", path, strerror(errno));
        return -1;
    }
    while (fgets(line, sizeof line, f) && n_decks < MAX_DECKS) {
        char *s = line, *end;
        uint8_t seen[52];
        int count = 0;
        lineno++;
        if (strchr(line, '#')) *strchr(line, '#') = 0;
        memset(seen, 0, sizeof seen);
        for (;;) {
            long v = strtol(s, &end, 10);
            if (end == s) break;
            if (v < 0 || v > 51 || seen[v] || count >= 52) {
                fprintf(stderr, "%s:%u: card %ld out of range, repeated or a 53rd card\n", path, lineno, v);
                fclose(f);
                return -1;
            }
            seen[v] = 1;
            decks[n_decks][count++] = (uint8_t)v;
            s = end;
        }
        if (count == 0) continue;
        if (count != 52) {
            fprintf(stderr, "%s:%u: %d cards, a deck order needs 52\n", path, lineno, count);
            fclose(f);
            return -1;
        }
        n_decks++;
    }
    fclose(f);
    if (n_decks == 0) fprintf(stderr, "%s: no deck order in the file\n", path);
    return n_decks ? 0 : -1;
}

static int open_pty(const char *link, int *slave_out) {
    struct termios t;
    const char *name;
    int master = posix_openpt(O_RDWR | O_NOCTTY), slave;
    if (master < 0 || grantpt(master) != 0 || unlockpt(master) != 0 || (name = ptsname(master)) == NULL) return -1;
    slave = open(name, O_RDWR | O_NOCTTY);
    if (slave < 0 || tcgetattr(slave, &t) != 0) return -1;
    t.c_iflag &= (tcflag_t) ~(IGNBRK | BRKINT | PARMRK | ISTRIP | INLCR | IGNCR | ICRNL | IXON);
    t.c_oflag &= (tcflag_t)~OPOST;
    t.c_lflag &= (tcflag_t) ~(ECHO | ECHONL | ICANON | ISIG | IEXTEN);
    t.c_cflag &= (tcflag_t) ~(CSIZE | PARENB);
    t.c_cflag |= CS8;
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    if (tcsetattr(slave, TCSANOW, &t) != 0) return -1;
    fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK);
    unlink(link);
    if (symlink(name, link) != 0) return -1;
    *slave_out = slave; /* kept open: the settings stay and reads never see a hang-up */
    return master;
}

static void on_signal(int sig) {
    (void)sig;
    stop = 1;
}

int main(int argc, char **argv) {
    const char *link = NULL, *cards = NULL;
    odp_config_t cfg;
    int i, slave = -1;
    strcpy(m.serial, "ODP-EXAMPLE-1");
    for (i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--link") == 0) link = argv[i + 1];
        else if (strcmp(argv[i], "--cards") == 0) cards = argv[i + 1];
        else if (strcmp(argv[i], "--pace-ms") == 0) m.pace_ms = (uint32_t)strtoul(argv[i + 1], NULL, 10);
        else if (strcmp(argv[i], "--serial") == 0) {
            strncpy(m.serial, argv[i + 1], 16);
            m.serial[16] = 0;
        } else break;
    }
    if (link == NULL || cards == NULL || i < argc) {
        fprintf(stderr, "usage: %s --link PATH --cards FILE [--serial TEXT] [--pace-ms N]\n", argv[0]);
        return 2;
    }
    if (load_decks(cards) != 0) return 2;
    m.fd = open_pty(link, &slave);
    if (m.fd < 0) {
        fprintf(stderr, "cannot create a pty at %s: %s\n", link, strerror(errno));
        return 1;
    }
    signal(SIGTERM, on_signal);
    signal(SIGINT, on_signal);
    memset(&cfg, 0, sizeof cfg);
    cfg.min_version = 1;
    cfg.max_version = 1;
    cfg.write = link_write;
    cfg.judge = judge;
    cfg.command = command;
    cfg.event = event;
    odp_dev_init(&m.dev, &cfg);
    odp_dev_boot(&m.dev, 0, now_ms());
    printf("ready %s\n", link);
    fflush(stdout);
    while (!stop) {
        struct pollfd pfd;
        uint8_t buf[256];
        ssize_t n, k;
        pfd.fd = m.fd;
        pfd.events = POLLIN;
        pfd.revents = 0;
        poll(&pfd, 1, 5);
        n = read(m.fd, buf, sizeof buf);
        for (k = 0; k < n; k++) odp_dev_rx_byte(&m.dev, buf[k], now_ms());
        odp_dev_poll(&m.dev, now_ms());
        mechanism_step(now_ms());
    }
    unlink(link);
    close(slave);
    close(m.fd);
    return 0;
}
