// twolink line protocol 1: see proto.h and firmware-protocol/PROTOCOL.md.
#include "proto.h"

namespace tl {

namespace {

// The names of section 4, NUL-separated in Err order (index 0 = Ok = "").
const char kErrNames[] TL_FLASH =
    "\0CRC\0FORMAT\0CHAR\0LONG\0TYPE\0SYNTAX\0FIELDS\0RANGE\0STALE\0VERSION\0UNSUPPORTED\0DISABLED\0WDT";

// Field names (the keys of the canonical meaning). Namespace-scope arrays, not PSTR(): gcc-avr 5.4
// loses a PSTR() written inside an aggregate initializer.
const char kNone[] TL_FLASH = "";
const char kProto[] TL_FLASH = "proto";
const char kDuty[] TL_FLASH = "duty";
const char kTorque[] TL_FLASH = "torque";
const char kHz[] TL_FLASH = "hz";
const char kEnable[] TL_FLASH = "enable";
const char kMask[] TL_FLASH = "mask";
const char kMs[] TL_FLASH = "ms";

const uint32_t kPow10[9] TL_FLASH = {1000000000UL, 100000000UL, 10000000UL, 1000000UL, 100000UL,
                                     10000UL,      1000UL,      100UL,      10UL};

// Any run of digits longer than 9 parses to +-1e9: outside every range of the protocol, so a long
// run is RANGE and never an overflow.
const int32_t kSaturated = 1000000000L;

bool isDigit(char c) { return c >= '0' && c <= '9'; }
bool isUpperHex(char c) { return isDigit(c) || (c >= 'A' && c <= 'F'); }
char hexDigit(uint8_t h) { return (char)(h < 10 ? '0' + h : 'A' + h - 10); }

// A canonical decimal integer: "0", or an optional "-" (if signedOk) then 1-9 then digits.
// No "+", no "-0", no leading zeros. False on bad syntax; the value saturates at +-kSaturated.
bool parseInt(const char* p, uint8_t n, bool signedOk, int32_t* out) {
  bool neg = false;
  if (n > 0 && *p == '-') {
    if (!signedOk) return false;
    neg = true;
    ++p;
    --n;
  }
  if (n == 0 || (*p == '0' && (n > 1 || neg))) return false;
  int32_t v = 0;
  for (uint8_t i = 0; i < n; ++i) {
    if (!isDigit(p[i])) return false;  // keep checking syntax after saturating: "1e3" is SYNTAX
    v = v >= kSaturated / 10 ? kSaturated : v * 10 + (p[i] - '0');
  }
  *out = neg ? -v : v;
  return true;
}

// Walks the space-separated tokens of a body that passed the FORMAT check (single spaces only).
struct Tokens {
  const char* p;
  const char* end;
  uint8_t next(const char** tok) {  // length of the next token, 0 at the end
    *tok = p;
    while (p < end && *p != ' ') ++p;
    uint8_t n = (uint8_t)(p - *tok);
    if (p < end) ++p;  // the separator
    return n;
  }
};

Decoded fail(Decoded d, Err e) {
  d.err = e;
  return d;
}

}  // namespace

const char* errName(Err e) {
  const char* p = kErrNames;
  for (uint8_t i = 0; i < (uint8_t)e; ++i)
    while (tlFlashChar(p++) != '\0') {
    }
  return p;
}

uint16_t crc16(const char* p, uint8_t n) {
  uint16_t crc = 0xFFFF;
  for (uint8_t i = 0; i < n; ++i) crc = crcUpdate(crc, (uint8_t)p[i]);
  return crc;
}

LineAssembler::Event LineAssembler::push(uint8_t b) {
  if (complete_) {
    len_ = 0;
    complete_ = false;
  }
  if (discarding_) {
    if (b == '\n') discarding_ = false;
    return kNone;
  }
  if (b == '\n') {
    complete_ = true;
    return kLine;
  }
  if (len_ == sizeof buf_) {  // 127 bytes held and this is the 128th without an LF
    len_ = 0;
    discarding_ = true;
    return kLong;
  }
  buf_[len_++] = (char)b;
  return kNone;
}

bool hostFieldSpec(char type, uint8_t joints, FieldSpec* out) {
  if (joints == 0 || joints > kMaxJoints) joints = kMaxJoints;  // value[] holds kMaxJoints
  FieldSpec s = {1, 0, 0, kNone};
  switch (type) {
    case 'H': s.min = 1; s.max = 65535; s.name = kProto; break;
    case 'M': s.count = joints; s.min = -1000; s.max = 1000; s.name = kDuty; break;
    case 'Q': s.count = joints; s.min = -100000L; s.max = 100000L; s.name = kTorque; break;
    case 'R': s.max = 1000; s.name = kHz; break;
    case 'N': s.max = 1; s.name = kEnable; break;
    case 'Z': s.min = 1; s.max = (1 << joints) - 1; s.name = kMask; break;
    case 'W': s.min = 10; s.max = 1000; s.name = kMs; break;
    case 'S':
    case 'P': s.count = 0; break;
    default: return false;
  }
  *out = s;
  return true;
}

Decoded decodeHost(const char* s, uint8_t n, uint8_t joints) {
  Decoded d = Decoded();
  // 1. LONG: the LineAssembler never delivers more than 127 bytes; a direct caller might.
  if (n >= kMaxLine) return fail(d, Err::Long);

  // 2. CHAR, after stripping one CR before the (already removed) LF.
  if (n > 0 && s[n - 1] == '\r') --n;
  for (uint8_t i = 0; i < n; ++i) {
    uint8_t c = (uint8_t)s[i];
    if (c < 0x20 || c > 0x7E) {
      d.where = (uint8_t)(i + 1);
      d.byte = c;
      return fail(d, Err::Char);
    }
  }

  // 3. FORMAT: body "*" 4 upper-case hex digits; single spaces; at least a type and a sequence number.
  uint8_t star = n;
  for (uint8_t i = 0; i < n; ++i)
    if (s[i] == '*') {
      if (star != n) return fail(d, Err::Format);  // a second star
      star = i;
    }
  if (star == n || n - star != 5) return fail(d, Err::Format);
  uint16_t given = 0;
  for (uint8_t i = star + 1; i < n; ++i) {
    if (!isUpperHex(s[i])) return fail(d, Err::Format);
    given = (uint16_t)((given << 4) | (isDigit(s[i]) ? s[i] - '0' : s[i] - 'A' + 10));
  }
  if (star == 0 || s[0] == ' ' || s[star - 1] == ' ') return fail(d, Err::Format);
  uint8_t spaces = 0;
  for (uint8_t i = 1; i < star; ++i)
    if (s[i] == ' ') {
      if (s[i - 1] == ' ') return fail(d, Err::Format);
      ++spaces;
    }
  if (spaces == 0) return fail(d, Err::Format);  // no sequence number

  // 4. CRC of the body.
  d.crc = crc16(s, star);
  if (d.crc != given) return fail(d, Err::Crc);

  // 5. TYPE: one upper-case letter of a host frame (the body has a space, so s[1] exists).
  FieldSpec spec;
  if (s[1] != ' ' || !hostFieldSpec(s[0], joints, &spec)) return fail(d, Err::Type);
  d.frame.type = s[0];

  // 6. The sequence number: SYNTAX, then RANGE.
  Tokens t = {s + 2, s + star};
  const char* tok;
  uint8_t len = t.next(&tok);
  int32_t v = 0;
  if (!parseInt(tok, len, false, &v)) return fail(d, Err::Syntax);
  if (v > 65535) return fail(d, Err::Range);
  d.frame.seq = (uint16_t)v;
  d.seqValid = true;

  // 7. FIELDS: type and sequence number are two of the spaces + 1 tokens.
  if (spaces - 1 != spec.count) return fail(d, Err::Fields);

  // 8. Each field from left to right: SYNTAX, then RANGE.
  for (uint8_t i = 0; i < spec.count; ++i) {
    d.where = (uint8_t)(i + 1);
    len = t.next(&tok);
    if (!parseInt(tok, len, true, &v)) return fail(d, Err::Syntax);
    if (v < spec.min || v > spec.max || (d.frame.type == 'R' && v > 0 && v < 10)) return fail(d, Err::Range);
    d.frame.value[i] = v;
  }
  d.where = 0;
  d.frame.count = spec.count;
  return fail(d, Err::Ok);
}

Out& Out::ch(char c) {
  if (n_ >= kMaxLine - 6) over_ = true;  // keep room for "*XXXX\n"
  else b_[n_++] = c;
  return *this;
}

Out& Out::fstr(const char* p) {
  for (char c; (c = tlFlashChar(p)) != '\0'; ++p) ch(c);
  return *this;
}

Out& Out::u32(uint32_t v) {
  // Repeated subtraction: on the AVR a 32-bit division costs ~40 us per digit; this ~3 us.
  bool started = false;
  for (uint8_t i = 0; i < 9; ++i) {
    const uint32_t p = tlFlashU32(&kPow10[i]);
    char d = '0';
    while (v >= p) {
      v -= p;
      ++d;
    }
    if (started || d != '0') {
      ch(d);
      started = true;
    }
  }
  return ch((char)('0' + v));
}

Out& Out::i32(int32_t v) {
  if (v >= 0) return u32((uint32_t)v);
  ch('-');
  return u32(0u - (uint32_t)v);  // also right for INT32_MIN
}

Out& Out::hex2(uint8_t v) { return ch(hexDigit(v >> 4)).ch(hexDigit(v & 0x0F)); }

Out& Out::ack(int32_t a) { return a < 0 ? ch('-') : u32((uint32_t)a); }

Out& Out::head(char type, uint16_t seq, int32_t a) { return ch(type).ch(' ').u32(seq).ch(' ').ack(a); }

uint8_t Out::finish() {
  if (over_) return 0;
  const uint16_t crc = crc16(b_, n_);
  b_[n_++] = '*';  // ch() kept these 6 bytes free
  for (int8_t shift = 12; shift >= 0; shift -= 4) b_[n_++] = hexDigit((crc >> shift) & 0x0F);
  b_[n_++] = '\n';
  return n_;
}

namespace {
uint8_t formatIWith(char* buf, uint16_t seq, int32_t ack, const Identity& id, bool up) {
  Out o(buf);
  o.head('I', seq, ack).fstr(TL_F(" fw=")).fstr(id.fw);
  o.fstr(TL_F(" proto=")).u32(kProtoVersion).fstr(TL_F(" board=")).fstr(id.board);
  o.fstr(TL_F(" joints=")).u32(id.joints).fstr(TL_F(" cpr="));
  for (uint8_t j = 0; j < id.joints && j < kMaxJoints; ++j) {
    if (j > 0) o.ch(',');
    o.u32(id.cpr[j]);
  }
  o.fstr(TL_F(" pwm=")).u32(id.pwm).fstr(TL_F(" torque=")).u32(id.torque);
  o.fstr(TL_F(" maxrate=")).u32(id.maxrate).fstr(TL_F(" wdt=")).u32(id.wdtMs);
  if (up) o.fstr(TL_F(" up=")).u32(id.upMs);
  return o.finish();
}
}  // namespace

uint8_t formatI(char* buf, uint16_t seq, int32_t ack, const Identity& id) {
  const uint8_t n = id.hasUp ? formatIWith(buf, seq, ack, id, true) : 0;
  return n > 0 ? n : formatIWith(buf, seq, ack, id, false);
}

uint8_t formatT(char* buf, uint16_t seq, int32_t ack, uint32_t tUs, const int32_t* counts, uint8_t n,
                uint8_t flags) {
  Out o(buf);
  o.head('T', seq, ack).ch(' ').u32(tUs);
  for (uint8_t j = 0; j < n; ++j) o.ch(' ').i32(counts[j]);
  return o.ch(' ').hex2(flags).finish();
}

uint8_t formatA(char* buf, uint16_t seq, int32_t ack) { return Out(buf).head('A', seq, ack).finish(); }

uint8_t formatE(char* buf, uint16_t seq, int32_t ack, Err code, const char* text) {
  Out o(buf);
  o.head('E', seq, ack).ch(' ').fstr(errName(code));
  if (tlFlashChar(text) != '\0') o.ch(' ').fstr(text);
  return o.finish();
}

}  // namespace tl
