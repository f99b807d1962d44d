// twolink firmware core: the board side of PROTOCOL.md as a state machine. Pure C++11 without Arduino
// headers, heap or floating point: it talks to the hardware only through Hal and is given the time,
// so the host tests run it against a fake Hal in virtual time.
#ifndef TWOLINK_CORE_H
#define TWOLINK_CORE_H

#include <stdint.h>

#include "config.h"
#include "proto.h"

namespace tl {

// The hardware as the core sees it: implemented for the AVR in twolink_fw.ino and by a fake in
// test/host_test.cpp. No call may block or take more than a few microseconds.
class Hal {
 public:
  // Drive joint `joint` (0-based) at `perMille` of the supply voltage, -1000..1000 (+ = counter-
  // clockwise torque). 0 = no drive. The duty holds until the next call.
  virtual void setDuty(uint8_t joint, int16_t perMille) = 0;
  // A consistent snapshot of all encoder counts [counts, x4] and the running total (mod 2^16) of
  // illegal transitions (both channels changed at once: an edge was missed).
  virtual void readEncoders(int32_t* counts, uint16_t* illegal) = 0;
  virtual void zeroEncoder(uint8_t joint) = 0;
  // Bytes the UART accepts right now without blocking; txWrite() never gets more than that.
  virtual uint16_t txFree() = 0;
  virtual void txWrite(const uint8_t* p, uint16_t n) = 0;

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
  // Call as often as possible (every pass of loop()): watchdog first, then the banner repeat,
  // periodic telemetry and draining the transmit queue into the UART.
  void tick(uint32_t nowUs);

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
  void outputsOff();
  void sendI(int32_t ack);
  void sendT(uint32_t nowUs);
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
  int32_t lastApplied_;         // seq of the last applied M, or kNoAck since the handshake
  bool handshaken_;             // a valid H arrived since boot (clears BOOT, stops the banner)
  bool enabled_;                // motor outputs enabled (N 1)
  uint8_t sticky_;              // kWdt | kStop: kept until N 1
  uint8_t pending_;             // kRxErr | kGap | kEnc | kTxDrop: cleared by the next sent T
  uint16_t illegalSeen_;        // encoder illegal-transition total at the last T
  uint16_t wdtMs_;              // watchdog timeout [ms]
  uint32_t fedUs_;              // time of the last accepted host frame [us]
  uint32_t bannerUs_;           // time of the last banner [us]
  uint16_t rateHz_;             // telemetry rate [Hz], 0 = one T per applied M
  uint32_t periodUs_;           // 1e6 / rateHz_ [us]
  uint32_t nextTUs_;            // due time of the next periodic T [us]
};

}  // namespace tl

#endif
