// twolink line protocol 1 (firmware-protocol/PROTOCOL.md): framing, CRC, host-frame decoder and
// board-frame formatters. Pure C++11: no Arduino headers, no heap, no floating point, so the same code
// runs on the AVR and in the host tests (make host-test).
#ifndef TWOLINK_PROTO_H
#define TWOLINK_PROTO_H

#include <stdint.h>

// Constant strings live in flash on the AVR (its .rodata would otherwise be copied to its 2 KB of
// RAM). Every `const char*` documented as a "flash string" below is read with tlFlashChar(); on the
// host, flash and RAM are the same address space and these are plain strings.
#if defined(__AVR__)
#include <avr/pgmspace.h>
#define TL_FLASH PROGMEM
#define TL_F(s) PSTR(s)
inline char tlFlashChar(const char* p) { return (char)pgm_read_byte(p); }
inline uint32_t tlFlashU32(const uint32_t* p) { return pgm_read_dword(p); }
#else
#define TL_FLASH
#define TL_F(s) (s)
inline char tlFlashChar(const char* p) { return *p; }
inline uint32_t tlFlashU32(const uint32_t* p) { return *p; }
#endif

namespace tl {

const uint8_t kProtoVersion = 1;
const uint8_t kMaxLine = 128;  // bytes per line including the LF (section 1)
const uint8_t kMaxJoints = 2;  // the decoder's bound; the board's own count is TL_JOINTS
const int32_t kNoAck = -1;     // `ack = -` in board frames

// Rejection and refusal codes of section 4, in its table's order. Ok means "accepted".
enum class Err : uint8_t {
  Ok, Crc, Format, Char, Long, Type, Syntax, Fields, Range, Stale, Version, Unsupported, Disabled, Wdt
};
const char* errName(Err e);  // flash string, e.g. "CRC"; "" for Ok

// Flag bits of the T frame (section 3).
enum Flag : uint8_t {
  kEn = 0x01, kWdt = 0x02, kStop = 0x04, kRxErr = 0x08, kGap = 0x10, kEnc = 0x20, kBoot = 0x40, kTxDrop = 0x80
};

// CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final XOR): the same result as
// avr-libc's _crc_xmodem_update, written byte-wise without a table so it is fast and portable.
inline uint16_t crcUpdate(uint16_t crc, uint8_t b) {
  uint8_t x = (uint8_t)((crc >> 8) ^ b);
  x ^= (uint8_t)(x >> 4);
  return (uint16_t)((crc << 8) ^ ((uint16_t)x << 12) ^ ((uint16_t)x << 5) ^ x);
}
uint16_t crc16(const char* p, uint8_t n);

// Splits a byte stream into lines of at most kMaxLine bytes including the LF. After 127 bytes
// without an LF the 128th byte makes a LONG event; everything up to and including the next LF is then
// discarded (resync on LF). Memory is the fixed buffer below: nothing grows with the input.
class LineAssembler {
 public:
  enum Event : uint8_t { kNone, kLine, kLong };
  LineAssembler() : len_(0), discarding_(false), complete_(false) {}
  // Feeds one byte. kLine: line()/length() hold the line without its LF until the next push().
  Event push(uint8_t b);
  const char* line() const { return buf_; }
  uint8_t length() const { return len_; }

 private:
  char buf_[kMaxLine - 1];
  uint8_t len_;
  bool discarding_;  // dropping the rest of a LONG line up to its LF
  bool complete_;    // buf_ holds a delivered line; the next byte starts a new one
};

// A decoded host -> board frame. value[] holds the fields in order: H proto, M duty [per mille],
// Q torque [mN m], R rate [Hz], N enable, Z joint mask, W watchdog timeout [ms]; S and P have none.
struct HostFrame {
  char type;
  uint16_t seq;
  uint8_t count;  // number of values
  int32_t value[kMaxJoints];
};

struct Decoded {
  Err err;
  bool seqValid;   // frame.seq is trustworthy (the line passed the sequence-number check)
  uint8_t where;   // Syntax/Range: 0 = the sequence number, i = field i; Char: column (1-based)
  uint8_t byte;    // Char: the offending byte
  uint16_t crc;    // Crc: the CRC of the body as received (a debugging aid for hand-typed frames)
  HostFrame frame; // complete when err == Ok
};

// Decodes one line (without its LF; a CR before the LF may still be there) for a board with
// `joints` joints (1..kMaxJoints). Checks run in the order of PROTOCOL.md section 4; the first
// failing check decides the code. Never reads outside [line, line + len), never overflows.
Decoded decodeHost(const char* line, uint8_t len, uint8_t joints);

// The range of the values of a host frame type, for decoding and for error texts.
struct FieldSpec {
  uint8_t count;     // values expected
  int32_t min, max;  // inclusive; R additionally refuses 1..9
  const char* name;  // flash string: the key in the canonical meaning ("duty"), "" if no fields
};
// False for a letter that is not a host frame type.
bool hostFieldSpec(char type, uint8_t joints, FieldSpec* out);

// Builds one board frame in a caller's buffer of kMaxLine bytes: body pieces, then finish()
// appends "*" CRC LF. A frame that would exceed kMaxLine is refused (finish() returns 0), never cut.
class Out {
 public:
  explicit Out(char* buf) : b_(buf), n_(0), over_(false) {}
  Out& ch(char c);
  Out& fstr(const char* flash);  // a flash string
  Out& u32(uint32_t v);          // canonical decimal
  Out& i32(int32_t v);           // canonical signed decimal (no "+", no "-0")
  Out& hex2(uint8_t v);          // two upper-case hex digits
  Out& ack(int32_t ack);         // a sequence number, or "-" for kNoAck
  Out& head(char type, uint16_t seq, int32_t ack);  // "T seq ack"
  uint8_t finish();              // frame length including the LF, or 0 if it did not fit

 private:
  char* b_;
  uint8_t n_;
  bool over_;
};

// Identity keys of section 3 (all present, in this order). fw and board are flash strings.
struct Identity {
  const char* fw;
  const char* board;
  uint8_t joints;
  uint32_t cpr[kMaxJoints];  // [counts/rev]
  uint16_t pwm;              // PWM steps for duty 1000
  uint8_t torque;            // 1 if Q is supported
  uint16_t maxrate;          // [Hz]
  uint16_t wdtMs;            // watchdog timeout now [ms]
  uint8_t hasUp;             // 1: say `up=` (PROTOCOL.md section 3, optional, last)
  uint32_t upMs;             // milliseconds since boot, mod 2^32
};

// Each returns the frame length including the LF (0 if it would not fit), written to buf[kMaxLine].
// formatI leaves the optional `up=` out when the banner would not fit with it (8-digit cprs).
uint8_t formatI(char* buf, uint16_t seq, int32_t ack, const Identity& id);
uint8_t formatT(char* buf, uint16_t seq, int32_t ack, uint32_t tUs, const int32_t* counts, uint8_t n,
                uint8_t flags);
uint8_t formatA(char* buf, uint16_t seq, int32_t ack);
uint8_t formatE(char* buf, uint16_t seq, int32_t ack, Err code, const char* textFlash);

}  // namespace tl

#endif
