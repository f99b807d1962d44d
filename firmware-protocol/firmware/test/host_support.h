// Shared by the firmware's host tests (host_test.cpp, stream_test.cpp): check helpers, an
// independent decoder of board frames written from PROTOCOL.md, and the fake HAL and rig that drive
// tl::Core in virtual time. Header-only; every definition is inline (or in namespace ht's globals
// defined once in host_test.cpp).
#ifndef TWOLINK_HOST_SUPPORT_H
#define TWOLINK_HOST_SUPPORT_H

#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "config.h"
#include "core.h"
#include "proto.h"

namespace ht {

extern int g_checks;
extern int g_failures;
extern const char* g_test;


inline bool check(bool ok, const std::string& what) {
  ++g_checks;
  if (!ok) {
    ++g_failures;
    std::printf("FAIL [%s] %s\n", g_test, what.c_str());
  }
  return ok;
}

template <typename A, typename B>
inline bool checkEq(const A& got, const B& want, const std::string& what) {
  std::ostringstream m;
  m << what << ": got \"" << got << "\", want \"" << want << "\"";
  return check(got == want, m.str());
}

inline std::string str(long long v) {
  std::ostringstream o;
  o << v;
  return o.str();
}

inline std::string hex4(uint16_t v) {
  char b[5];
  std::snprintf(b, sizeof b, "%04X", v);
  return b;
}

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == sep) {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  out.push_back(cur);
  return out;
}

// Printable form of raw bytes for failure messages.
inline std::string show(const std::string& s) {
  std::string o;
  for (size_t i = 0; i < s.size(); ++i) {
    unsigned char c = (unsigned char)s[i];
    if (c == '\n') o += "\\n";
    else if (c == '\r') o += "\\r";
    else if (c < 0x20 || c > 0x7E) {
      char b[5];
      std::snprintf(b, sizeof b, "\\x%02X", c);
      o += b;
    } else {
      o += (char)c;
    }
  }
  return o;
}
// ---- an independent decoder of board -> host frames ---------------------------------------------
// Written from PROTOCOL.md (the host's side): it checks every frame the core sends in the tests
// below, and is itself checked by vectors/board-to-host.txt.

struct Verdict {
  std::string code;     // "OK" or a code of section 4
  std::string meaning;  // the canonical meaning when OK
};

inline bool isDigits(const std::string& s) {
  if (s.empty()) return false;
  for (size_t i = 0; i < s.size(); ++i)
    if (s[i] < '0' || s[i] > '9') return false;
  return true;
}

// Canonical integer syntax (the protocol's `int`), value saturating at +-1e15.
inline bool canonInt(const std::string& s, bool signedOk, long long* v) {
  std::string d = s;
  bool neg = false;
  if (!d.empty() && d[0] == '-') {
    if (!signedOk) return false;
    neg = true;
    d = d.substr(1);
  }
  if (!isDigits(d) || (d[0] == '0' && (d.size() > 1 || neg))) return false;
  long long x = 0;
  for (size_t i = 0; i < d.size(); ++i) x = x > 100000000000000LL ? 1000000000000000LL : x * 10 + (d[i] - '0');
  *v = neg ? -x : x;
  return true;
}

inline bool upperHex(const std::string& s, size_t n) {
  if (s.size() != n) return false;
  for (size_t i = 0; i < n; ++i)
    if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'A' && s[i] <= 'F'))) return false;
  return true;
}

// "" if ok, else the code. `ack` is a sequence number or "-".
inline std::string checkAck(const std::string& a) {
  long long v;
  if (a == "-") return "";
  if (!canonInt(a, false, &v)) return "SYNTAX";
  return v > 65535 ? "RANGE" : "";
}

// Checks `bytes` (one line without its LF and not longer than 127 bytes: longer lines are the
// LineAssembler's LONG) as a board -> host frame for a host that expects `joints` joints.
inline Verdict checkBoardLine(std::string s, size_t joints = 2) {
  Verdict r = {"", ""};
  if (s.size() > 127) return Verdict{"LONG", ""};
  if (!s.empty() && s[s.size() - 1] == '\r') s.erase(s.size() - 1);
  for (size_t i = 0; i < s.size(); ++i)
    if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7E) return Verdict{"CHAR", ""};
  size_t star = s.find('*');
  if (star == std::string::npos || s.find('*', star + 1) != std::string::npos || !upperHex(s.substr(star + 1), 4))
    return Verdict{"FORMAT", ""};
  std::string body = s.substr(0, star);
  if (body.empty() || body[0] == ' ' || body[body.size() - 1] == ' ' || body.find("  ") != std::string::npos ||
      body.find(' ') == std::string::npos)
    return Verdict{"FORMAT", ""};
  if (hex4(tl::crc16(body.data(), (uint8_t)body.size())) != s.substr(star + 1)) return Verdict{"CRC", ""};
  std::vector<std::string> t = split(body, ' ');
  if (t[0].size() != 1 || std::string("ITAE").find(t[0]) == std::string::npos) return Verdict{"TYPE", ""};
  long long seq;
  if (!canonInt(t[1], false, &seq)) return Verdict{"SYNTAX", ""};
  if (seq > 65535) return Verdict{"RANGE", ""};
  const char type = t[0][0];
  std::vector<std::string> f(t.begin() + 2, t.end());
  std::string m = std::string(1, type) + " seq=" + t[1] + " ack=" + (f.empty() ? "" : f[0]);
  std::string e;
  if (type == 'A') {
    if (f.size() != 1) return Verdict{"FIELDS", ""};
    if (!(e = checkAck(f[0])).empty()) return Verdict{e, ""};
  } else if (type == 'T') {
    if (f.size() != 3 + joints) return Verdict{"FIELDS", ""};
    if (!(e = checkAck(f[0])).empty()) return Verdict{e, ""};
    long long v;
    if (!canonInt(f[1], true, &v)) return Verdict{"SYNTAX", ""};
    if (v < 0 || v > 4294967295LL) return Verdict{"RANGE", ""};
    m += " t=" + f[1] + " counts=";
    for (size_t j = 0; j < joints; ++j) {
      if (!canonInt(f[2 + j], true, &v)) return Verdict{"SYNTAX", ""};
      if (v < -2147483648LL || v > 2147483647LL) return Verdict{"RANGE", ""};
      m += (j ? "," : "") + f[2 + j];
    }
    if (!upperHex(f[2 + joints], 2)) return Verdict{"SYNTAX", ""};
    m += " flags=" + f[2 + joints];
  } else if (type == 'E') {
    if (f.size() < 2) return Verdict{"FIELDS", ""};
    if (!(e = checkAck(f[0])).empty()) return Verdict{e, ""};
    for (size_t i = 0; i < f[1].size(); ++i)
      if (f[1][i] < 'A' || f[1][i] > 'Z') return Verdict{"SYNTAX", ""};
    bool known = false;
    for (uint8_t c = 1; c <= (uint8_t)tl::Err::Wdt; ++c) known = known || f[1] == tl::errName((tl::Err)c);
    if (!known) return Verdict{"RANGE", ""};
    std::string text;
    for (size_t i = 2; i < f.size(); ++i) text += (i > 2 ? " " : "") + f[i];
    m += " code=" + f[1] + " text=" + text;
  } else {  // 'I'
    if (f.empty()) return Verdict{"FIELDS", ""};
    std::map<std::string, std::string> kv;
    for (size_t i = 1; i < f.size(); ++i) {
      size_t eq = f[i].find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == f[i].size() || kv.count(f[i].substr(0, eq)))
        return Verdict{"SYNTAX", ""};
      kv[f[i].substr(0, eq)] = f[i].substr(eq + 1);
    }
    const char* keys[] = {"fw", "proto", "board", "joints", "cpr", "pwm", "torque", "maxrate", "wdt"};
    for (size_t k = 0; k < 9; ++k)
      if (!kv.count(keys[k])) return Verdict{"FIELDS", ""};
    if (!(e = checkAck(f[0])).empty()) return Verdict{e, ""};
    long long v, nj = 0;
    struct {
      const char* key;
      long long lo, hi;
    } ints[] = {{"proto", 1, 65535}, {"joints", 1, 2}, {"pwm", 1, 65535}, {"torque", 0, 1},
                {"maxrate", 1, 65535}, {"wdt", 10, 1000}};
    for (size_t k = 0; k < 9; ++k) {
      const std::string key = keys[k], val = kv[key];
      if (key == "cpr") {
        std::vector<std::string> c = split(val, ',');
        if ((long long)c.size() != nj) return Verdict{"FIELDS", ""};
        for (size_t j = 0; j < c.size(); ++j) {
          if (!canonInt(c[j], true, &v)) return Verdict{"SYNTAX", ""};
          if (v < 1 || v > 2147483647LL) return Verdict{"RANGE", ""};
        }
      }
      for (size_t i = 0; i < 6; ++i)
        if (key == ints[i].key) {
          if (!canonInt(val, true, &v)) return Verdict{"SYNTAX", ""};
          if (v < ints[i].lo || v > ints[i].hi) return Verdict{"RANGE", ""};
          if (key == "joints") nj = v;
        }
      m += " " + key + "=" + val;
    }
    // up= (ms since boot) is optional: older firmware leaves it out.
    if (kv.count("up")) {
      if (!canonInt(kv["up"], false, &v)) return Verdict{"SYNTAX", ""};
      if (v > 4294967295LL) return Verdict{"RANGE", ""};
      m += " up=" + kv["up"];
    }
  }
  r.code = "OK";
  r.meaning = m;
  return r;
}

// ---- the state machine, through a fake HAL in virtual time --------------------------------------

struct FakeHal : tl::Hal {
  int16_t duty[2];
  std::vector<std::pair<int, int> > log;  // every setDuty(joint, duty)
  int32_t counts[2];
  uint16_t illegal;
  size_t txRoom;     // bytes the fake UART accepts before it is "full"
  std::string wire;  // everything the board sent
  bool overwrite;    // txWrite() was called with more than txFree()
  // The sample timer: running, its plan, when it started [us], the samples it fired since.
  bool sampling;
  tl::SampleTimer plan;
  uint32_t startUs;
  uint64_t fired;
  uint32_t timerStarts;
  int masked;        // irqSave() depth: the sample "interrupt" must not fire while > 0
  bool badNesting;   // irqRestore() without irqSave(), or a sample while masked
  uint32_t clockUs;  // the time the fake timer is started at (the rig keeps it current)

  FakeHal()
      : illegal(0), txRoom((size_t)1 << 30), overwrite(false), sampling(false), startUs(0), fired(0),
        timerStarts(0), masked(0), badNesting(false), clockUs(0) {
    duty[0] = duty[1] = 99;  // not zero: begin() must zero them
    staged[0] = staged[1] = 0;
    counts[0] = counts[1] = 0;
    plan = tl::SampleTimer();
  }
  void startSampling(const tl::SampleTimer& p) override {
    if (masked == 0) badNesting = true;  // the core must start the timer with the interrupt masked
    sampling = true;
    plan = p;
    startUs = clockUs;
    fired = 0;
    ++timerStarts;
  }
  void stopSampling() override { sampling = false; }
  uint8_t irqSave() override { return (uint8_t)(masked++ == 0 ? 1 : 0); }
  void irqRestore(uint8_t state) override {
    if (masked == 0 || (state == 1) != (masked == 1)) badNesting = true;
    --masked;
  }
  // Board time of the next sample [us]: sample k is k whole periods after the start (cycles at 16 MHz).
  uint32_t nextSampleUs() const { return startUs + (uint32_t)(((fired + 1) * plan.periodCycles) / 16); }
  void setDuty(uint8_t j, int16_t d) override {
    if (j < 2) duty[j] = d;
    else overwrite = true;
    log.push_back(std::make_pair((int)j, (int)d));
  }
  int16_t staged[2];
  void stageDuty(uint8_t j, int16_t d) override {
    if (masked == 0) badNesting = true;  // staging races the sample interrupt unless masked
    if (j < 2) staged[j] = d;
    else overwrite = true;
  }
  void applyStaged() override {
    for (uint8_t j = 0; j < 2; ++j) setDuty(j, staged[j]);
  }
  void readEncoders(int32_t* c, uint16_t* ill) override {
    c[0] = counts[0];
    c[1] = counts[1];
    *ill = illegal;
  }
  void zeroEncoder(uint8_t j) override { counts[j] = 0; }
  uint16_t txFree() override { return (uint16_t)(txRoom > 65535 ? 65535 : txRoom); }
  void txWrite(const uint8_t* p, uint16_t n) override {
    if (n > txFree()) overwrite = true;
    wire.append((const char*)p, n);
    txRoom -= n;
  }
};

struct Rig {
  FakeHal hal;
  tl::Core core;
  uint32_t now;  // [us]
  size_t read;   // how much of hal.wire frames() has consumed

  // The boot LF (PROTOCOL.md section 6) is checked by testBoot and skipped here.
  explicit Rig(uint32_t t0 = 1000) : core(hal), now(t0), read(0) {
    core.begin(now);
    if (!hal.wire.empty() && hal.wire[0] == '\n') read = 1;
  }

  void raw(const std::string& bytes) {
    hal.clockUs = now;
    for (size_t i = 0; i < bytes.size(); ++i) core.receive((uint8_t)bytes[i], now);
  }
  void send(const std::string& body) { raw(body + "*" + hex4(tl::crc16(body.data(), (uint8_t)body.size())) + "\n"); }
  // Time moves to t: first every sample instant up to t fires (the timer interrupt preempts the
  // main loop), then one pass of loop().
  void at(uint32_t t) {
    while (hal.sampling && (int32_t)(t - hal.nextSampleUs()) >= 0) {
      const uint32_t ts = hal.nextSampleUs();
      ++hal.fired;
      if (hal.masked != 0) hal.badNesting = true;
      hal.clockUs = now = ts;
      core.sample(ts);
    }
    hal.clockUs = now = t;
    core.tick(now);
  }
  // Fires the next sample instant (and whatever loop() does right after it); returns its time.
  uint32_t nextSample() {
    const uint32_t ts = hal.nextSampleUs();
    at(ts);
    return ts;
  }
  void advance(uint32_t us, uint32_t step = 1000) {  // tick every `step` us, like loop()
    for (uint32_t end = now + us; now != end;) at(end - now < step ? end : now + step);
  }
  // The board frames sent since the last call, as bodies (without "*CRC\n"); each must be a valid
  // board frame of at most 128 bytes.
  std::vector<std::string> frames() {
    std::vector<std::string> out;
    size_t lf;
    while ((lf = hal.wire.find('\n', read)) != std::string::npos) {
      std::string line = hal.wire.substr(read, lf - read);
      read = lf + 1;
      check(line.size() + 1 <= tl::kMaxLine, "frame longer than 128 bytes: " + show(line));
      Verdict v = checkBoardLine(line);
      check(v.code == "OK", "invalid board frame (" + v.code + "): " + show(line));
      out.push_back(line.substr(0, line.rfind('*')));
    }
    return out;
  }
  std::string one(const std::string& what) {  // exactly one new frame
    std::vector<std::string> f = frames();
    std::string all;
    for (size_t i = 0; i < f.size(); ++i) all += (i ? " | " : "") + f[i];
    check(f.size() == 1, what + ": want one frame, got " + str((long long)f.size()) + ": " + all);
    return f.empty() ? "" : f.back();
  }
  // Handshake and enable, host frames numbered from 0; returns the next host seq.
  uint16_t session(bool enable = true) {
    frames();
    send("H 0 1");
    one("H");
    send("R 1 0");
    one("R");
    if (!enable) return 2;
    send("N 2 1");
    one("N");
    return 3;
  }
};

inline std::string tok(const std::string& body, size_t i) {
  std::vector<std::string> t = split(body, ' ');
  return i < t.size() ? t[i] : "";
}

// "E 7 3 STALE ..." -> "E 3 STALE": type, ack and code without the board's own seq.
inline std::string shape(const std::string& body) {
  std::vector<std::string> t = split(body, ' ');
  std::string s = t[0];
  for (size_t i = 2; i < t.size() && i < (t[0] == "E" ? 4u : 3u); ++i) s += " " + t[i];
  return s;
}

inline std::string flagsOf(const std::string& tBody) { return tok(tBody, 6); }

}  // namespace ht

// stream_test.cpp: streaming mode (PROTOCOL.md section 8) and the sample timer plan.
void runStreamTests();

#endif
