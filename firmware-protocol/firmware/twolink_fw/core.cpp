// twolink firmware core: see core.h and PROTOCOL.md.
#include "core.h"

namespace tl {

namespace {

const char kFw[] TL_FLASH = TL_FW_VERSION;
const char kBoard[] TL_FLASH = TL_BOARD;
const char kSeq[] TL_FLASH = "seq";  // not PSTR(): see proto.cpp
const char kDisabledText[] TL_FLASH = "outputs disabled: send N 1";

static_assert(TL_JOINTS >= 1 && TL_JOINTS <= kMaxJoints, "TL_JOINTS must be 1..2");
static_assert(TL_TX_QUEUE >= 128 && TL_TX_QUEUE <= 4096 && (TL_TX_QUEUE & (TL_TX_QUEUE - 1)) == 0,
              "TL_TX_QUEUE must be a power of two, 128..4096");
// The widest banner (seq and ack 65535, wdt=1000) must fit in 128 bytes: 8 digits per cpr at most.
static_assert(TL_CPR_1 >= 1 && TL_CPR_1 <= 99999999L && TL_CPR_2 >= 1 && TL_CPR_2 <= 99999999L,
              "TL_CPR_x must be 1..99999999 counts/rev");

// Masks the sample interrupt for the lifetime of the object.
class IrqGuard {
 public:
  explicit IrqGuard(Hal& hal) : hal_(hal), state_(hal.irqSave()) {}
  ~IrqGuard() { hal_.irqRestore(state_); }

 private:
  Hal& hal_;
  uint8_t state_;
};

}  // namespace

SampleTimer planSampleTimer(uint16_t hz, uint32_t cpuHz) {
  static const uint8_t kShift[7] = {10, 8, 7, 6, 5, 3, 0};  // log2 of /1024 /256 /128 /64 /32 /8 /1
  static const uint8_t kCs[7] = {7, 6, 5, 4, 3, 2, 1};
  SampleTimer best = {0, 0, 0, 0};
  if (hz == 0) return best;
  const uint32_t want = (cpuHz + hz / 2) / hz;  // [cycles]
  uint32_t bestErr = 0xFFFFFFFFUL;
  // Largest prescaler first: the fewest interrupts per sample among plans of equal error.
  for (uint8_t i = 0; i < 7 && bestErr != 0; ++i) {
    const uint32_t ticks = (want + ((1UL << kShift[i]) >> 1)) >> kShift[i];  // timer counts per sample
    if (ticks < 2) continue;
    const uint32_t first = (ticks + 255) / 256;  // the smallest divider with top + 1 <= 256
    for (uint32_t div = first; div < first + 16 && div <= 255; ++div) {
      const uint32_t count = (ticks + div / 2) / div;  // top + 1
      // At most one interrupt every 2000 cycles (125 us): the divider's cost stays under ~3% of the CPU.
      if (count < 2 || count > 256 || (count << kShift[i]) < 2000) continue;
      const uint32_t cycles = (count * div) << kShift[i];
      const uint32_t err = cycles > want ? cycles - want : want - cycles;
      if (err < bestErr) {
        bestErr = err;
        best.cs = kCs[i];
        best.top = (uint8_t)(count - 1);
        best.divider = (uint8_t)div;
        best.periodCycles = cycles;
      }
      if (err == 0) break;
    }
  }
  return best;
}

Core::Core(Hal& hal)
    : hal_(hal),
      txHead_(0),
      txTail_(0),
      seqOut_(0),
      lastIn_(0),
      lastApplied_(kNoAck),
      handshaken_(false),
      enabled_(false),
      pendingValid_(false),
      pendingSeq_(0),
      latchedFresh_(false),
      latchMissed_(0),
      latchedUs_(0),
      latchedIllegal_(0),
      latchedAck_(kNoAck),
      sticky_(0),
      pending_(0),
      illegalSeen_(0),
      wdtMs_(TL_WDT_DEFAULT_MS),
      fedUs_(0),
      bannerUs_(0),
      upMs_(0),
      upUs_(0),
      rateHz_(0) {
  for (uint8_t j = 0; j < kMaxJoints; ++j) latchedCounts_[j] = 0;
  const Identity id = {kFw, kBoard, TL_JOINTS, {TL_CPR_1, TL_CPR_2}, TL_PWM_TOP, 0, TL_MAX_RATE_HZ,
                       TL_WDT_DEFAULT_MS, 0, 0};
  id_ = id;
}

void Core::begin(uint32_t now) {
  upMs_ = 0;
  upUs_ = now;
  outputsOff();
  int32_t counts[kMaxJoints];
  hal_.readEncoders(counts, &illegalSeen_);  // ENC reports transitions after boot only
  bannerUs_ = now;
  // A lone LF first: a reset can cut the frame the UART was sending, and without it the host's line
  // assembler would glue that fragment to the banner and lose both (PROTOCOL.md section 6).
  frame_[0] = '\n';
  send(1);
  sendI(kNoAck);
}

bool Core::idle() { return !latchedFresh_ && (txHead_ == txTail_ || hal_.txFree() == 0); }

uint8_t Core::flags() const {
  return (uint8_t)((enabled_ ? kEn : 0) | sticky_ | pending_ | (handshaken_ ? 0 : kBoot));
}

void Core::receive(uint8_t b, uint32_t now) {
  switch (rx_.push(b)) {
    case LineAssembler::kLine:
      handle(decodeHost(rx_.line(), rx_.length(), TL_JOINTS), now);
      break;
    case LineAssembler::kLong: {
      Decoded d = Decoded();
      d.err = Err::Long;
      reject(d);
      break;
    }
    case LineAssembler::kNone:
      break;
  }
}

void Core::tick(uint32_t now) {
  // Uptime for `up=`: whole milliseconds of board time, carried over the 32-bit microsecond wrap
  // (71 minutes) since tick() runs far more often than that.
  const uint32_t ms = (now - upUs_) / 1000UL;
  upMs_ += ms;
  upUs_ += ms * 1000UL;
  checkWatchdog(now);
  if (!handshaken_ && now - bannerUs_ >= TL_BANNER_PERIOD_US) {
    bannerUs_ = now;
    sendI(kNoAck);
  }
  if (latchedFresh_) sendLatched();
  pump();
}

void Core::sample(uint32_t now) {
  if (rateHz_ == 0) return;  // a tick that raced with R 0 / H: sync mode has no samples
  // 1. The pending command drives the motors from this instant on (section 8).
  if (pendingValid_) {
    pendingValid_ = false;
    if (enabled_) {
      hal_.applyStaged();
      lastApplied_ = pendingSeq_;
    }
  }
  // 2. Latch the measurement. A latch the main loop has not formatted yet is lost (counted).
  if (latchedFresh_ && latchMissed_ != 0xFF) latchMissed_ = (uint8_t)(latchMissed_ + 1);
  hal_.readEncoders(latchedCounts_, &latchedIllegal_);
  latchedUs_ = now;
  latchedAck_ = lastApplied_;
  latchedFresh_ = true;
}

void Core::sendLatched() {
  int32_t counts[kMaxJoints];
  uint32_t t;
  uint16_t illegal;
  int32_t ack;
  uint8_t missed;
  {
    IrqGuard g(hal_);
    for (uint8_t j = 0; j < kMaxJoints; ++j) counts[j] = latchedCounts_[j];
    t = latchedUs_;
    illegal = latchedIllegal_;
    ack = latchedAck_;
    missed = latchMissed_;
    latchMissed_ = 0;
    latchedFresh_ = false;
  }
  // Samples the main loop never got to: their T is dropped like one that does not fit (section 8),
  // and their sequence numbers are used up so that the host counts them.
  if (missed != 0) {
    seqOut_ = (uint16_t)(seqOut_ + missed);
    pending_ |= kTxDrop;
  }
  sendT(t, counts, illegal, ack);
}

void Core::checkWatchdog(uint32_t now) {
  // Unsigned difference: correct across the micros() wrap every 71.6 min.
  if (!enabled_ || now - fedUs_ <= (uint32_t)wdtMs_ * 1000UL) return;
  disable(kWdt);  // first, in this same tick; the pending command goes too
  Out o(frame_);
  o.head('E', seqOut_++, kNoAck).ch(' ').fstr(errName(Err::Wdt));
  o.fstr(TL_F(" no command for ")).u32(wdtMs_).fstr(TL_F(" ms"));
  send(o.finish());
  if (rateHz_ == 0) sendT(now);  // sync mode sends no periodic T: show the host the flags now
}

void Core::outputsOff() {
  IrqGuard g(hal_);
  pendingValid_ = false;
  for (uint8_t j = 0; j < TL_JOINTS; ++j) hal_.setDuty(j, 0);
}

void Core::disable(uint8_t sticky) {
  IrqGuard g(hal_);  // the sample interrupt sees either the old state or the whole new one
  outputsOff();
  enabled_ = false;
  sticky_ |= sticky;
}

void Core::setRate(uint16_t hz) {
  IrqGuard g(hal_);
  hal_.stopSampling();
  pendingValid_ = false;
  latchedFresh_ = false;
  latchMissed_ = 0;
  rateHz_ = hz;
  if (hz != 0) hal_.startSampling(planSampleTimer(hz, TL_CPU_HZ));
}

void Core::handle(const Decoded& d, uint32_t now) {
  if (d.err != Err::Ok) {
    reject(d);
    return;
  }
  checkWatchdog(now);  // a frame that arrives after the deadline must not beat the watchdog
  const HostFrame& f = d.frame;
  if (f.type == 'H') {  // accepted whatever its number (section 1)
    if (f.value[0] != kProtoVersion) {
      sendE(f.seq, Err::Version, TL_F("board speaks protocol 1"));
      return;
    }
    // A new session starts from a known state: outputs off and the defaults; WDT and STOP stay
    // until N 1 so that a reconnecting host still sees why the arm stopped.
    disable(0);
    setRate(0);
    handshaken_ = true;
    lastIn_ = f.seq;
    fedUs_ = now;
    lastApplied_ = kNoAck;
    wdtMs_ = TL_WDT_DEFAULT_MS;
    sendI(f.seq);
    return;
  }
  if (!handshaken_) {  // nothing moves, nothing changes before the host's H
    sendE(f.seq, Err::Disabled, TL_F("no handshake: send H first"));
    return;
  }
  const uint16_t delta = (uint16_t)(f.seq - lastIn_);
  if (delta == 0 || delta >= 0x8000) {  // duplicate, or older than the last accepted frame
    pending_ |= kRxErr;
    Out o(frame_);
    o.head('E', seqOut_++, f.seq).ch(' ').fstr(errName(Err::Stale));
    o.fstr(TL_F(" seq ")).u32(f.seq).fstr(TL_F(" is not after ")).u32(lastIn_);
    send(o.finish());
    return;
  }
  if (delta > 1) pending_ |= kGap;
  lastIn_ = f.seq;
  fedUs_ = now;  // every accepted frame feeds the watchdog, even one refused below as DISABLED
  apply(f, now);
}

void Core::apply(const HostFrame& f, uint32_t now) {
  switch (f.type) {
    case 'M':
      if (!enabled_) {
        sendE(f.seq, Err::Disabled, kDisabledText);
        return;
      }
      if (rateHz_ != 0) {  // streaming: the next sample applies it; its T is the answer
        IrqGuard g(hal_);
        for (uint8_t j = 0; j < TL_JOINTS; ++j) hal_.stageDuty(j, (int16_t)f.value[j]);
        pendingSeq_ = f.seq;
        pendingValid_ = true;
        return;
      }
      for (uint8_t j = 0; j < TL_JOINTS; ++j) hal_.setDuty(j, (int16_t)f.value[j]);
      lastApplied_ = f.seq;
      sendT(now);
      return;
    case 'Q':
      if (!enabled_) sendE(f.seq, Err::Disabled, kDisabledText);
      else sendE(f.seq, Err::Unsupported, TL_F("no current loop: use M"));
      return;
    case 'R':
      setRate((uint16_t)f.value[0]);  // a new grid: t_0 is the first timer tick after this
      break;
    case 'N':
      if (f.value[0] != 0) {
        IrqGuard g(hal_);
        outputsOff();  // enabling starts from zero duty, without a pending command
        enabled_ = true;
        sticky_ = 0;  // N 1 clears WDT and STOP
      } else {
        disable(0);
      }
      break;
    case 'Z':
      for (uint8_t j = 0; j < TL_JOINTS; ++j)
        if (f.value[0] & (1 << j)) hal_.zeroEncoder(j);
      break;
    case 'S':
      disable(kStop);
      break;
    case 'W':
      wdtMs_ = (uint16_t)f.value[0];
      break;
    default:  // 'P': the acceptance above fed the watchdog
      break;
  }
  sendA(f.seq);
}

void Core::reject(const Decoded& d) {
  pending_ |= kRxErr;
  Out o(frame_);
  o.head('E', seqOut_++, d.seqValid ? (int32_t)d.frame.seq : kNoAck).ch(' ').fstr(errName(d.err)).ch(' ');
  FieldSpec spec = {0, 0, 65535, kSeq};  // SYNTAX/RANGE with where == 0: the sequence number
  const bool inField = (d.err == Err::Syntax || d.err == Err::Range) && d.where != 0;
  if (inField || d.err == Err::Fields) hostFieldSpec(d.frame.type, TL_JOINTS, &spec);
  switch (d.err) {
    case Err::Long: o.fstr(TL_F("no LF within 128 bytes")); break;
    case Err::Char: o.fstr(TL_F("byte 0x")).hex2(d.byte).fstr(TL_F(" at column ")).u32(d.where); break;
    case Err::Format: o.fstr(TL_F("want TYPE SEQ FIELDS, single spaces, a star, 4 upper-case hex")); break;
    case Err::Crc: o.fstr(TL_F("the body's CRC is ")).hex2((uint8_t)(d.crc >> 8)).hex2((uint8_t)d.crc); break;
    case Err::Type: o.fstr(TL_F("not a host frame type")); break;
    case Err::Syntax: o.fstr(spec.name).fstr(TL_F(" is not a canonical integer")); break;
    case Err::Fields: o.ch(d.frame.type).fstr(TL_F(" takes ")).u32(spec.count).fstr(TL_F(" fields")); break;
    default:  // Range
      o.fstr(spec.name).fstr(TL_F(" must be "));
      if (inField && d.frame.type == 'R') o.fstr(TL_F("0 or 10"));
      else o.i32(spec.min);
      o.fstr(TL_F("..")).i32(spec.max);
      break;
  }
  send(o.finish());
}

void Core::sendI(int32_t ack) {
  id_.wdtMs = wdtMs_;
  id_.hasUp = 1;
  id_.upMs = upMs_;
  send(formatI(frame_, seqOut_++, ack, id_));
}

void Core::sendT(uint32_t now) {
  int32_t counts[kMaxJoints];
  uint16_t illegal;
  hal_.readEncoders(counts, &illegal);
  sendT(now, counts, illegal, lastApplied_);
}

void Core::sendT(uint32_t tUs, const int32_t* counts, uint16_t illegal, int32_t ack) {
  if (illegal != illegalSeen_) pending_ |= kEnc;
  illegalSeen_ = illegal;
  // The per-period flags go out with this T; if the T is dropped they wait for the next one.
  if (send(formatT(frame_, seqOut_++, ack, tUs, counts, TL_JOINTS, flags()))) pending_ = 0;
}

void Core::sendA(uint16_t ack) { send(formatA(frame_, seqOut_++, ack)); }

void Core::sendE(int32_t ack, Err code, const char* text) { send(formatE(frame_, seqOut_++, ack, code, text)); }

bool Core::send(uint8_t n) {
  // Whole frames or nothing. A dropped frame keeps its sequence number, so the host counts it lost.
  if (n == 0 || n > TL_TX_QUEUE - (uint16_t)(txHead_ - txTail_)) {
    pending_ |= kTxDrop;
    return false;
  }
  for (uint8_t i = 0; i < n; ++i) txq_[txHead_++ & (TL_TX_QUEUE - 1)] = (uint8_t)frame_[i];
  pump();
  return true;
}

void Core::pump() {
  while (txHead_ != txTail_) {
    const uint16_t room = hal_.txFree();
    if (room == 0) return;
    const uint16_t at = txTail_ & (TL_TX_QUEUE - 1);
    uint16_t n = (uint16_t)(txHead_ - txTail_);
    if (n > TL_TX_QUEUE - at) n = TL_TX_QUEUE - at;  // up to the end of the ring
    if (n > room) n = room;
    hal_.txWrite(txq_ + at, n);
    txTail_ += n;
  }
}

}  // namespace tl
