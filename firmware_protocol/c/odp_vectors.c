/* Host-side test driver of the odp library: reads commands on stdin, prints results (tests/test_protocol_c.py).
 *   crc HEX | cobs HEX | uncobs HEX | frame VERSION TYPE SEQ HEX | stream HEX | table | send TYPE HEX
 * "send" opens a session on a device connection, queues the message twice behind HELLO_REPLY and prints the two
 * return codes, then ACKs HELLO_REPLY and prints the frame that goes out (the first copy), then ACKs that and
 * prints what a third send returns: "RC1 RC2 FRAME RC3".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "odp.h"

static uint8_t in[8192];
static char line[20000];

static size_t unhex(const char *s, uint8_t *out, size_t cap) {
    size_t n = 0;
    while (s[0] && s[1] && s[0] != '\n' && n < cap) {
        unsigned v;
        if (sscanf(s, "%2x", &v) != 1) break;
        out[n++] = (uint8_t)v;
        s += 2;
    }
    return n;
}

static void hex(const uint8_t *p, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) printf("%02x", p[i]);
}

static uint8_t out_buf[4096];
static size_t out_len;

static void capture(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    if (out_len + len <= sizeof out_buf) {
        memcpy(out_buf + out_len, data, len);
        out_len += len;
    }
}

static void feed(odp_dev_t *dev, const uint8_t *frame, size_t n) {
    size_t i;
    for (i = 0; i < n; i++) odp_dev_rx_byte(dev, frame[i], 0);
}

static void send_long(unsigned type, const uint8_t *payload, size_t n) {
    static odp_dev_t dev;
    odp_config_t cfg;
    uint8_t frame[300], body[3];
    size_t m;
    int rc1, rc2, rc3;
    memset(&cfg, 0, sizeof cfg);
    cfg.min_version = 1;
    cfg.max_version = 1;
    cfg.write = capture;
    odp_dev_init(&dev, &cfg);
    odp_dev_boot(&dev, 0, 0);
    body[0] = 1;
    body[1] = 1;
    m = odp_frame_encode(1, ODP_HELLO, 0, body, 2, frame, sizeof frame);
    feed(&dev, frame, m);
    rc1 = odp_dev_send(&dev, (uint8_t)type, payload, (uint8_t)n, 0);
    rc2 = odp_dev_send(&dev, (uint8_t)type, payload, (uint8_t)n, 0);
    out_len = 0;
    body[0] = 0; /* ACK HELLO_REPLY (seq 0) */
    m = odp_frame_encode(1, ODP_ACK, 0, body, 1, frame, sizeof frame);
    feed(&dev, frame, m);
    printf("%d %d ", rc1, rc2);
    hex(out_buf, out_len);
    body[0] = 1; /* ACK the message (seq 1) */
    m = odp_frame_encode(1, ODP_ACK, 0, body, 1, frame, sizeof frame);
    feed(&dev, frame, m);
    rc3 = odp_dev_send(&dev, (uint8_t)type, payload, (uint8_t)n, 0);
    printf(" %d\n", rc3);
}

int main(void) {
    while (fgets(line, sizeof line, stdin)) {
        char *arg = strchr(line, ' ');
        size_t n = 0;
        if (arg) *arg++ = 0;
        else line[strcspn(line, "\n")] = 0;
        if (strcmp(line, "crc") == 0) {
            n = unhex(arg, in, sizeof in);
            printf("%08lx\n", (unsigned long)odp_crc32(in, n));
        } else if (strcmp(line, "cobs") == 0) {
            uint8_t out[9000];
            size_t m;
            n = arg ? unhex(arg, in, sizeof in) : 0;
            m = odp_cobs_encode(in, n, out, sizeof out);
            hex(out, m);
            printf("\n");
        } else if (strcmp(line, "uncobs") == 0) {
            uint8_t out[9000];
            size_t m = 0;
            n = unhex(arg, in, sizeof in);
            if (odp_cobs_decode(in, n, out, sizeof out, &m) != 0) printf("error\n");
            else {
                hex(out, m);
                printf("\n");
            }
        } else if (strcmp(line, "frame") == 0) {
            unsigned v, t, s;
            char payload[600] = "";
            uint8_t out[300];
            size_t m;
            if (sscanf(arg, "%u %u %u %599s", &v, &t, &s, payload) < 3) return 2;
            n = unhex(payload, in, sizeof in);
            m = odp_frame_encode((uint8_t)v, (uint8_t)t, (uint8_t)s, in, n, out, sizeof out);
            hex(out, m);
            printf("\n");
        } else if (strcmp(line, "stream") == 0) {
            static odp_rx_t rx;
            size_t i;
            const char *sep = "";
            odp_rx_init(&rx);
            n = unhex(arg, in, sizeof in);
            for (i = 0; i < n; i++) {
                odp_frame_t f;
                enum odp_error e = ODP_OK;
                if (!odp_rx_byte(&rx, in[i], 1, 0, &f, &e)) continue;
                printf("%s", sep);
                sep = ";";
                if (e == ODP_OK) {
                    printf("ok %u %u %u ", f.version, f.type, f.seq);
                    hex(f.payload, f.length);
                } else
                    printf("error %s", odp_error_name(e));
            }
            printf("\n");
        } else if (strcmp(line, "send") == 0) {
            unsigned t;
            char payload[600] = "";
            if (sscanf(arg, "%u %599s", &t, payload) < 1) return 2;
            n = unhex(payload, in, sizeof in);
            send_long(t, in, n);
        } else if (strcmp(line, "table") == 0) {
            unsigned t;
            for (t = 0; t < 256; t++) {
                uint8_t fixed, text;
                if (odp_layout((uint8_t)t, &fixed, &text) == 0) printf("%u %u %u;", t, fixed, text);
            }
            printf("\n");
        } else
            return 2;
        fflush(stdout);
    }
    return 0;
}
