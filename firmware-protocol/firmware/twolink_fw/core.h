// twolink firmware core: the board side of PROTOCOL.md as a state machine. Pure C++11 without Arduino
// headers, heap or floating point: it talks to the hardware only through Hal and is given the time,
// so the host tests run it against a fake Hal in virtual time.
#ifndef TWOLINK_CORE_H
#define TWOLINK_CORE_H

#include <stdint.h>

#include "config.h"
#include "proto.h"

namespace tl {

// How the 8-bit sample timer (Timer2, CTC mode) makes a sample rate: the timer counts the CPU clock
// divided by `prescaler` (code `cs`, the CS22..CS20 bits), matches every `top` + 1 counts (OCR2A =
// top), and every `divider`-th match is a sample. periodCycles = prescaler * (top + 1) * divider.
struct SampleTimer {
  uint8_t cs;             // 1..7 = /1, /8, /32, /64, /128, /256, /1024
  uint8_t top;            // OCR2A
  uint8_t divider;        // matches per sample, 1..255
  uint32_t periodCycles;  // the sample period the board really has [CPU cycles]
};
// A plan whose period is near 1/hz, with at most one interrupt per 2000 cycles: exact when cpuHz/hz
// factors as above (1000, 800, 500, 400, 250, 200, 125, 100, 50, 10 Hz at 16 MHz), otherwise within
// 0.3% (the T times say the truth). Integer arithmetic, at most ~100 divisions: called once per R.
SampleTimer planSampleTimer(uint16_t hz, uint32_t cpuHz);

// The hardware as the core sees it: implemented for the AVR in twolink_fw.ino and by a fake in
// test/host_test.cpp. No call may block or take more than a few microseconds.
class Hal {
 public:
  // Drive joint `joint` (0-based) at `perMille` of the supply voltage, -1000..1000 (+ = counter-
  // clockwise torque). 0 = no drive. The duty holds until the next call.
  virtual void setDuty(uint8_t joint, int16_t perMille) = 0;
  // Streaming mode: stageDuty() does the arithmetic of setDuty() for a pending command (main loop, with
  // the sample interrupt masked); applyStaged() puts the staged duties on the pins (in the sample
  // interrupt: a few register writes, so the interrupt stays short).
  virtual void stageDuty(uint8_t joint, int16_t perMille) = 0;
  virtual void applyStaged() = 0;
  // A consistent snapshot of all encoder counts [counts, x4] and the running total (mod 2^16) of
  // illegal transitions (both channels changed at once: an edge was missed).
  virtual void readEncoders(int32_t* counts, uint16_t* illegal) = 0;
  virtual void zeroEncoder(uint8_t joint) = 0;
  // Bytes the UART accepts right now without blocking; txWrite() never gets more than that.
  virtual uint16_t txFree() = 0;
  virtual void txWrite(const uint8_t* p, uint16_t n) = 0;
  // Streaming mode (PROTOCOL.md section 8): start the sample timer so that it calls Core::sample()
  // from its interrupt as `plan` says (the first call one period after this one), or stop it. Both
  // are called with the sample interrupt masked (inside irqSave/irqRestore).
  virtual void startSampling(const SampleTimer& plan) = 0;
  virtual void stopSampling() = 0;
  // A critical section against the sample interrupt: irqSave() masks it and returns the previous
  // state, irqRestore() puts that state back. Nestable; cheap (a few cycles).
  virtual uint8_t irqSave() = 0;
  virtual void irqRestore(uint8_t state) = 0;

 protected:
  ~Hal() {}  // never deleted through this interface (no heap on the board)
};

class Core {
 public:
  explicit Core(Hal& hal);

  // At boot, before anything else: outputs off, disabled, first banner.
  void begin(uint32_t nowUs);
  // One byte from the host. A complete line is decoded and answered at once.
  void receive(uint8_t b, uint32_t nowUs);
  // Call as often as possible (every pass of loop()): watchdog first, then the banner repeat, the
  // T of the newest latched sample, and draining the transmit queue into the UART.
  void tick(uint32_t nowUs);
  // The sample instant (streaming mode): called by the sample timer's interrupt, never by the main
  // loop. Applies the pending M (if the outputs are enabled), then latches the encoder counts, the
  // board time and the ack; tick() sends the T. Constant time, no UART access.
  void sample(uint32_t nowUs);

  // Nothing for tick() to do until an interrupt happens: no latched sample to send, and no queued byte
  // the UART could take now. The main loop may sleep then.
  bool idle();

  // For tests and diagnostics.
  uint8_t flags() const;
  bool enabled() const { return enabled_; }
  uint16_t rateHz() const { return rateHz_; }
  uint16_t watchdogMs() const { return wdtMs_; }

 private:
  void handle(const Decoded& d, uint32_t nowUs);
  void apply(const HostFrame& f, uint32_t nowUs);
  void reject(const Decoded& d);
  void checkWatchdog(uint32_t nowUs);
  void outputsOff();        // motors to zero and the pending command dropped (masks the sample ISR)
  void disable(uint8_t sticky);  // outputsOff(), outputs disabled, `sticky` flags set
  void setRate(uint16_t hz);
  void sendLatched();
  void sendI(int32_t ack);
  void sendT(uint32_t nowUs);
  void sendT(uint32_t tUs, const int32_t* counts, uint16_t illegal, int32_t ack);
  void sendA(uint16_t ack);
  void sendE(int32_t ack, Err code, const char* textFlash);
  bool send(uint8_t n);  // queue frame_[0, n); false (and TXDROP) if it does not fit
  void pump();

  Hal& hal_;
  Identity id_;
  LineAssembler rx_;
  char frame_[kMaxLine];        // the frame being formatted
  uint8_t txq_[TL_TX_QUEUE];    // frames waiting for the UART
  uint16_t txHead_, txTail_;    // free-running indices into txq_ (mod 2^16)

  uint16_t seqOut_;             // sequence number of the next board frame
  uint16_t lastIn_;             // last accepted host sequence number (valid once handshaken_)
  volatile int32_t lastApplied_;  // seq of the last applied M, or kNoAck since the handshake
  bool handshaken_;             // a valid H arrived since boot (clears BOOT, stops the banner)
  volatile bool enabled_;       // motor outputs enabled (N 1)

  // Streaming mode, shared with the sample interrupt: the main loop touches these only inside
  // irqSave()/irqRestore(); sample() runs to completion against it.
  volatile bool pendingValid_;  // an accepted M waits for the next sample
  uint16_t pendingSeq_;
  volatile bool latchedFresh_;  // a sample was latched and its T not yet formatted
  volatile uint8_t latchMissed_;  // samples latched over before their T was formatted (saturates)
  uint32_t latchedUs_;          // board time of the latched sample [us]
  int32_t latchedCounts_[kMaxJoints];  // [counts]
  uint16_t latchedIllegal_;
  int32_t latchedAck_;
  uint8_t sticky_;              // kWdt | kStop: kept until N 1
  uint8_t pending_;             // kRxErr | kGap | kEnc | kTxDrop: cleared by the next sent T
  uint16_t illegalSeen_;        // encoder illegal-transition total at the last T
  uint16_t wdtMs_;              // watchdog timeout [ms]
  uint32_t fedUs_;              // time of the last accepted host frame [us]
  uint32_t bannerUs_;           // time of the last banner [us]
  uint32_t upMs_;               // milliseconds since begin() (`up=`), mod 2^32
  uint32_t upUs_;               // board time [us] up to which upMs_ is counted
  volatile uint16_t rateHz_;    // sample rate [Hz], 0 = sync mode: one T per applied M
};

}  // namespace tl

#endif
