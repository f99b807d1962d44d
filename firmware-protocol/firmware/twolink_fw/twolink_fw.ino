// twolink firmware: Arduino Uno / Mega 2560 side of firmware-protocol/PROTOCOL.md.
// This file is the AVR glue: motor PWM (Timer1), quadrature encoders (pin-change interrupt), the
// sample clock of streaming mode (Timer2 compare match), the serial port, and the hardware watchdog. The protocol and the state machine are in core.cpp and
// proto.cpp (plain C++, tested on the host); pins and constants in config.h.
#include <Arduino.h>
#include <avr/sleep.h>
#include <avr/wdt.h>
#include <util/atomic.h>

#include "config.h"
#include "core.h"

static_assert(TL_JOINTS == 2, "the AVR glue drives exactly two joints (OC1A and OC1B)");

// At 1 Mbaud a host catching up sends several M lines back to back; the core's default 64-byte receive
// ring overflowed in simavr at 800-1000 Hz while the main loop formatted a T (lines lost: E FORMAT,
// E CRC). The Makefile builds with 256; the Arduino IDE cannot set it per sketch (use the Makefile,
// or stay at 500 Hz).
#if SERIAL_RX_BUFFER_SIZE < 256
#warning "twolink: SERIAL_RX_BUFFER_SIZE < 256: bursts of host lines at 1 Mbaud can overflow it; build with the Makefile"
#endif

// ---- hardware watchdog --------------------------------------------------------------------------
// After a watchdog reset the AVR watchdog stays armed; disable it before C++ start-up (avr-libc's
// recommended .init3 hook) so a slow boot cannot loop on resets.
void twolinkWdtOff() __attribute__((naked, used, section(".init3")));
void twolinkWdtOff() {
  MCUSR = 0;
  wdt_disable();
}

// ---- encoders -----------------------------------------------------------------------------------
// 4x decoding: every edge of A and B counts. Index = (previous BA << 2) | current BA; 2 marks an
// illegal transition (both channels changed between two interrupts: an edge was missed).
static const int8_t kQuad[16] PROGMEM = {0, +1, -1, 2, -1, 0, 2, +1, +1, 2, 0, -1, 2, -1, +1, 0};

static volatile int32_t encCount[2];  // [counts], written by the ISR; read/zeroed with interrupts off
static volatile uint16_t encIllegal;  // illegal transitions since boot (mod 2^16)
static volatile uint8_t encPrev;      // the 4 encoder bits at the last interrupt

static inline uint8_t encoderBits() { return (uint8_t)((TL_ENC_PORT >> TL_ENC_SHIFT) & 0x0F); }

// Called only when the joint's A or B changed, so the table gives +1, -1 or 2 (never 0).
static inline __attribute__((always_inline)) void encStep(volatile int32_t& count, uint8_t index, bool invert) {
  const int8_t d = (int8_t)pgm_read_byte(&kQuad[index]);
  if (d == 2) ++encIllegal;
  else if ((d > 0) != invert) ++count;  // ++/-- rather than += d: fewer registers to save
  else --count;
}

// Any of the 4 encoder pins changed. Integer work only: 134 cycles = 8.4 us per edge (simavr).
ISR(TL_ENC_VECT) {
  const uint8_t now = encoderBits();
  const uint8_t prev = encPrev;
  const uint8_t changed = now ^ prev;
  encPrev = now;
  if (changed & 0x03) encStep(encCount[0], (uint8_t)(((prev & 0x03) << 2) | (now & 0x03)), TL_ENC_INVERT_1);
  if (changed & 0x0C) encStep(encCount[1], (uint8_t)((prev & 0x0C) | ((now >> 2) & 0x03)), TL_ENC_INVERT_2);
}
#if defined(TL_ENC_EXTINT)
// One handler for the four external interrupts (each pin has its own vector on INT0..INT3).
ISR(INT1_vect, ISR_ALIASOF(INT0_vect));
ISR(INT2_vect, ISR_ALIASOF(INT0_vect));
ISR(INT3_vect, ISR_ALIASOF(INT0_vect));
#endif

// ---- the HAL for the core -----------------------------------------------------------------------
static const uint8_t kDirPin[2] = {TL_DIR_PIN_1, TL_DIR_PIN_2};
static const uint8_t kDir2Pin[2] = {TL_DIR2_PIN_1, TL_DIR2_PIN_2};
static const bool kMotorInvert[2] = {TL_MOTOR_INVERT_1, TL_MOTOR_INVERT_2};
// duty [per mille] -> Timer1 steps as a 16.16 fixed-point multiply (a division costs ~40 us here).
static const uint32_t kDutyScale = ((uint32_t)TL_PWM_TOP * 65536UL + 500) / 1000;

// duty [per mille] -> Timer1 steps (0..TL_PWM_TOP).
static uint16_t dutySteps(int16_t perMille) {
  const uint32_t mag = (uint32_t)(perMille < 0 ? -perMille : perMille);
  const uint16_t steps = (uint16_t)((mag * kDutyScale + 32768UL) >> 16);
  return steps > TL_PWM_TOP ? TL_PWM_TOP : steps;
}

// A direction pin as its PORT register and bit, resolved once, so the sample interrupt writes it
// directly (digitalWrite() looks the pin up in flash tables each time: ~4 us).
struct FastPin {
  volatile uint8_t* port;
  uint8_t bit;
  void init(uint8_t pin) {
    port = pin == TL_NO_PIN ? 0 : portOutputRegister(digitalPinToPort(pin));
    bit = pin == TL_NO_PIN ? 0 : digitalPinToBitMask(pin);
  }
  void write(bool high) const {  // called with interrupts off
    if (!port) return;
    if (high) *port |= bit;
    else *port &= (uint8_t)~bit;
  }
};
static FastPin dirPin[2], dir2Pin[2];

class AvrHal : public tl::Hal {
 public:
  void setDuty(uint8_t j, int16_t perMille) override {
    const bool reverse = (perMille < 0) != kMotorInvert[j];
    const uint16_t steps = dutySteps(perMille);
    if (steps != 0) {  // at zero keep the direction: nothing to reverse
      digitalWrite(kDirPin[j], reverse ? HIGH : LOW);
      if (kDir2Pin[j] != TL_NO_PIN) digitalWrite(kDir2Pin[j], reverse ? LOW : HIGH);
    }
    // OCR1x is double-buffered by the hardware until TOP, DIR is not: a reversal drives the old
    // magnitude the new way for at most one PWM period (50 us). The sample interrupt writes OCR1x
    // too, and a 16-bit write goes through the shared TEMP register: keep it whole.
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {
      if (j == 0) OCR1A = steps;
      else OCR1B = steps;
    }
  }
  void readEncoders(int32_t* counts, uint16_t* illegal) override {
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) {  // 32-bit values: the ISR must not change them mid-copy
      counts[0] = encCount[0];
      counts[1] = encCount[1];
      *illegal = encIllegal;
    }
  }
  void zeroEncoder(uint8_t j) override {
    ATOMIC_BLOCK(ATOMIC_RESTORESTATE) { encCount[j] = 0; }
  }
  uint16_t txFree() override { return (uint16_t)Serial.availableForWrite(); }
  void txWrite(const uint8_t* p, uint16_t n) override { Serial.write(p, n); }  // n <= txFree(): no wait
  void stageDuty(uint8_t j, int16_t perMille) override {
    stagedSteps_[j] = dutySteps(perMille);
    stagedReverse_[j] = (perMille < 0) != kMotorInvert[j];
  }
  // In the sample interrupt, interrupts off: the same pins as setDuty(), in ~2 us.
  void applyStaged() override {
    for (uint8_t j = 0; j < 2; ++j) {
      if (stagedSteps_[j] != 0) {
        dirPin[j].write(stagedReverse_[j]);
        dir2Pin[j].write(!stagedReverse_[j]);
      }
    }
    OCR1A = stagedSteps_[0];
    OCR1B = stagedSteps_[1];
  }
  void startSampling(const tl::SampleTimer& plan) override;
  void stopSampling() override {
#if defined(TL_SAMPLE_TIMER3)
    TIMSK3 = 0;
    TCCR3B = 0;
#else
    TIMSK2 = 0;
    TCCR2B = 0;
#endif
  }
  uint8_t irqSave() override {
    const uint8_t s = SREG;
    cli();
    return s;
  }
  void irqRestore(uint8_t s) override { SREG = s; }

 private:
  uint16_t stagedSteps_[2] = {0, 0};
  bool stagedReverse_[2] = {false, false};
};

static AvrHal hal;
static tl::Core core(hal);

// ---- the sample clock (streaming mode, PROTOCOL.md section 8) ------------------------------------
// Timer2 in CTC mode: a compare match every (OCR2A + 1) prescaled counts, a sample every `divider`
// matches. Only Timer2 is free: Timer0 runs millis()/micros(), Timer1 the motor PWM.
static volatile uint8_t sampleDivider = 1;
static volatile uint8_t sampleCountdown = 1;

#if defined(TL_SAMPLE_TIMER3)
// The 32U4: Timer3 in CTC mode (TOP = OCR3A), one compare match per sample: the plan's period in
// cycles divided by the smallest prescaler that fits 16 bits (exact for the rates planSampleTimer
// makes exact).
void AvrHal::startSampling(const tl::SampleTimer& plan) {  // called with interrupts masked
  static const uint16_t kPre[5] = {1, 8, 64, 256, 1024};
  static const uint8_t kCs3[5] = {_BV(CS30), _BV(CS31), _BV(CS31) | _BV(CS30), _BV(CS32), _BV(CS32) | _BV(CS30)};
  uint8_t i = 0;
  while (i < 4 && plan.periodCycles / kPre[i] > 65536UL) ++i;
  TCCR3B = 0;
  TIMSK3 = 0;
  TCCR3A = 0;
  TCNT3 = 0;
  OCR3A = (uint16_t)(plan.periodCycles / kPre[i] - 1);
  sampleDivider = 1;
  sampleCountdown = 1;
  TIFR3 = _BV(OCF3A);
  TIMSK3 = _BV(OCIE3A);
  TCCR3B = _BV(WGM32) | kCs3[i];  // CTC; runs from here: the first sample is one period later
}
#else
void AvrHal::startSampling(const tl::SampleTimer& plan) {  // called with interrupts masked
  TCCR2B = 0;
  TIMSK2 = 0;
  TCCR2A = _BV(WGM21);  // CTC, TOP = OCR2A, OC2A/OC2B pins not driven
  TCNT2 = 0;
  OCR2A = plan.top;
  sampleDivider = plan.divider;
  sampleCountdown = plan.divider;
  TIFR2 = _BV(OCF2A);   // forget a match from before
  TIMSK2 = _BV(OCIE2A);
  TCCR2B = plan.cs;     // runs from here: the first sample is one period later
}
#endif

// Short (the pending duty was staged by the main loop: a few register writes, micros(), the counts),
// so at 1 Mbaud the UART's two-byte receive buffer covers it. The main loop masks it (irqSave) where
// they share state. (It was non-blocking for a while; the received bytes lost then turned out to be
// the 64-byte receive ring, see SERIAL_RX_BUFFER_SIZE above.)
#if defined(TL_SAMPLE_TIMER3)
ISR(TIMER3_COMPA_vect) {
#else
ISR(TIMER2_COMPA_vect) {
#endif
  if (--sampleCountdown != 0) return;
  sampleCountdown = sampleDivider;
  core.sample(micros());
}

static void motorsInit() {
  // Outputs low before the timer drives them: motors off from the first instruction we control.
  const uint8_t pwm[2] = {TL_PWM_PIN_1, TL_PWM_PIN_2};
  for (uint8_t j = 0; j < 2; ++j) {
    dirPin[j].init(kDirPin[j]);
    dir2Pin[j].init(kDir2Pin[j]);
    digitalWrite(pwm[j], LOW);
    pinMode(pwm[j], OUTPUT);
    digitalWrite(kDirPin[j], LOW);
    pinMode(kDirPin[j], OUTPUT);
    if (kDir2Pin[j] != TL_NO_PIN) {
      digitalWrite(kDir2Pin[j], HIGH);
      pinMode(kDir2Pin[j], OUTPUT);
    }
  }
  // Timer1: phase-correct PWM with TOP = ICR1 (mode 10), clear OC1A/OC1B on up-count match
  // (non-inverting: OCR = 0 is a constant low), no prescaler -> 16 MHz / (2 * TOP) = 20 kHz.
  TCCR1B = 0;  // stop while configuring
  TCNT1 = 0;
  OCR1A = 0;
  OCR1B = 0;
  ICR1 = TL_PWM_TOP;
  TCCR1A = _BV(COM1A1) | _BV(COM1B1) | _BV(WGM11);
  TCCR1B = _BV(WGM13) | _BV(CS10);
}

static void encodersInit() {
  const uint8_t pins[4] = TL_ENC_PINS;
  for (uint8_t i = 0; i < 4; ++i) pinMode(pins[i], INPUT_PULLUP);  // open-collector encoders work too
  delayMicroseconds(10);  // let the pull-ups charge the lines before the first reading
  encPrev = encoderBits();
#if defined(TL_ENC_EXTINT)
  EICRA = _BV(ISC00) | _BV(ISC10) | _BV(ISC20) | _BV(ISC30);  // INT0..INT3 on any edge
  EIFR = 0x0F;   // forget edges seen while configuring
  EIMSK |= 0x0F;
#else
  TL_ENC_PCMSK |= (uint8_t)(0x0F << TL_ENC_SHIFT);
  PCIFR = _BV(TL_ENC_PCIE);  // forget edges seen while configuring
  PCICR |= _BV(TL_ENC_PCIE);
#endif
}

void setup() {
  motorsInit();
  encodersInit();
  Serial.begin(TL_BAUD);
  core.begin(micros());
  set_sleep_mode(SLEEP_MODE_IDLE);  // timers, UART and pin-change interrupts keep running
#if TL_HW_WATCHDOG
  wdt_enable(WDTO_250MS);
#endif
}

void loop() {
  const uint32_t now = micros();
  core.tick(now);
  // At most one receive buffer per pass, so the watchdog check above runs at least every ~1 ms
  // even under a flood of input.
  for (uint8_t i = 0; i < 64 && Serial.available() > 0; ++i) core.receive((uint8_t)Serial.read(), now);
#if TL_HW_WATCHDOG
#if defined(USBCON)
  // The 1200-baud touch (CDC.cpp: the host opens at 1200 baud and drops DTR) arms a 120 ms watchdog
  // to reset into the Caterina bootloader: stop feeding the watchdog then, or the upload never starts.
  if (!(Serial.baud() == 1200 && !Serial.dtr()))
#endif
  wdt_reset();
#endif
  // Nothing to do: sleep until the next interrupt (a received byte, a sample, a transmitted byte, an
  // encoder edge, or Timer0's overflow every 1.024 ms, which bounds the watchdog check's delay). The
  // test and the sleep are atomic: an interrupt after cli() wakes the sleep that follows sei() at once.
  // (It saves power, and simavr skips the slept cycles: the firmware in the loop runs several times
  // faster than real time instead of barely keeping up.)
  cli();
  if (Serial.available() == 0 && core.idle()) {
    sleep_enable();
    sei();
    sleep_cpu();
    sleep_disable();
  }
  sei();
}
