// Host tests of the twolink firmware (make host-test): proto.cpp and core.cpp compiled with g++ and
// ASan/UBSan, checked against the conformance vectors of firmware-protocol/vectors and driven as a
// state machine through a fake HAL in virtual time. Usage: host_test <vectors-dir>. Exit 0 = all passed.
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "config.h"
#include "core.h"
#include "host_support.h"
#include "proto.h"


namespace ht {
int g_checks = 0;
int g_failures = 0;
const char* g_test = "";
}  // namespace ht

namespace {

using namespace ht;


// ---- conformance vector files -------------------------------------------------------------------

struct Vector {
  int lineNo;
  std::string verdict, line, what;  // line: un-escaped bytes, without the implied LF
};

std::string unescape(const std::string& s, bool* ok) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\') {
      o += s[i];
      continue;
    }
    if (++i >= s.size()) break;
    switch (s[i]) {
      case 'r': o += '\r'; break;
      case 't': o += '\t'; break;
      case '\\': o += '\\'; break;
      case 'x':
        if (i + 2 < s.size() && std::isxdigit((unsigned char)s[i + 1]) && std::isxdigit((unsigned char)s[i + 2])) {
          o += (char)std::strtol(s.substr(i + 1, 2).c_str(), 0, 16);
          i += 2;
          break;
        }
        *ok = false;
        break;
      default: *ok = false;
    }
  }
  return o;
}

std::vector<Vector> loadVectors(const std::string& path) {
  std::vector<Vector> out;
  std::ifstream f(path.c_str(), std::ios::binary);
  if (!f) {
    check(false, "cannot open " + path);
    return out;
  }
  std::string text;
  int n = 0;
  while (std::getline(f, text)) {
    ++n;
    if (text.empty() || text[0] == '#') continue;
    std::vector<std::string> cols = split(text, '\t');
    bool ok = cols.size() == 3 && (cols[0] == "accept" || cols[0] == "reject");
    Vector v = {n, cols[0], "", cols.size() > 2 ? cols[2] : ""};
    if (ok) v.line = unescape(cols[1], &ok);
    if (check(ok, path + ":" + str(n) + ": not verdict<TAB>line<TAB>meaning")) out.push_back(v);
  }
  return out;
}


// ---- helpers on the firmware's decoder -----------------------------------------------------------

// The canonical meaning of a decoded host frame, as written in the vectors.
std::string meaning(const tl::HostFrame& f) {
  std::string m = std::string(1, f.type) + " seq=" + str(f.seq);
  tl::FieldSpec spec;
  if (f.count > 0 && tl::hostFieldSpec(f.type, 2, &spec)) {
    m += std::string(" ") + spec.name + "=";
    for (uint8_t i = 0; i < f.count; ++i) m += (i ? "," : "") + str(f.value[i]);
  }
  return m;
}

// Runs `bytes` plus the implied LF through a LineAssembler and decodes each line as a host frame;
// a LONG event becomes a Decoded with err Long.
std::vector<tl::Decoded> assembleHost(const std::string& bytes) {
  std::vector<tl::Decoded> out;
  tl::LineAssembler a;
  std::string all = bytes + "\n";
  for (size_t i = 0; i < all.size(); ++i) {
    tl::LineAssembler::Event e = a.push((uint8_t)all[i]);
    if (e == tl::LineAssembler::kLine) out.push_back(tl::decodeHost(a.line(), a.length(), 2));
    if (e == tl::LineAssembler::kLong) {
      tl::Decoded d = tl::Decoded();
      d.err = tl::Err::Long;
      out.push_back(d);
    }
  }
  return out;
}

std::string codeOf(const tl::Decoded& d) { return d.err == tl::Err::Ok ? "OK" : tl::errName(d.err); }

std::string firstWord(const std::string& s) { return s.substr(0, s.find(' ')); }

// ---- vectors/host-to-board.txt -------------------------------------------------------------------

int testHostVectors(const std::string& dir, int* total) {
  g_test = "host-to-board vectors";
  std::vector<Vector> vs = loadVectors(dir + "/host-to-board.txt");
  *total = (int)vs.size();
  int passed = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    const Vector& v = vs[i];
    const std::string where = "host-to-board.txt:" + str(v.lineNo) + " \"" + show(v.line) + "\"";
    std::vector<tl::Decoded> ds = assembleHost(v.line);
    if (!check(ds.size() == 1, where + ": the line assembler made " + str((long long)ds.size()) + " lines"))
      continue;
    bool ok = v.verdict == "accept"
                  ? checkEq(codeOf(ds[0]) == "OK" ? meaning(ds[0].frame) : codeOf(ds[0]), v.what, where)
                  : checkEq(codeOf(ds[0]), firstWord(v.what), where);
    passed += ok;
  }
  return passed;
}

// ---- vectors/board-to-host.txt -------------------------------------------------------------------

// key=value pairs of a vector meaning ("T seq=5 ack=4 t=1 ..."); for E, text= takes the rest.
std::map<std::string, std::string> meaningFields(const std::string& m) {
  std::map<std::string, std::string> kv;
  std::string rest = m.substr(2);
  size_t text = rest.find(" text=");
  if (m[0] == 'E' && text != std::string::npos) {
    kv["text"] = rest.substr(text + 6);
    rest = rest.substr(0, text);
  }
  std::vector<std::string> t = split(rest, ' ');
  for (size_t i = 0; i < t.size(); ++i) {
    size_t eq = t[i].find('=');
    if (eq != std::string::npos) kv[t[i].substr(0, eq)] = t[i].substr(eq + 1);
  }
  return kv;
}

int32_t ackOf(const std::string& a) { return a == "-" ? tl::kNoAck : (int32_t)std::atol(a.c_str()); }

// Rebuilds an accepted board frame with the firmware's formatters from its meaning.
// Returns the frame bytes ("" if the type has no formatter).
std::string formatFromMeaning(const std::string& m) {
  std::map<std::string, std::string> kv = meaningFields(m);
  char buf[tl::kMaxLine];
  uint8_t n = 0;
  const uint16_t seq = (uint16_t)std::atol(kv["seq"].c_str());
  const int32_t ack = ackOf(kv["ack"]);
  if (m[0] == 'T') {
    std::vector<std::string> c = split(kv["counts"], ',');
    int32_t counts[2] = {0, 0};
    for (size_t j = 0; j < c.size() && j < 2; ++j) counts[j] = (int32_t)std::atoll(c[j].c_str());
    n = tl::formatT(buf, seq, ack, (uint32_t)std::strtoul(kv["t"].c_str(), 0, 10), counts, (uint8_t)c.size(),
                    (uint8_t)std::strtoul(kv["flags"].c_str(), 0, 16));
  } else if (m[0] == 'A') {
    n = tl::formatA(buf, seq, ack);
  } else if (m[0] == 'E') {
    tl::Err code = tl::Err::Ok;
    for (uint8_t c = 1; c <= (uint8_t)tl::Err::Wdt; ++c)
      if (kv["code"] == tl::errName((tl::Err)c)) code = (tl::Err)c;
    n = tl::formatE(buf, seq, ack, code, kv["text"].c_str());
  } else if (m[0] == 'I') {
    std::vector<std::string> c = split(kv["cpr"], ',');
    tl::Identity id = {kv["fw"].c_str(), kv["board"].c_str(), (uint8_t)std::atoi(kv["joints"].c_str()), {0, 0},
                       (uint16_t)std::atoi(kv["pwm"].c_str()), (uint8_t)std::atoi(kv["torque"].c_str()),
                       (uint16_t)std::atoi(kv["maxrate"].c_str()), (uint16_t)std::atoi(kv["wdt"].c_str()),
                       (uint8_t)(kv.count("up") ? 1 : 0), (uint32_t)std::strtoul(kv["up"].c_str(), 0, 10)};
    for (size_t j = 0; j < c.size() && j < 2; ++j) id.cpr[j] = (uint32_t)std::strtoul(c[j].c_str(), 0, 10);
    n = tl::formatI(buf, seq, ack, id);
  }
  return std::string(buf, n);
}

int testBoardVectors(const std::string& dir, int* total, int* formatted, int* exact) {
  g_test = "board-to-host vectors";
  std::vector<Vector> vs = loadVectors(dir + "/board-to-host.txt");
  *total = (int)vs.size();
  int passed = 0;
  for (size_t i = 0; i < vs.size(); ++i) {
    const Vector& v = vs[i];
    const std::string where = "board-to-host.txt:" + str(v.lineNo) + " \"" + show(v.line) + "\"";
    // 1. The independent board-frame decoder (used on every frame the core sends) gives the verdict.
    tl::LineAssembler a;
    std::vector<Verdict> got;
    std::string all = v.line + "\n";
    for (size_t k = 0; k < all.size(); ++k) {
      tl::LineAssembler::Event e = a.push((uint8_t)all[k]);
      if (e == tl::LineAssembler::kLine) got.push_back(checkBoardLine(std::string(a.line(), a.length())));
      if (e == tl::LineAssembler::kLong) got.push_back(Verdict{"LONG", ""});
    }
    if (!check(got.size() == 1, where + ": not exactly one line")) continue;
    bool ok = v.verdict == "accept" ? checkEq(got[0].code == "OK" ? got[0].meaning : got[0].code, v.what, where)
                                    : checkEq(got[0].code, firstWord(v.what), where);
    // 2. Accepted frames: the firmware's formatter, given the meaning, writes the same bytes.
    if (v.verdict == "accept") {
      std::string want = v.line;
      if (!want.empty() && want[want.size() - 1] == '\r') want.erase(want.size() - 1);
      want += "\n";
      const std::string mine = formatFromMeaning(v.what);
      if (mine == want) {
        ++*exact;
        ++*formatted;
      } else if (v.what[0] == 'I') {
        // An identity frame with its keys in another order or with extra keys cannot be byte-equal;
        // the firmware's frame must then carry exactly the required keys with the vector's values.
        ok = checkEq(checkBoardLine(mine.substr(0, mine.size() - 1)).meaning, v.what, where + " (formatI)") && ok;
        *formatted += ok;
      } else {
        ok = checkEq(show(mine), show(want), where + " (formatter)") && ok;
        *formatted += ok;
      }
    }
    passed += ok;
  }
  return passed;
}

// ---- protocol unit checks ------------------------------------------------------------------------

void testProtoUnits() {
  g_test = "proto";
  checkEq(hex4(tl::crc16("123456789", 9)), "29B1", "CRC-16/CCITT-FALSE check value");
  // The byte-wise CRC equals the bit-serial definition (poly 0x1021, MSB first) on every byte/state.
  uint32_t rng = 12345;
  int mismatches = 0;
  for (int i = 0; i < 200000; ++i) {
    rng = rng * 1103515245u + 12345u;
    uint16_t crc = (uint16_t)(rng >> 8);
    uint8_t b = (uint8_t)(rng >> 24);
    uint16_t ref = crc ^ (uint16_t)(b << 8);
    for (int k = 0; k < 8; ++k) ref = (uint16_t)(ref & 0x8000 ? (ref << 1) ^ 0x1021 : ref << 1);
    mismatches += ref != tl::crcUpdate(crc, b);
  }
  checkEq(mismatches, 0, "byte-wise CRC vs bit-serial reference");

  // Every single-bit error in a valid frame is refused (never decoded as another valid frame).
  const std::string good = "M 1 100 -200*6A99";
  int accepted = 0;
  for (size_t i = 0; i < good.size(); ++i)
    for (int bit = 0; bit < 8; ++bit) {
      std::string bad = good;
      bad[i] = (char)(bad[i] ^ (1 << bit));
      if (bad[i] == '\n') continue;  // would split the line: a different test
      accepted += tl::decodeHost(bad.data(), (uint8_t)bad.size(), 2).err == tl::Err::Ok;
    }
  checkEq(accepted, 0, "single-bit errors accepted");

  // Digit runs of any length are RANGE, never an overflow (UBSan watches the arithmetic).
  for (size_t digits = 1; digits <= 100; ++digits) {
    std::string body = "M 1 " + std::string(digits, '9') + " 0";
    std::string line = body + "*" + hex4(tl::crc16(body.data(), (uint8_t)body.size()));
    tl::Decoded d = tl::decodeHost(line.data(), (uint8_t)line.size(), 2);
    check(digits <= 3 ? d.err == tl::Err::Ok : d.err == tl::Err::Range, "duty of " + str((long long)digits) + " nines");
    std::string neg = "M 1 -" + std::string(digits, '9') + " 0";
    line = neg + "*" + hex4(tl::crc16(neg.data(), (uint8_t)neg.size()));
    d = tl::decodeHost(line.data(), (uint8_t)line.size(), 2);
    check(digits <= 3 ? d.err == tl::Err::Ok : d.err == tl::Err::Range, "duty of minus " + str((long long)digits) + " nines");
  }

  // PROTOCOL.md section 4: "-1" is SYNTAX as a sequence number, RANGE in any field that must be >= 0.
  const char* minusOne[][2] = {{"N 1 -1", "RANGE"}, {"W 1 -1", "RANGE"}, {"H 1 -1", "RANGE"}, {"Z 1 -1", "RANGE"},
                               {"R 1 -1", "RANGE"}, {"P -1", "SYNTAX"}, {"M 1 -1 -1", "OK"}};
  for (size_t i = 0; i < sizeof minusOne / sizeof minusOne[0]; ++i) {
    const std::string body = minusOne[i][0];
    const std::string line = body + "*" + hex4(tl::crc16(body.data(), (uint8_t)body.size()));
    checkEq(codeOf(tl::decodeHost(line.data(), (uint8_t)line.size(), 2)), minusOne[i][1], body);
  }

  // The assembler: 127 bytes + LF is a line; the 128th byte without LF is one LONG, then resync.
  tl::LineAssembler a;
  int lines = 0, longs = 0;
  for (int i = 0; i < 127; ++i) longs += a.push('x') == tl::LineAssembler::kLong;
  lines += a.push('\n') == tl::LineAssembler::kLine;
  checkEq(a.length(), 127, "127-byte line length");
  for (int i = 0; i < 1000; ++i) longs += a.push('y') == tl::LineAssembler::kLong;
  lines += a.push('\n') == tl::LineAssembler::kLine;
  for (const char* p = "P 1*"; *p; ++p) a.push((uint8_t)*p);
  lines += a.push('\n') == tl::LineAssembler::kLine;
  checkEq(lines, 2, "lines");
  checkEq(longs, 1, "LONG events for 1000 bytes without LF");
  checkEq(std::string(a.line(), a.length()), "P 1*", "line after a resync");

  // Formatter limits: a frame is at most 128 bytes including the LF; longer ones are refused whole.
  char buf[tl::kMaxLine];
  tl::Out o122(buf);
  for (int i = 0; i < 122; ++i) o122.ch('p');
  checkEq((int)o122.finish(), 128, "122-byte body");
  tl::Out o123(buf);
  for (int i = 0; i < 123; ++i) o123.ch('p');
  checkEq((int)o123.finish(), 0, "123-byte body refused");
  // The widest T and I frames fit.
  const int32_t wide[2] = {-2147483647 - 1, -2147483647 - 1};
  checkEq((int)tl::formatT(buf, 65535, 65535, 4294967295u, wide, 2, 0xFF) > 0, true, "widest T fits");
  tl::Identity id = {"twolink-fw/1.0.0", "mega", 2, {99999999u, 99999999u}, 400, 0, 1000, 1000, 0, 0};
  checkEq((int)tl::formatI(buf, 65535, 65535, id), 128, "widest I of our firmware (cpr <= 99999999) fits");
  id.hasUp = 1;
  id.upMs = 4294967295u;
  checkEq((int)tl::formatI(buf, 65535, 65535, id), 128, "up= is left out (optional) where it would not fit");
  id.cpr[0] = 4800u;
  id.cpr[1] = 2400u;
  checkEq((int)tl::formatI(buf, 17, 16, id), 128, "up=4294967295 fits with cprs of 4 digits and short seq/ack");
  check(std::string(buf, 128).find(" up=4294967295*") != std::string::npos, "up= is the last key");
  id.cpr[0] = 99999999u;
  id.cpr[1] = 99999999u;
  id.hasUp = 0;
  id.cpr[0] = 100000000u;
  checkEq((int)tl::formatI(buf, 65535, 65535, id), 0, "an I over 128 bytes is refused");
}


void testBoot() {
  g_test = "boot and banner";
  Rig r;
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "motors zero at boot");
  checkEq(r.hal.wire,
          "\nI 0 - fw=twolink-fw/1.0.0 proto=1 board=uno joints=2 cpr=2048,2048 pwm=400 torque=0 maxrate=1000 "
          "wdt=100 up=0*9313\n",
          "banner bytes (the board-to-host vector with up=0)");
  r.frames();
  checkEq((int)r.core.flags(), (int)tl::kBoot, "flags at boot");
  r.advance(499000);  // the banner went out at t0 = 1000
  checkEq((int)r.frames().size(), 0, "no banner before 500 ms");
  r.at(r.now + 1000);
  checkEq(shape(r.one("banner repeat")), "I -", "banner repeat at 500 ms");
  r.advance(500000);
  checkEq(tok(r.one("second repeat"), 1), "2", "repeats are numbered");
  r.send("H 0 1");
  std::string i = r.one("answer to H");
  checkEq(tok(i, 0) + " " + tok(i, 2), "I 0", "I answers H with its seq");
  checkEq((int)r.core.flags(), 0, "BOOT cleared by H");
  r.advance(2000000);
  checkEq((int)r.frames().size(), 0, "no banner after the handshake");
}

void testVersionAndHandshakeGate() {
  g_test = "handshake";
  Rig r;
  r.frames();
  r.send("H 0 2");
  checkEq(r.one("H 0 2"), "E 1 0 VERSION board speaks protocol 1", "wrong protocol");
  r.send("N 1 1");
  checkEq(shape(r.one("N before H")), "E 1 DISABLED", "N before H");
  r.send("M 2 500 500");
  checkEq(shape(r.one("M before H")), "E 2 DISABLED", "M before H");
  r.send("P 3");
  checkEq(shape(r.one("P before H")), "E 3 DISABLED", "P before H");
  check(!r.core.enabled() && (r.core.flags() & tl::kBoot), "still disabled and BOOT");
  r.advance(500000);
  checkEq(shape(r.one("banner")), "I -", "banner continues after a refused H");
  for (size_t k = 0; k < r.hal.log.size(); ++k) check(r.hal.log[k].second == 0, "a duty was applied before H");
  r.send("H 65535 1");
  checkEq(shape(r.one("H")), "I 65535", "H is accepted whatever its number");
  r.send("N 0 1");  // 65535 + 1 wraps to 0: in order
  checkEq(shape(r.one("N after wrap")), "A 0", "sequence wraps 65535 -> 0");
}

void testMotorCommands() {
  g_test = "M, sync telemetry";
  Rig r(12340000);
  r.session(false);
  r.send("M 2 100 100");
  checkEq(shape(r.one("M while disabled")), "E 2 DISABLED", "M while disabled");
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "duty not applied while disabled");
  r.send("N 3 1");
  checkEq(shape(r.one("N 1")), "A 3", "N 1");
  r.hal.counts[0] = 1024;
  r.hal.counts[1] = -512;
  r.at(12345678);
  r.send("M 4 120 -35");
  check(r.hal.duty[0] == 120 && r.hal.duty[1] == -35, "duty applied when enabled");
  std::string t = r.one("T after M");
  checkEq(t.substr(t.find(' ', 2)), " 4 12345678 1024 -512 01", "T carries ack, time [us], counts, flags EN");
  r.send("Q 5 100 100");
  checkEq(shape(r.one("Q")), "E 5 UNSUPPORTED", "Q without a current loop");
  check(r.hal.duty[0] == 120, "Q changes nothing");
  r.send("P 6");
  checkEq(shape(r.one("P")), "A 6", "P");
  r.send("N 7 0");
  r.one("N 0");
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0 && !r.core.enabled(), "N 0 zeroes and disables");
  r.send("Q 8 1 1");
  checkEq(shape(r.one("Q disabled")), "E 8 DISABLED", "Q while disabled");
}

void testSequence() {
  g_test = "sequence numbers";
  Rig r;
  uint16_t s = r.session();
  r.send("M " + str(s) + " 100 100");
  std::string t = r.one("M");
  checkEq(flagsOf(t), "01", "in order: no GAP");
  r.send("M " + str(s) + " 500 500");
  checkEq(shape(r.one("duplicate")), "E " + str(s) + " STALE", "duplicate");
  checkEq(r.hal.duty[0], 100, "duplicate not applied");
  r.send("M " + str(s - 1) + " 500 500");
  checkEq(shape(r.one("reordered")), "E " + str(s - 1) + " STALE", "reordered");
  r.send("M " + str(s + 32768) + " 500 500");
  checkEq(shape(r.one("delta 32768")), "E " + str(s + 32768) + " STALE", "delta 32768 is old");
  checkEq(r.hal.duty[0], 100, "stale frames not applied");
  r.send("M " + str(s + 2) + " 200 200");  // s + 1 lost
  t = r.one("gap");
  checkEq(tok(t, 2), str(s + 2), "a gap is accepted");
  checkEq(flagsOf(t), "19", "GAP and RXERR (the stale lines) in the next T");
  r.send("M " + str(s + 3) + " 200 200");
  checkEq(flagsOf(r.one("after gap")), "01", "GAP and RXERR cleared by the T that reported them");
  r.send("M " + str(s + 3 + 32767) + " 300 300");
  checkEq(flagsOf(r.one("delta 32767")), "11", "delta 32767 is a gap, accepted");
}

void testRejectionsAnswered() {
  g_test = "rejections";
  Rig r;
  uint16_t s = r.session();
  r.raw("M 9 100 -200*0000\n");
  std::string e = r.one("bad CRC");
  checkEq(shape(e), "E - CRC", "CRC error has ack -");
  check(e.find("the body's CRC is") != std::string::npos, "CRC text names the body's CRC: " + e);
  r.send("M " + str(s) + " 2000 0");
  checkEq(r.one("range"), "E 5 " + str(s) + " RANGE duty must be -1000..1000", "RANGE carries the seq");
  r.send("M 01 1 1");
  checkEq(shape(r.one("seq syntax")), "E - SYNTAX", "bad seq: ack -");
  r.send("R " + str(s) + " 5");
  checkEq(r.one("R 5"), "E 7 " + str(s) + " RANGE hz must be 0 or 10..1000", "R range text");
  r.send("X " + str(s));
  checkEq(shape(r.one("type")), "E - TYPE", "TYPE");
  r.raw(std::string("M 1 \x01\n", 6));
  checkEq(r.one("char"), "E 9 - CHAR byte 0x01 at column 5", "CHAR text");
  r.send("S " + str(s) + " 1");
  checkEq(r.one("fields"), "E 10 " + str(s) + " FIELDS S takes 0 fields", "FIELDS text");
  check(r.hal.duty[0] == 0 && r.core.enabled(), "rejected lines change nothing");
  r.send("M " + str(s) + " 1 1");  // the rejected frames did not consume s
  checkEq(flagsOf(r.one("after rejects")), "09", "RXERR after rejected lines");
}

void testWatchdog() {
  g_test = "watchdog";
  Rig r;
  uint16_t s = r.session();
  r.send("M " + str(s) + " 300 -300");
  r.frames();
  const uint32_t fed = r.now;
  const size_t before = r.hal.log.size();
  r.advance(100000, 1);  // every microsecond up to the deadline
  check(r.hal.duty[0] == 300 && r.core.enabled(), "still driving at exactly the timeout");
  check(r.hal.log.size() == before, "no duty change before the timeout");
  checkEq((int)r.frames().size(), 0, "no frame before the timeout");
  r.at(fed + 100001);
  check(r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "motors cut one tick after the timeout");
  check(!r.core.enabled(), "disabled by the watchdog");
  std::vector<std::string> f = r.frames();
  checkEq((int)f.size(), 2, "E WDT and one T");
  if (f.size() == 2) {
    checkEq(f[0].substr(f[0].find(' ', 2)), " - WDT no command for 100 ms", "E WDT");
    checkEq(flagsOf(f[1]), "02", "T after WDT: WDT set, EN clear");
    checkEq(tok(f[1], 2), str(s), "T after WDT still acks the last applied M");
  }
  r.advance(1000000);
  checkEq((int)r.frames().size(), 0, "E WDT only once");
  r.send("M " + str(s + 1) + " 300 300");
  checkEq(shape(r.one("M after WDT")), "E " + str(s + 1) + " DISABLED", "stays disabled");
  r.send("N " + str(s + 2) + " 1");
  r.one("N 1");
  checkEq((int)r.core.flags(), (int)tl::kEn, "N 1 clears WDT");
  r.send("M " + str(s + 3) + " 50 50");
  checkEq(flagsOf(r.one("M")), "01", "motion resumes after N 1");
  checkEq(r.hal.duty[0], 50, "duty after N 1");

  // W changes the timeout; P and every other accepted frame feed it.
  r.send("W " + str(s + 4) + " 50");
  checkEq(shape(r.one("W")), "A " + str(s + 4), "W");
  checkEq(r.core.watchdogMs(), 50, "timeout now 50 ms");
  for (int k = 0; k < 20; ++k) {  // 20 pings 40 ms apart: never cut
    r.advance(40000);
    r.send("P " + str(s + 5 + k));
  }
  r.frames();
  check(r.core.enabled() && r.hal.duty[0] == 50, "pings keep the watchdog fed");
  const uint32_t t = r.now;
  r.at(t + 50000);
  check(r.core.enabled(), "not cut at 50 ms");
  r.at(t + 50001);
  check(!r.core.enabled() && r.hal.duty[0] == 0, "cut after 50 ms");
  std::vector<std::string> cut = r.frames();
  check(!cut.empty() && cut[0].find(" - WDT no command for 50 ms") != std::string::npos, "E WDT names the new timeout");
}

void testWatchdogAcrossMicrosWrap() {
  g_test = "watchdog across the micros() wrap";
  Rig r(0xFFFFFFFFu - 60000);
  uint16_t s = r.session();
  r.send("M " + str(s) + " 10 10");
  const uint32_t fed = r.now;
  r.at(fed + 100000);  // past the wrap
  check(r.core.enabled() && r.now < fed, "still enabled after the wrap");
  r.at(fed + 100001);
  check(!r.core.enabled() && r.hal.duty[0] == 0, "cut on time after the wrap");
}

void testLateFrameLosesToWatchdog() {
  g_test = "late frame";
  Rig r;
  uint16_t s = r.session();
  r.send("M " + str(s) + " 10 10");
  r.frames();
  r.now += 200000;  // the loop did not tick; a frame arrives after the deadline
  r.send("M " + str(s + 1) + " 500 500");
  std::vector<std::string> f = r.frames();
  check(f.size() == 3 && shape(f[2]) == "E " + str(s + 1) + " DISABLED", "late M refused after the cut");
  checkEq(r.hal.duty[0], 0, "late M not applied");
}

void testStopAndZero() {
  g_test = "S and Z";
  Rig r;
  uint16_t s = r.session();
  r.send("M " + str(s) + " 700 700");
  r.frames();
  const size_t before = r.hal.log.size();
  r.send("S " + str(s + 1));
  check(r.hal.log.size() > before && r.hal.duty[0] == 0 && r.hal.duty[1] == 0, "S zeroes at once");
  checkEq(shape(r.one("S")), "A " + str(s + 1), "S answered");
  checkEq((int)r.core.flags(), (int)tl::kStop, "STOP set, EN clear");
  r.send("M " + str(s + 2) + " 700 700");
  checkEq(shape(r.one("M after S")), "E " + str(s + 2) + " DISABLED", "M after S refused");
  r.send("N " + str(s + 3) + " 1");
  r.one("N");
  checkEq((int)r.core.flags(), (int)tl::kEn, "N 1 clears STOP");

  r.hal.counts[0] = 100;
  r.hal.counts[1] = -200;
  r.send("Z " + str(s + 4) + " 1");
  checkEq(shape(r.one("Z 1")), "A " + str(s + 4), "Z answered");
  check(r.hal.counts[0] == 0 && r.hal.counts[1] == -200, "Z 1 zeroes joint 1 only");
  r.send("Z " + str(s + 5) + " 2");
  r.one("Z 2");
  check(r.hal.counts[1] == 0, "Z 2 zeroes joint 2");
  r.hal.counts[0] = r.hal.counts[1] = 5;
  r.send("Z " + str(s + 6) + " 3");
  r.one("Z 3");
  check(r.hal.counts[0] == 0 && r.hal.counts[1] == 0, "Z 3 zeroes both");
}

void testRates() {
  g_test = "telemetry rate";
  Rig r;
  uint16_t s = r.session();
  const uint32_t tR = r.now;  // the sample grid starts here: t_k = tR + k P
  r.send("R " + str(s) + " 10");
  r.one("R 10");
  checkEq(r.core.rateHz(), 10, "rate");
  r.send("M " + str(s + 1) + " 1 1");
  checkEq((int)r.frames().size(), 0, "no T per M in streaming mode");
  r.nextSample();
  std::vector<std::string> f = r.frames();  // the first sample applied the M
  r.send("N " + str(s + 2) + " 0");  // disabled, so the host watchdog stays quiet while we only listen
  checkEq(shape(r.one("N 0")), "A " + str(s + 2), "N 0");
  r.advance(tR + 1000000 - r.now, 100);
  const std::vector<std::string> more = r.frames();
  f.insert(f.end(), more.begin(), more.end());
  checkEq((int)f.size(), 10, "10 Hz: 10 T frames in 1 s");
  bool spaced = true;
  for (size_t i = 0; i < f.size(); ++i) {
    spaced = spaced && tok(f[i], 0) == "T" && std::strtoul(tok(f[i], 3).c_str(), 0, 10) == tR + 100000 * (i + 1);
    spaced = spaced && tok(f[i], 2) == str(s + 1) && flagsOf(f[i]) == (i == 0 ? "01" : "00");
  }
  check(spaced, "T every 100 ms on the timer's grid, acking the last applied M");
  s += 1;
  r.send("R " + str(s + 2) + " 1000");
  r.one("R 1000");
  r.advance(1000000, 50);
  f = r.frames();
  checkEq((int)f.size(), 1000, "1000 Hz: 1000 T frames in 1 s");
  r.advance(10000000, 5000);  // loop passes 5 ms apart: each sends the newest sample, the rest dropped
  f = r.frames();
  checkEq((int)f.size(), 2000, "one T per pass when the loop is late");
  if (f.size() > 1) {
    checkEq(std::atol(tok(f[1], 1).c_str()) - std::atol(tok(f[0], 1).c_str()), 5, "4 skipped samples use up seqs");
    checkEq(flagsOf(f[1]), "80", "and say TXDROP");
  }
  r.send("R " + str(s + 3) + " 0");
  r.one("R 0");
  r.advance(1000000);
  checkEq((int)r.frames().size(), 0, "R 0: no periodic T");
  check(!r.hal.sampling, "R 0 stops the sample timer");
  check(!r.hal.badNesting, "irqSave/irqRestore balanced, no sample while masked");
}

void testEncoderFlag() {
  g_test = "ENC flag";
  Rig r;
  uint16_t s = r.session();
  r.hal.illegal = 3;
  r.send("M " + str(s) + " 0 0");
  checkEq(flagsOf(r.one("T")), "21", "ENC after illegal transitions");
  r.send("M " + str(s + 1) + " 0 0");
  checkEq(flagsOf(r.one("T")), "01", "ENC cleared");
  r.hal.illegal = 0;  // wrapped around 2^16 to a different value: still reported
  r.send("M " + str(s + 2) + " 0 0");
  checkEq(flagsOf(r.one("T")), "21", "ENC on any change of the count");
}

void testLongLines() {
  g_test = "long lines";
  Rig r;
  uint16_t s = r.session();
  r.raw(std::string(200, 'M'));
  checkEq(shape(r.one("LONG")), "E - LONG", "one LONG for 200 bytes");
  r.raw(std::string(2000, 'M'));
  checkEq((int)r.frames().size(), 0, "no more answers until the LF");
  r.raw("\n");
  r.send("P " + str(s));
  checkEq(shape(r.one("after LONG")), "A " + str(s), "resync on LF");
  std::string body = "P " + str(s + 1) + " " + std::string(122 - 3 - str(s + 1).size(), 'x');
  r.send(body);  // exactly 127 bytes + LF: not LONG (FIELDS)
  checkEq(shape(r.one("127 bytes")), "E " + str(s + 1) + " FIELDS", "127 bytes is a line");
  r.send(body + "x");  // 128 bytes + LF
  checkEq(shape(r.one("128 bytes")), "E - LONG", "128 bytes is LONG");
}

void testGarbage() {
  g_test = "garbage";
  Rig r;
  uint16_t s = r.session();
  r.send("M " + str(s) + " 100 -100");
  r.frames();
  const size_t before = r.hal.log.size();
  // 200k bytes biased towards protocol characters, with a tight UART so frames also get dropped.
  const char alphabet[] = "MNZSWPHRQ 0123456789-*ABCDEF\n\n\r";
  uint32_t rng = 99;
  r.hal.txRoom = 3000;
  std::string burst;
  for (int i = 0; i < 200000; ++i) {
    rng = rng * 1664525u + 1013904223u;
    burst += (rng >> 28) < 12 ? alphabet[(rng >> 8) % (sizeof alphabet - 1)] : (char)(rng >> 16);
  }
  r.raw(burst);
  check(r.hal.log.size() == before, "garbage never applied a motor command");
  check(!r.hal.overwrite, "txWrite never exceeded txFree");
  r.frames();
  r.hal.txRoom = (size_t)1 << 30;
  r.raw("\n");
  r.at(r.now + 1);
  r.frames();
  r.send("M " + str(s + 1) + " 5 5");
  std::string t = r.one("after garbage");
  checkEq(tok(t, 2), str(s + 1), "still in service after the burst");
  check(std::strtoul(flagsOf(t).c_str(), 0, 16) & (tl::kRxErr | tl::kTxDrop), "RXERR and TXDROP reported");
}

void testTxDrop() {
  g_test = "TXDROP";
  Rig r;
  uint16_t s = r.session();
  r.hal.txRoom = 0;  // the UART is stuck: nothing leaves the queue
  int k = 0;
  for (; k < 20; ++k) r.send("M " + str(s + k) + " 1 1");
  check(!r.hal.overwrite, "never writes more than the UART takes");
  r.hal.txRoom = (size_t)1 << 30;
  r.at(r.now + 1);  // drains the queue
  std::vector<std::string> f = r.frames();
  check(f.size() > 3 && f.size() < 20, "some T frames queued, the rest dropped: " + str((long long)f.size()));
  r.send("M " + str(s + k) + " 1 1");
  std::string t = r.one("T after drops");
  checkEq(flagsOf(t), "81", "TXDROP reported");
  if (!f.empty()) {
    long long gap = std::atoll(tok(t, 1).c_str()) - std::atoll(tok(f.back(), 1).c_str()) - 1;
    checkEq(gap, 20 - (long long)f.size(), "dropped frames used up sequence numbers (host counts them lost)");
  }
  r.send("M " + str(s + k + 1) + " 1 1");
  checkEq(flagsOf(r.one("next T")), "01", "TXDROP cleared");
}

void testHelloMidSession() {
  g_test = "H mid-session";
  Rig r;
  uint16_t s = r.session();
  r.send("W " + str(s) + " 200");
  r.send("R " + str(s + 1) + " 100");
  r.send("M " + str(s + 2) + " 400 400");
  r.frames();
  r.send("H 500 1");
  checkEq(shape(r.one("H")), "I 500", "I answers");
  check(r.hal.duty[0] == 0 && !r.core.enabled(), "a new session starts disabled with zero duty");
  check(r.core.rateHz() == 0 && r.core.watchdogMs() == 100, "and with the default rate and timeout");
  r.send("M 501 400 400");
  checkEq(shape(r.one("M")), "E 501 DISABLED", "needs N 1 again");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s <vectors-dir>\n", argv[0]);
    return 2;
  }
  int hostTotal = 0, boardTotal = 0, formatted = 0, exact = 0;
  const int hostPassed = testHostVectors(argv[1], &hostTotal);
  const int boardPassed = testBoardVectors(argv[1], &boardTotal, &formatted, &exact);
  int boardAccepts = 0;
  const std::vector<Vector> bv = loadVectors(std::string(argv[1]) + "/board-to-host.txt");
  for (size_t i = 0; i < bv.size(); ++i) boardAccepts += bv[i].verdict == "accept";
  const int before = g_checks;
  testProtoUnits();
  testBoot();
  testVersionAndHandshakeGate();
  testMotorCommands();
  testSequence();
  testRejectionsAnswered();
  testWatchdog();
  testWatchdogAcrossMicrosWrap();
  testLateFrameLosesToWatchdog();
  testStopAndZero();
  testRates();
  testEncoderFlag();
  testLongLines();
  testGarbage();
  testTxDrop();
  testHelloMidSession();
  const int beforeStream = g_checks;
  runStreamTests();
  const int streamChecks = g_checks - beforeStream;
  std::printf("vectors host-to-board: %d/%d passed\n", hostPassed, hostTotal);
  std::printf("vectors board-to-host: %d/%d passed; formatters reproduce %d/%d accepted frames (%d byte-exact)\n",
              boardPassed, boardTotal, formatted, boardAccepts, exact);
  std::printf("unit and state-machine checks: %d\n", g_checks - before - streamChecks);
  std::printf("streaming-mode checks: %d\n", streamChecks);
  std::printf("host_test: %s, %d checks, %d failed\n", g_failures ? "FAIL" : "PASS", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
