/*
 * odp — reference C99 library for the device side of the open dealing-machine protocol
 * (firmware_protocol/PROTOCOL.md, version 1, text revision 1.2).
 *
 * No malloc, no libc beyond <stdint.h>, <stddef.h> and <string.h>; all state lives in one odp_dev_t the
 * firmware allocates statically. Bytes are received one at a time (call odp_dev_rx_byte from the UART
 * interrupt's ring buffer drain, not from the interrupt itself); time is passed in as a millisecond counter
 * that may wrap. Output goes through the write callback.
 */
#ifndef ODP_H
#define ODP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" { /* callable from C++ firmware (Arduino, ESP-IDF) */
#endif

/* ---- limits (PROTOCOL.md §1) ------------------------------------------------------------------------ */
#define ODP_VERSION 1u
#define ODP_HEADER 4u
#define ODP_CRC 4u
#define ODP_MAX_PAYLOAD 240u
#define ODP_MAX_FRAME 248u
#define ODP_MAX_ENCODED 249u
#define ODP_MAX_TEXT 120u
#define ODP_ACK_TIMEOUT_MS 200u
#define ODP_RETRY_LIMIT 8u
#define ODP_SESSION_TIMEOUT_MS 5000u
#define ODP_INTER_BYTE_TIMEOUT_MS 100u

/* Reliable messages the device can queue (PROTOCOL.md §5.5: a device with fewer than 56 pauses its
 * mechanism while the queue is full; odp_dev_queue_free tells it when). */
#ifndef ODP_TX_QUEUE
#define ODP_TX_QUEUE 8u
#endif
/* Payload bytes a queue slot holds: DEVICE_INFO is 37, BOARD_DONE 21. A longer message (a FAULT with up to the
 * 120 bytes of text PROTOCOL.md allows: 8 + 120) keeps the rest in one shared tail, so one long message at a
 * time is queued (odp_dev_send says -1 while the tail is taken). */
#ifndef ODP_TX_PAYLOAD
#define ODP_TX_PAYLOAD 48u
#endif
#define ODP_LONG_PAYLOAD (8u + ODP_MAX_TEXT)
/* Longest NAK detail the device sends (the remembered answer is kept encoded). */
#ifndef ODP_NAK_TEXT
#define ODP_NAK_TEXT 24u
#endif

/* ---- message types, enums ---------------------------------------------------------------------------- */
enum odp_type {
    ODP_HELLO = 0x01, ODP_GET_INFO = 0x02, ODP_HEARTBEAT = 0x03, ODP_GET_STATUS = 0x04,
    ODP_START_DEAL = 0x10, ODP_MAKE_BOARD = 0x11, ODP_ABORT = 0x12, ODP_RESET = 0x13,
    ODP_HELLO_REPLY = 0x81, ODP_DEVICE_INFO = 0x82, ODP_STATUS = 0x84, ODP_DEAL_START = 0x90,
    ODP_CARD_READ = 0x91, ODP_DEAL_END = 0x92, ODP_BOARD_DONE = 0x93, ODP_FAULT = 0x94,
    ODP_BOOT = 0xA0, ODP_ACK = 0xF0, ODP_NAK = 0xF1
};
#define ODP_FIRST_UNANSWERED 0xA0u

enum odp_nak_reason {
    ODP_NAK_NONE = 0, ODP_NAK_UNKNOWN_TYPE = 1, ODP_NAK_BAD_LENGTH = 2, ODP_NAK_BAD_FIELD = 3,
    ODP_NAK_UNSUPPORTED_VERSION = 4, ODP_NAK_BAD_STATE = 5, ODP_NAK_NOT_CAPABLE = 6,
    ODP_NAK_NO_SESSION = 7, ODP_NAK_BUSY = 8
};

/* Why a frame was dropped (PROTOCOL.md §5.1 step 1-5h); ODP_OK for a good frame. */
enum odp_error {
    ODP_OK = 0, ODP_E_OVERSIZE, ODP_E_COBS, ODP_E_TOO_SHORT, ODP_E_BAD_CRC, ODP_E_BAD_LENGTH,
    ODP_E_UNSUPPORTED_VERSION, ODP_E_UNKNOWN_TYPE, ODP_E_BAD_PAYLOAD, ODP_E_BAD_FIELD, ODP_E_COUNT
};

/* ---- codec -------------------------------------------------------------------------------------------- */
uint32_t odp_crc32(const uint8_t *data, size_t len);
/* COBS: return the output length, or 0 if it does not fit in cap (empty input encodes to 1 byte). */
size_t odp_cobs_encode(const uint8_t *in, size_t len, uint8_t *out, size_t cap);
/* Returns 0 and sets *out_len on success, -1 if the input is not valid COBS or does not fit. */
int odp_cobs_decode(const uint8_t *in, size_t len, uint8_t *out, size_t cap, size_t *out_len);
/* The complete frame with its trailing 0x00; 0 if it does not fit in cap or len > ODP_MAX_PAYLOAD. */
size_t odp_frame_encode(uint8_t version, uint8_t type, uint8_t seq, const uint8_t *payload, size_t len,
                        uint8_t *out, size_t cap);
/* Payload size rules of a known type: fixed size, and whether a text field follows. -1 if unknown. */
int odp_layout(uint8_t type, uint8_t *fixed, uint8_t *has_text);
/* Field ranges of a payload whose size fits (PROTOCOL.md §1). ODP_OK or ODP_E_BAD_FIELD. */
enum odp_error odp_check_fields(uint8_t type, const uint8_t *payload, size_t len);
const char *odp_error_name(enum odp_error e);

/* A decoded frame; payload points into the receiver's buffer (valid until the next byte). */
typedef struct {
    uint8_t version, type, seq, length;
    const uint8_t *payload;
} odp_frame_t;

/* Steps 5a-5h of the receive procedure on one encoded frame (without its 0x00). */
enum odp_error odp_decode(const uint8_t *enc, size_t len, uint8_t session_version, uint8_t *work,
                          odp_frame_t *frame);

/* Byte-at-a-time receiver (steps 1-4, then odp_decode). */
typedef struct {
    uint8_t buf[ODP_MAX_ENCODED];
    uint8_t work[ODP_MAX_FRAME];
    uint16_t len;
    uint8_t discarding;
    uint32_t last_byte_ms;
} odp_rx_t;

void odp_rx_init(odp_rx_t *rx);
/* Returns 0 (nothing yet) or 1 with *err set: ODP_OK and *frame filled, or the drop reason; for
 * drops after a good CRC (bad_length .. bad_field) *frame holds the trusted header. */
int odp_rx_byte(odp_rx_t *rx, uint8_t byte, uint8_t session_version, uint32_t now_ms, odp_frame_t *frame,
                enum odp_error *err);
/* Inter-byte timeout (PROTOCOL.md §5.6): discards a partial frame; returns 1 if it did. */
int odp_rx_tick(odp_rx_t *rx, uint32_t now_ms);

/* ---- device connection (PROTOCOL.md §5-§6) ------------------------------------------------------------ */
typedef struct odp_dev odp_dev_t;

enum odp_event {
    ODP_EV_HELLO,        /* a HELLO arrived (session opened, or not if version 0): stop any operation */
    ODP_EV_SESSION_LOST, /* retransmissions exhausted or host silent: stop any operation (deal void) */
    ODP_EV_ANSWERED      /* the host answered a message we sent: the queue has room again */
};

typedef struct {
    uint8_t min_version, max_version;
    void *ctx;
    /* write bytes to the link (UART, USB, TCP); must take them all */
    void (*write)(void *ctx, const uint8_t *data, size_t len);
    /* decide on a command in a session: ODP_NAK_NONE to accept, or a reason (BAD_STATE, NOT_CAPABLE,
     * BAD_FIELD, BUSY) with *detail set to a short ASCII text or NULL */
    uint8_t (*judge)(void *ctx, uint8_t type, const uint8_t *payload, uint8_t len, const char **detail);
    /* an accepted command (already ACKed): act on it, e.g. queue DEVICE_INFO after GET_INFO */
    void (*command)(void *ctx, uint8_t type, const uint8_t *payload, uint8_t len, uint32_t now_ms);
    void (*event)(void *ctx, enum odp_event ev);
} odp_config_t;

typedef struct {
    uint8_t type, len;
    uint8_t payload[ODP_TX_PAYLOAD];
} odp_msg_t;

struct odp_dev {
    odp_config_t cfg;
    odp_rx_t rx;
    uint8_t session, version;
    /* sending: a ring of queued messages; the head is in flight when inflight is set */
    odp_msg_t queue[ODP_TX_QUEUE];
    uint8_t q_head, q_count, inflight, attempts, tx_seq, inflight_seq;
#if ODP_TX_PAYLOAD < ODP_LONG_PAYLOAD
    uint8_t long_tail[ODP_LONG_PAYLOAD - ODP_TX_PAYLOAD]; /* the rest of the one long message queued */
    uint8_t long_queued;
#endif
    uint32_t sent_at;
    /* receiving: the duplicate memory */
    uint8_t rx_have, rx_last, answer_len;
    uint8_t answer[4 + 3 + ODP_NAK_TEXT + 4 + 2 + 1];
    uint8_t heard; /* last_heard is valid */
    uint32_t last_heard;
    uint8_t scratch[ODP_MAX_ENCODED + 2];
    /* health counters (report them in your service menu) */
    uint32_t frames, errors[ODP_E_COUNT], retransmissions, duplicates, naks_sent, sessions, lost;
};

void odp_dev_init(odp_dev_t *dev, const odp_config_t *cfg);
/* Power-up: sends 0x00 and BOOT(reason); no session. */
void odp_dev_boot(odp_dev_t *dev, uint8_t reason, uint32_t now_ms);
void odp_dev_rx_byte(odp_dev_t *dev, uint8_t byte, uint32_t now_ms);
/* Call every few ms: retransmission, lost host, inter-byte timeout. */
void odp_dev_poll(odp_dev_t *dev, uint32_t now_ms);
/* Queue a reliable message for the host. 0 ok, -1 queue full (try again after ODP_EV_ANSWERED),
 * -2 no session (dropped), -3 payload too large (over 8 + ODP_MAX_TEXT). */
int odp_dev_send(odp_dev_t *dev, uint8_t type, const uint8_t *payload, uint8_t len, uint32_t now_ms);
uint8_t odp_dev_queue_free(const odp_dev_t *dev);

/* ---- payload helpers ------------------------------------------------------------------------------------ */
void odp_put_u16(uint8_t *p, uint16_t v);
void odp_put_u32(uint8_t *p, uint32_t v);
uint16_t odp_get_u16(const uint8_t *p);
uint32_t odp_get_u32(const uint8_t *p);
/* the pocket of card 0..51 in a 13-byte deal record, and setting it */
uint8_t odp_record_get(const uint8_t *record, uint8_t card);
void odp_record_set(uint8_t *record, uint8_t card, uint8_t pocket);

#ifdef __cplusplus
}
#endif

#endif
