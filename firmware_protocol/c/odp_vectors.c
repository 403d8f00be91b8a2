/* Host-side test driver of the odp library: reads commands on stdin, prints results (tests/test_protocol_c.py).
 *   crc HEX | cobs HEX | uncobs HEX | frame VERSION TYPE SEQ HEX | stream HEX | table
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
