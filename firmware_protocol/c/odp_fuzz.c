/* Fuzz harness of the odp library: the receiver and the device connection must survive any byte stream.
 * Built with clang -fsanitize=fuzzer it is a libFuzzer target; with -DODP_FUZZ_MAIN it runs a bounded,
 * seeded random run (argv[1] iterations, argv[2] seed) of random and mutated frames instead. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "odp.h"

static odp_dev_t dev;
static size_t written;

static void sink(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    (void)data;
    written += len;
}
static uint8_t judge(void *ctx, uint8_t type, const uint8_t *p, uint8_t len, const char **detail) {
    (void)ctx;
    (void)p;
    (void)len;
    *detail = "fuzz";
    return type == ODP_START_DEAL ? ODP_NAK_BUSY : ODP_NAK_NONE;
}
static void command(void *ctx, uint8_t type, const uint8_t *p, uint8_t len, uint32_t now) {
    uint8_t out[ODP_TX_PAYLOAD];
    (void)ctx;
    memset(out, 0, sizeof out);
    if (len > sizeof out) len = sizeof out;
    if (len) memcpy(out, p, len);
    (void)odp_dev_send(&dev, type == ODP_GET_INFO ? ODP_DEVICE_INFO : ODP_STATUS, out, type == ODP_GET_INFO ? 37 : 7, now);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    odp_config_t cfg;
    size_t i;
    uint32_t now = 0;
    uint8_t work[ODP_MAX_FRAME];
    odp_frame_t f;
    memset(&cfg, 0, sizeof cfg);
    cfg.min_version = 1;
    cfg.max_version = 1;
    cfg.write = sink;
    cfg.judge = judge;
    cfg.command = command;
    odp_dev_init(&dev, &cfg);
    odp_dev_boot(&dev, 0, now);
    (void)odp_decode(data, size, 1, work, &f);
    for (i = 0; i < size; i++) {
        odp_dev_rx_byte(&dev, data[i], now);
        if ((data[i] & 0x0Fu) == 0x0Fu) {
            now += (uint32_t)data[i] * 40u; /* time passes: retransmissions, timeouts, wrap-around */
            odp_dev_poll(&dev, now);
        }
    }
    odp_dev_poll(&dev, now + 6000u);
    return 0;
}

#ifdef ODP_FUZZ_MAIN
#include <stdio.h>
#include <stdlib.h>

static uint32_t rng;
static uint32_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng;
}

int main(int argc, char **argv) {
    unsigned long iterations = argc > 1 ? strtoul(argv[1], NULL, 10) : 10000;
    unsigned long it;
    static uint8_t buf[2048];
    rng = argc > 2 ? (uint32_t)strtoul(argv[2], NULL, 10) | 1u : 1u;
    for (it = 0; it < iterations; it++) {
        size_t n = 0;
        while (n < sizeof buf - 300 && (next() & 7u) != 0) {
            uint8_t payload[ODP_MAX_PAYLOAD + 20];
            size_t len = next() % 48u, k;
            uint8_t types[] = {0x01, 0x02, 0x03, 0x04, 0x10, 0x11, 0x12, 0x13, 0xF0, 0xF1, 0xA0, 0x91, 0x55};
            for (k = 0; k < len; k++) payload[k] = (uint8_t)next();
            if (next() % 4u == 0) { /* raw garbage */
                for (k = 0; k < len; k++) buf[n++] = payload[k];
            } else {
                size_t m = odp_frame_encode((uint8_t)(next() % 8u == 0 ? next() : 1u), types[next() % sizeof types],
                                            (uint8_t)(next() % 4u), payload, len, buf + n, sizeof buf - n);
                if (m && next() % 3u == 0) buf[n + next() % m] ^= (uint8_t)(1u << (next() % 8u)); /* damage */
                n += m;
            }
        }
        LLVMFuzzerTestOneInput(buf, n);
    }
    printf("fuzz: %lu runs, %lu bytes written, no crash\n", iterations, (unsigned long)written);
    return 0;
}
#endif
