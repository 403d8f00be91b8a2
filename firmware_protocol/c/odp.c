/* odp — reference C99 device-side library of the open dealing-machine protocol. See odp.h. */
#include "odp.h"

#include <string.h>

/* ---- little-endian helpers ---------------------------------------------------------------------------- */
void odp_put_u16(uint8_t *p, uint16_t v) {
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)(v >> 8);
}
void odp_put_u32(uint8_t *p, uint32_t v) {
    p[0] = (uint8_t)(v & 0xFFu);
    p[1] = (uint8_t)((v >> 8) & 0xFFu);
    p[2] = (uint8_t)((v >> 16) & 0xFFu);
    p[3] = (uint8_t)(v >> 24);
}
uint16_t odp_get_u16(const uint8_t *p) { return (uint16_t)(p[0] | (uint16_t)(p[1] << 8)); }
uint32_t odp_get_u32(const uint8_t *p) {
    return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) | ((uint32_t)p[3] << 24);
}
uint8_t odp_record_get(const uint8_t *record, uint8_t card) {
    return (uint8_t)(((unsigned)record[card >> 2] >> (6u - 2u * (card & 3u))) & 3u);
}
void odp_record_set(uint8_t *record, uint8_t card, uint8_t pocket) {
    unsigned shift = 6u - 2u * (card & 3u);
    record[card >> 2] = (uint8_t)(((unsigned)record[card >> 2] & ~(3u << shift)) | (((unsigned)pocket & 3u) << shift));
}

/* ---- CRC-32/ISO-HDLC, reflected, 16-entry table (64 bytes of flash) ----------------------------------- */
static const uint32_t crc_nibble[16] = {
    0x00000000u, 0x1DB71064u, 0x3B6E20C8u, 0x26D930ACu, 0x76DC4190u, 0x6B6B51F4u, 0x4DB26158u, 0x5005713Cu,
    0xEDB88320u, 0xF00F9344u, 0xD6D6A3E8u, 0xCB61B38Cu, 0x9B64C2B0u, 0x86D3D2D4u, 0xA00AE278u, 0xBDBDF21Cu};

uint32_t odp_crc32(const uint8_t *data, size_t len) {
    uint32_t crc = 0xFFFFFFFFu;
    size_t i;
    for (i = 0; i < len; i++) {
        crc ^= data[i];
        crc = (crc >> 4) ^ crc_nibble[crc & 0x0Fu];
        crc = (crc >> 4) ^ crc_nibble[crc & 0x0Fu];
    }
    return crc ^ 0xFFFFFFFFu;
}

/* ---- COBS --------------------------------------------------------------------------------------------- */
size_t odp_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap) {
    size_t code_at = 0, o = 1, i;
    uint8_t code = 1;
    if (cap < 1) return 0;
    for (i = 0; i < len; i++) {
        if (in[i] == 0) {
            out[code_at] = code;
            if (o >= cap) return 0;
            code_at = o++;
            code = 1;
        } else {
            if (o >= cap) return 0;
            out[o++] = in[i];
            code++;
            if (code == 0xFFu && i + 1 < len) {
                out[code_at] = code;
                if (o >= cap) return 0;
                code_at = o++;
                code = 1;
            }
        }
    }
    out[code_at] = code;
    return o;
}

int odp_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *out_len) {
    size_t i = 0, o = 0;
    while (i < len) {
        uint8_t code = in[i++];
        size_t n, k;
        if (code == 0) return -1;
        n = (size_t)code - 1u;
        if (n > len - i || n > cap - o) return -1;
        for (k = 0; k < n; k++) {
            if (in[i] == 0) return -1;
            out[o++] = in[i++];
        }
        if (code != 0xFFu && i < len) {
            if (o >= cap) return -1;
            out[o++] = 0;
        }
    }
    *out_len = o;
    return 0;
}

size_t odp_frame_encode(uint8_t version, uint8_t type, uint8_t seq, const uint8_t *payload, size_t len,
                        uint8_t *out, size_t cap) {
    uint8_t raw[ODP_MAX_FRAME];
    size_t n;
    if (len > ODP_MAX_PAYLOAD) return 0;
    raw[0] = version;
    raw[1] = type;
    raw[2] = seq;
    raw[3] = (uint8_t)len;
    if (len) memcpy(raw + ODP_HEADER, payload, len);
    odp_put_u32(raw + ODP_HEADER + len, odp_crc32(raw, ODP_HEADER + len));
    n = odp_cobs_encode(raw, ODP_HEADER + len + ODP_CRC, out, cap);
    if (n == 0 || n >= cap) return 0;
    out[n] = 0;
    return n + 1;
}

/* ---- the message table (PROTOCOL.md §9; tests/test_protocol_c.py checks it against messages.json) ------ */
/* field codes: b u8, h u16, w u32, i deal_id, c card, p pocket, o position, d deal, s str16, t text */
typedef struct {
    uint8_t type;
    const char *fields;
} odp_spec_t;

static const odp_spec_t specs[] = {
    {ODP_HELLO, "bb"},        {ODP_GET_INFO, ""},         {ODP_HEARTBEAT, "w"},      {ODP_GET_STATUS, ""},
    {ODP_START_DEAL, "i"},    {ODP_MAKE_BOARD, "ihbd"},   {ODP_ABORT, ""},           {ODP_RESET, ""},
    {ODP_HELLO_REPLY, "bbb"}, {ODP_DEVICE_INFO, "bbbbbss"}, {ODP_STATUS, "bibb"},    {ODP_DEAL_START, "ibhb"},
    {ODP_CARD_READ, "iocpb"}, {ODP_DEAL_END, "ibd"},      {ODP_BOARD_DONE, "ihbbd"}, {ODP_FAULT, "ibocpt"},
    {ODP_BOOT, "bb"},         {ODP_ACK, "b"},             {ODP_NAK, "bbbt"},
};

static const char *spec_fields(uint8_t type) {
    size_t i;
    for (i = 0; i < sizeof specs / sizeof specs[0]; i++)
        if (specs[i].type == type) return specs[i].fields;
    return NULL;
}

static uint8_t field_size(char f) {
    switch (f) {
    case 'h': return 2;
    case 'w': case 'i': return 4;
    case 'd': return 13;
    case 's': return 16;
    case 't': return 0;
    default: return 1;
    }
}

int odp_layout(uint8_t type, uint8_t *fixed, uint8_t *has_text) {
    const char *f = spec_fields(type);
    unsigned size = 0;
    if (f == NULL) return -1;
    *has_text = 0;
    for (; *f; f++) {
        if (*f == 't') *has_text = 1;
        size += field_size(*f);
    }
    *fixed = (uint8_t)size;
    return 0;
}

/* RFC 3629 UTF-8: no overlong forms, no surrogates, nothing above U+10FFFF. */
static int valid_utf8(const uint8_t *s, size_t len) {
    size_t i = 0;
    while (i < len) {
        uint8_t c = s[i];
        size_t n, k;
        uint8_t lo = 0x80, hi = 0xBF;
        if (c < 0x80) { i++; continue; }
        if (c >= 0xC2 && c <= 0xDF) n = 1;
        else if (c >= 0xE0 && c <= 0xEF) {
            n = 2;
            if (c == 0xE0) lo = 0xA0;
            if (c == 0xED) hi = 0x9F;
        } else if (c >= 0xF0 && c <= 0xF4) {
            n = 3;
            if (c == 0xF0) lo = 0x90;
            if (c == 0xF4) hi = 0x8F;
        } else return 0;
        if (n > len - i - 1) return 0;
        for (k = 1; k <= n; k++) {
            uint8_t b = s[i + k];
            if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) return 0;
        }
        i += n + 1;
    }
    return 1;
}

enum odp_error odp_check_fields(uint8_t type, const uint8_t *p, size_t len) {
    const char *f = spec_fields(type);
    size_t at = 0, k;
    if (f == NULL) return ODP_E_UNKNOWN_TYPE;
    for (; *f; f++) {
        uint8_t v = at < len ? p[at] : 0;
        switch (*f) {
        case 'c': case 'o':
            if (v > 51 && v != 0xFF) return ODP_E_BAD_FIELD;
            break;
        case 'p':
            if (v > 3 && v != 0xFF) return ODP_E_BAD_FIELD;
            break;
        case 's': {
            size_t end = 16;
            while (end > 0 && p[at + end - 1] == 0) end--;
            for (k = 0; k < end; k++)
                if (p[at + k] < 0x20 || p[at + k] > 0x7E) return ODP_E_BAD_FIELD;
            break;
        }
        case 't':
            if (len - at > ODP_MAX_TEXT || !valid_utf8(p + at, len - at)) return ODP_E_BAD_FIELD;
            break;
        default:
            break;
        }
        at += field_size(*f);
    }
    return ODP_OK;
}

static int frozen(uint8_t type) {
    return type == ODP_HELLO || type == ODP_HELLO_REPLY || type == ODP_BOOT || type == ODP_ACK || type == ODP_NAK;
}

enum odp_error odp_decode(const uint8_t *enc, size_t len, uint8_t session_version, uint8_t *work,
                          odp_frame_t *frame) {
    size_t n;
    uint8_t fixed, has_text, wanted;
    size_t plen;
    if (len > ODP_MAX_ENCODED) return ODP_E_OVERSIZE;
    if (odp_cobs_decode(enc, len, work, ODP_MAX_FRAME, &n) != 0) return ODP_E_COBS;             /* 5a */
    if (n < ODP_HEADER + ODP_CRC) return ODP_E_TOO_SHORT;                                       /* 5b */
    if (odp_get_u32(work + n - ODP_CRC) != odp_crc32(work, n - ODP_CRC)) return ODP_E_BAD_CRC;  /* 5c */
    frame->version = work[0];
    frame->type = work[1];
    frame->seq = work[2];
    frame->length = work[3];
    frame->payload = work + ODP_HEADER;
    plen = n - ODP_HEADER - ODP_CRC;
    if (frame->length != plen) return ODP_E_BAD_LENGTH;                                         /* 5d */
    wanted = frozen(frame->type) ? 1u : session_version;
    if (frame->version != ODP_VERSION || frame->version != wanted) return ODP_E_UNSUPPORTED_VERSION; /* 5e */
    if (odp_layout(frame->type, &fixed, &has_text) != 0) return ODP_E_UNKNOWN_TYPE;            /* 5f */
    if (plen != fixed && (!has_text || plen < fixed)) return ODP_E_BAD_PAYLOAD;                 /* 5g */
    return odp_check_fields(frame->type, frame->payload, plen);                                 /* 5h */
}

const char *odp_error_name(enum odp_error e) {
    static const char *const names[ODP_E_COUNT] = {"ok", "oversize", "cobs", "too_short", "bad_crc",
                                                   "bad_length", "unsupported_version", "unknown_type",
                                                   "bad_payload", "bad_field"};
    return (unsigned)e < ODP_E_COUNT ? names[e] : "?";
}

/* ---- byte-at-a-time receiver ------------------------------------------------------------------------- */
void odp_rx_init(odp_rx_t *rx) { memset(rx, 0, sizeof *rx); }

int odp_rx_byte(odp_rx_t *rx, uint8_t byte, uint8_t session_version, uint32_t now_ms, odp_frame_t *frame,
                enum odp_error *err) {
    uint16_t n;
    rx->last_byte_ms = now_ms;
    if (byte != 0) {
        if (rx->discarding) return 0;                                  /* step 1 */
        if (rx->len >= ODP_MAX_ENCODED) {                              /* step 2 */
            rx->len = 0;
            rx->discarding = 1;
            *err = ODP_E_OVERSIZE;
            return 1;
        }
        rx->buf[rx->len++] = byte;                                     /* step 3 */
        return 0;
    }
    if (rx->discarding) {                                              /* step 4 */
        rx->discarding = 0;
        rx->len = 0;
        return 0;
    }
    if (rx->len == 0) return 0;
    n = rx->len;
    rx->len = 0;
    *err = odp_decode(rx->buf, n, session_version, rx->work, frame);
    return 1;
}

int odp_rx_tick(odp_rx_t *rx, uint32_t now_ms) {
    if (rx->len > 0 && (uint32_t)(now_ms - rx->last_byte_ms) >= ODP_INTER_BYTE_TIMEOUT_MS) {
        rx->len = 0;
        return 1;
    }
    return 0;
}

/* ---- device connection -------------------------------------------------------------------------------- */
static void transmit(odp_dev_t *dev, uint8_t version, uint8_t type, uint8_t seq, const uint8_t *p, size_t len) {
    size_t n = odp_frame_encode(version, type, seq, p, len, dev->scratch, sizeof dev->scratch);
    if (n) dev->cfg.write(dev->cfg.ctx, dev->scratch, n);
}

/* Send the message at the head of the queue (first send or retransmission). */
static void transmit_head(odp_dev_t *dev) {
    const odp_msg_t *m = &dev->queue[dev->q_head];
    uint8_t version = frozen(m->type) ? 1u : dev->version;
#if ODP_TX_PAYLOAD < ODP_LONG_PAYLOAD
    if (m->len > ODP_TX_PAYLOAD) {
        uint8_t whole[ODP_LONG_PAYLOAD];
        memcpy(whole, m->payload, ODP_TX_PAYLOAD);
        memcpy(whole + ODP_TX_PAYLOAD, dev->long_tail, (size_t)(m->len - ODP_TX_PAYLOAD));
        transmit(dev, version, m->type, dev->inflight_seq, whole, m->len);
        return;
    }
#endif
    transmit(dev, version, m->type, dev->inflight_seq, m->payload, m->len);
}

static void pump(odp_dev_t *dev, uint32_t now_ms) {
    if (dev->inflight || dev->q_count == 0) return;
    dev->inflight = 1;
    dev->inflight_seq = dev->tx_seq;
    dev->tx_seq = (uint8_t)(dev->tx_seq + 1u);
    dev->attempts = 1;
    dev->sent_at = now_ms;
    transmit_head(dev);
}

/* The head of the queue was answered: drop it (and free the long tail if it held it). */
static void dequeue(odp_dev_t *dev) {
#if ODP_TX_PAYLOAD < ODP_LONG_PAYLOAD
    if (dev->queue[dev->q_head].len > ODP_TX_PAYLOAD) dev->long_queued = 0;
#endif
    dev->q_head = (uint8_t)((dev->q_head + 1u) % ODP_TX_QUEUE);
    dev->q_count--;
}

static void drop_queue(odp_dev_t *dev) {
#if ODP_TX_PAYLOAD < ODP_LONG_PAYLOAD
    dev->long_queued = 0;
#endif
    dev->q_head = 0;
    dev->q_count = 0;
    dev->inflight = 0;
}

static int enqueue(odp_dev_t *dev, uint8_t type, const uint8_t *payload, uint8_t len, uint32_t now_ms) {
    odp_msg_t *m;
    if (len > ODP_LONG_PAYLOAD) return -3;
    if (dev->q_count >= ODP_TX_QUEUE) return -1;
    m = &dev->queue[(dev->q_head + dev->q_count) % ODP_TX_QUEUE];
#if ODP_TX_PAYLOAD < ODP_LONG_PAYLOAD
    if (len > ODP_TX_PAYLOAD) {
        if (dev->long_queued) return -1;
        dev->long_queued = 1;
        memcpy(dev->long_tail, payload + ODP_TX_PAYLOAD, (size_t)(len - ODP_TX_PAYLOAD));
        memcpy(m->payload, payload, ODP_TX_PAYLOAD);
        m->type = type;
        m->len = len;
        dev->q_count++;
        pump(dev, now_ms);
        return 0;
    }
#endif
    m->type = type;
    m->len = len;
    if (len) memcpy(m->payload, payload, len);
    dev->q_count++;
    pump(dev, now_ms);
    return 0;
}

static void answer(odp_dev_t *dev, uint8_t seq, uint8_t type, uint8_t reason, const char *detail) {
    uint8_t p[3 + ODP_NAK_TEXT];
    size_t len, n;
    if (reason == ODP_NAK_NONE) {
        p[0] = seq;
        n = odp_frame_encode(1, ODP_ACK, 0, p, 1, dev->answer, sizeof dev->answer);
    } else {
        p[0] = seq;
        p[1] = type;
        p[2] = reason;
        len = 0;
        if (detail != NULL) /* ASCII only, so any cut is at a code point boundary */
            while (detail[len] && len < ODP_NAK_TEXT && (uint8_t)detail[len] < 0x80) {
                p[3 + len] = (uint8_t)detail[len];
                len++;
            }
        n = odp_frame_encode(1, ODP_NAK, 0, p, 3 + len, dev->answer, sizeof dev->answer);
        dev->naks_sent++;
    }
    dev->rx_have = 1;
    dev->rx_last = seq;
    dev->answer_len = (uint8_t)n;
    if (n) dev->cfg.write(dev->cfg.ctx, dev->answer, n);
}

static void emit(odp_dev_t *dev, enum odp_event ev) {
    if (dev->cfg.event) dev->cfg.event(dev->cfg.ctx, ev);
}

static void lose(odp_dev_t *dev) {
    dev->session = 0;
    drop_queue(dev);
    dev->lost++;
    emit(dev, ODP_EV_SESSION_LOST);
}

void odp_dev_init(odp_dev_t *dev, const odp_config_t *cfg) {
    memset(dev, 0, sizeof *dev);
    dev->cfg = *cfg;
    dev->version = 1;
    odp_rx_init(&dev->rx);
}

void odp_dev_boot(odp_dev_t *dev, uint8_t reason, uint32_t now_ms) {
    static const uint8_t delimiter = 0;
    uint8_t p[2];
    (void)now_ms;
    drop_queue(dev);
    dev->session = 0;
    dev->version = 1;
    dev->tx_seq = 0;
    dev->rx_have = 0;
    dev->heard = 0;
    odp_rx_init(&dev->rx);
    p[0] = reason;
    p[1] = dev->cfg.max_version;
    dev->cfg.write(dev->cfg.ctx, &delimiter, 1);
    transmit(dev, 1, ODP_BOOT, 0, p, 2);
}

static uint8_t nak_for(enum odp_error e) {
    switch (e) {
    case ODP_E_UNSUPPORTED_VERSION: return ODP_NAK_UNSUPPORTED_VERSION;
    case ODP_E_UNKNOWN_TYPE: return ODP_NAK_UNKNOWN_TYPE;
    case ODP_E_BAD_FIELD: return ODP_NAK_BAD_FIELD;
    default: return ODP_NAK_BAD_LENGTH; /* bad_length, bad_payload */
    }
}

static void on_hello(odp_dev_t *dev, const odp_frame_t *f, uint32_t now_ms) {
    uint8_t reply[3];
    uint8_t lo = f->payload[0] > dev->cfg.min_version ? f->payload[0] : dev->cfg.min_version;
    uint8_t hi = f->payload[1] < dev->cfg.max_version ? f->payload[1] : dev->cfg.max_version;
    uint8_t version = (hi >= lo && hi >= 1) ? hi : 0;
    drop_queue(dev); /* §6.2: discard everything, restart the numbering */
    dev->tx_seq = 0;
    answer(dev, f->seq, f->type, ODP_NAK_NONE, NULL);
    dev->session = version > 0;
    dev->version = version ? version : 1;
    dev->sessions++;
    reply[0] = version;
    reply[1] = dev->cfg.min_version;
    reply[2] = dev->cfg.max_version;
    emit(dev, ODP_EV_HELLO);
    enqueue(dev, ODP_HELLO_REPLY, reply, 3, now_ms);
}

void odp_dev_rx_byte(odp_dev_t *dev, uint8_t byte, uint32_t now_ms) {
    odp_frame_t f;
    enum odp_error e = ODP_OK;
    const char *detail = NULL;
    uint8_t reason;
    if (!odp_rx_byte(&dev->rx, byte, dev->session ? dev->version : 1u, now_ms, &f, &e)) return;
    if (e != ODP_OK) {
        dev->errors[e]++;
        if (e >= ODP_E_BAD_LENGTH && f.type < ODP_FIRST_UNANSWERED) answer(dev, f.seq, f.type, nak_for(e), NULL);
        return;
    }
    dev->frames++;
    dev->heard = 1;
    dev->last_heard = now_ms;
    if (f.type == ODP_ACK || f.type == ODP_NAK) {                      /* step 6 */
        if (dev->inflight && f.payload[0] == dev->inflight_seq) {
            dev->inflight = 0;
            dequeue(dev);
            emit(dev, ODP_EV_ANSWERED);
            pump(dev, now_ms);
        }
        return;
    }
    if (f.type >= ODP_FIRST_UNANSWERED) return;                        /* steps 7-8 */
    if (f.type == ODP_HELLO) {                                         /* step 9 */
        on_hello(dev, &f, now_ms);
        return;
    }
    if (dev->rx_have && f.seq == dev->rx_last) {                       /* step 10 */
        dev->duplicates++;
        if (dev->answer_len) dev->cfg.write(dev->cfg.ctx, dev->answer, dev->answer_len);
        return;
    }
    if (!dev->session) {                                               /* step 11 */
        answer(dev, f.seq, f.type, ODP_NAK_NO_SESSION, "no session: send HELLO");
        return;
    }
    reason = dev->cfg.judge ? dev->cfg.judge(dev->cfg.ctx, f.type, f.payload, f.length, &detail) : 0; /* 12-15 */
    answer(dev, f.seq, f.type, reason, detail);
    if (reason == ODP_NAK_NONE && dev->cfg.command) dev->cfg.command(dev->cfg.ctx, f.type, f.payload, f.length, now_ms);
}

void odp_dev_poll(odp_dev_t *dev, uint32_t now_ms) {
    if (odp_rx_tick(&dev->rx, now_ms)) dev->errors[ODP_E_TOO_SHORT]++;
    if (dev->inflight && (uint32_t)(now_ms - dev->sent_at) >= ODP_ACK_TIMEOUT_MS) {
        if (dev->attempts > ODP_RETRY_LIMIT) {
            if (dev->session) lose(dev);
            else drop_queue(dev);
        } else {
            dev->attempts++;
            dev->sent_at = now_ms;
            dev->retransmissions++;
            transmit_head(dev);
        }
    }
    if (dev->session && dev->heard && (uint32_t)(now_ms - dev->last_heard) >= ODP_SESSION_TIMEOUT_MS) lose(dev);
}

int odp_dev_send(odp_dev_t *dev, uint8_t type, const uint8_t *payload, uint8_t len, uint32_t now_ms) {
    if (!dev->session) return -2;
    return enqueue(dev, type, payload, len, now_ms);
}

uint8_t odp_dev_queue_free(const odp_dev_t *dev) { return (uint8_t)(ODP_TX_QUEUE - dev->q_count); }
