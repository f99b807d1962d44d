// twolink firmware configuration: the things that differ between arms. Edit here, rebuild, reflash.
// The board (pins, registers) is chosen from the compiler's MCU macro; a board this file does not
// know is a compile error rather than a guess. Pin macros are only expanded in twolink_fw.ino, so this
// file stays includable by the Arduino-free core and the host tests.
#ifndef TWOLINK_CONFIG_H
#define TWOLINK_CONFIG_H

#define TL_FW_VERSION "twolink-fw/1.0.0"
#define TL_JOINTS 2

// Encoder counts per joint revolution [counts/rev], reported as `cpr=` in the banner. The firmware
// counts every edge of A and B (x4), so a 512-line (512 PPR) encoder on the joint gives 2048; an
// encoder on the motor shaft gives lines x 4 x gear ratio (e.g. 12 lines x 4 x 30:1 = 1440).
// A build may set them from outside (make CPR1=4800 CPR2=2400; the simulator build for a rig file).
#ifndef TL_CPR_1
#define TL_CPR_1 2048
#endif
#ifndef TL_CPR_2
#define TL_CPR_2 2048
#endif

// Serial link [baud]. 1,000,000 is exact on a 16 MHz AVR (UBRR = 1 with U2X); 500000 and 250000 are
// exact too. 115200 is 2.1% off on a 16 MHz AVR and too slow for 500 Hz (PROTOCOL.md section 7).
#define TL_BAUD 1000000UL

// Motor PWM: Timer1, phase-correct, TOP = ICR1 = TL_PWM_TOP, no prescaler:
// 16 MHz / (2 * 400) = 20 kHz (above hearing); duty 1000 per mille = 400 steps (`pwm=` in the banner).
#define TL_PWM_TOP 400

// Sign conventions (PROTOCOL.md section 2): +duty must give counter-clockwise joint torque and
// counter-clockwise motion must count up. Set to 1 to flip a joint instead of rewiring it.
#define TL_MOTOR_INVERT_1 0
#define TL_MOTOR_INVERT_2 0
#define TL_ENC_INVERT_1 0
#define TL_ENC_INVERT_2 0

// Direction pins of the sign-magnitude drivers (PWM + DIR, e.g. Cytron MD10C, Pololu). For
// two-input bridges (L298N IN1/IN2, TB6612 AIN1/AIN2) set TL_DIR2_PIN_x to a free pin: it is driven
// as the inverse of DIR (suggested: 4 for joint 1, 5 for joint 2). TL_NO_PIN leaves it unused.
#define TL_NO_PIN 255
#define TL_DIR_PIN_1 7
#define TL_DIR_PIN_2 8
#define TL_DIR2_PIN_1 TL_NO_PIN
#define TL_DIR2_PIN_2 TL_NO_PIN

// Protocol defaults (PROTOCOL.md sections 2 and 5).
#define TL_WDT_DEFAULT_MS 100   // host watchdog timeout [ms]
#define TL_MAX_RATE_HZ 1000     // highest telemetry rate [Hz] (`maxrate=`)
#define TL_CPU_HZ 16000000UL    // the clock the sample timer (Timer2) counts [Hz]
#define TL_BANNER_PERIOD_US 500000UL  // banner repeat until the first valid H [us]

// Bytes of board frames queued in RAM while the UART drains (HardwareSerial adds its own 64). Must be
// a power of two, at least 128 (one banner). When full, frames are dropped and flagged TXDROP.
#define TL_TX_QUEUE 256

// AVR hardware watchdog: resets the board if the main loop ever stalls for ~250 ms (a bug), which
// turns every pin into an input (motors off via the pull-downs in README). Set to 0 on a Mega 2560
// with a pre-2013 bootloader, which loops forever after a watchdog reset.
#define TL_HW_WATCHDOG 1

#if defined(__AVR_ATmega328P__)  // Arduino Uno (and Nano, Pro Mini 16 MHz)
#define TL_BOARD "uno"
#define TL_PWM_PIN_1 9    // OC1A = PB1
#define TL_PWM_PIN_2 10   // OC1B = PB2
// Encoders on analog pins used as digital inputs: joint 1 A/B = A0/A1, joint 2 A/B = A2/A3,
// i.e. PC0..PC3, pin-change interrupt group 1 (PCINT8..11).
#define TL_ENC_PINS {A0, A1, A2, A3}
#define TL_ENC_PORT PINC      // input register holding the 4 encoder bits
#define TL_ENC_SHIFT 0        // bit of joint 1 A; then 1 B, 2 A, 3 B
#define TL_ENC_PCMSK PCMSK1
#define TL_ENC_PCIE PCIE1
#define TL_ENC_VECT PCINT1_vect
#elif defined(__AVR_ATmega2560__)  // Arduino Mega 2560
#define TL_BOARD "mega"
#define TL_PWM_PIN_1 11   // OC1A = PB5
#define TL_PWM_PIN_2 12   // OC1B = PB6
// Joint 1 A/B = A8/A9, joint 2 A/B = A10/A11: PK0..PK3, pin-change group 2 (PCINT16..19).
#define TL_ENC_PINS {A8, A9, A10, A11}
#define TL_ENC_PORT PINK
#define TL_ENC_SHIFT 0
#define TL_ENC_PCMSK PCMSK2
#define TL_ENC_PCIE PCIE2
#define TL_ENC_VECT PCINT2_vect
#elif defined(__AVR_ATmega32U4__)  // Arduino Leonardo / Micro: native USB (Serial is the USB CDC port)
#define TL_BOARD "leonardo"
#define TL_PWM_PIN_1 9    // OC1A = PB5
#define TL_PWM_PIN_2 10   // OC1B = PB6
// The 32U4's pin-change interrupts are on PORTB only (D9/D10 there are the PWM), so the encoders use
// the external interrupts INT0..INT3 = PD0..PD3, any edge: joint 1 A/B = D3/D2, joint 2 A/B = D0/D1
// (the UART pins are free: Serial is USB). Same pins on the Leonardo and the Micro.
#define TL_ENC_PINS {3, 2, 0, 1}
#define TL_ENC_PORT PIND
#define TL_ENC_SHIFT 0
#define TL_ENC_EXTINT 1
#define TL_ENC_VECT INT0_vect
// The 32U4 has no Timer2: the sample clock is Timer3 (16-bit, CTC).
#define TL_SAMPLE_TIMER3 1
#elif defined(TWOLINK_HOST_TEST)  // g++ on the development machine: the Uno's identity
#define TL_BOARD "uno"
#else
#error "twolink firmware: unknown board. Build for an Arduino Uno (ATmega328P), Mega 2560 or Leonardo/Micro (ATmega32U4), or add the board to config.h."
#endif

#endif
