// Firmware in the loop: the real twolink firmware ELF on a simulated 16 MHz AVR (simavr), its UART0
// on a pseudo-terminal, its motor pins and encoder pins connected to a plant that another process
// (twolink rig --firmware, src/mock/firmware-sim.ts) steps in lock-step, in slices of board time.
//
//   fil_harness uno|mega|uno-firmata ELF [--slice-us N] [--lead N] [--no-realtime] [--host-lockstep]
//
// Lines on stdout (to the plant process), one per event:
//   P <path>                 the host end of the pty (the first line)
//   S <k> <t_us> <d1> <d2> <p1> <p2> <stale>
//                            slice k ended at board time t_us [us since power-on, not wrapped]; d1 d2 are
//                            the mean duty of each motor over the slice (-1..1, + = DIR low), from
//                            OCR1A/OCR1B against ICR1, the COM bits and the direction pins; p1 p2 the
//                            counts the encoder pins show now [counts]; stale: how many slices older
//                            than the previous one the plant's newest answer was when the slice began
//                            (0: in lock-step; > 0: the harness ran ahead of a slow plant process and
//                            the pins followed old counts)
//   Z <t_us> <dt_us> <db_us> both motor outputs went to zero at board time t_us, dt_us after the last LF
//                            that reached the AVR from the host, db_us after its last byte (Firmata has
//                            no line ends)
//   B <t_us>                 the AVR was reset (board time restarts in the firmware's micros())
//   L <t_us> <behind_us>     the simulation fell behind the wall clock by up to behind_us [us] from board
//                            time t_us (said once it caught up, or restarted after > 100 ms behind)
//   H <open> <t_us> <bytes>  a host opened (open 1) or closed (open 0) the pty at board time t_us; with
//                            open 1, bytes: what the board sent while no host had it open, discarded
//                            as by a closed serial port (a USB-serial port nobody has open reads
//                            nothing; here the kernel would keep it for the next session)
//   K <t_us>                 the host's first handshake request reached the AVR's UART at board time
//                            t_us (an H frame; on uno-firmata, REPORT_VERSION or REPORT_FIRMWARE): once
//   E <sim_s> <wall_s> <max_behind_ms> <restarts> <dropped>   at exit: the totals
// Lines on stdin (from the plant process):
//   C <k> <c1> <c2> [<v1> <v2>]  encoder counts of the plant at the end of slice k [counts], and its
//                            velocity [counts per slice]: while the plant process is late (stale
//                            slices) the pins go on at that velocity rather than freeze
//   R                        reset the AVR now (a reset mid-run)
//   Q                        quit
// Slice k+1 runs once the counts for slice k - lead have arrived; during a slice the encoder pins move
// towards the newest counts with evenly spaced quadrature edges, so the firmware sees the plant one
// slice (plus `lead` slices) late, unless the plant answers with counts predicted one slice ahead
// (src/mock/firmware-sim.ts does). Real time: each slice starts no earlier than its board time on the
// wall clock; when the simulation falls behind it catches up, then says how far behind it fell (L lines, stderr).
// --host-lockstep (with --no-realtime): a slice does not start while a T frame the firmware sent has had
// no line back from the host yet (at most --host-wait-ms of wall time, default 1000, then it goes on
// until the host writes again; not at all once the host has closed the port): the host's answer then reaches the AVR at the next slice boundary whatever the machine does,
// so runs compare in board time, without wall-clock effects.
//
// simavr 1.6 facts applied here (each cost a day): its sleep callback usleep()s (replaced: pace() keeps
// real time); INT0/INT1 strict level triggering is turned off;
// AVR_UART_FLAG_POLL_SLEEP is cleared (a host sleep on every UCSR0A poll); the UART's byte time is
// corrected from 11 to 10 bit times (simavr counts a parity bit in 8N1); the encoder pins are declared
// external (AVR_IOCTL_IOPORT_SET_EXTERNAL), or an enabled pull-up is re-asserted on every PORT write;
// the Mega's port K has no pin-change interrupt in simavr 1.6, so PCINT2 is raised here; and ICR1 is
// overwritten by input capture even when it is Timer1's TOP (see pwmTop).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <simavr/avr_extint.h>
#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_interrupts.h>
#include <simavr/sim_io.h>
#include <simavr/sim_irq.h>

#define F_CPU 16000000ULL
#define CYCLES_PER_US 16
// Edges of one joint at least 40 us apart (25,000 edges/s, ~3x the plant's top speed, so the pins catch
// up after a pause of the plant): the encoder interrupt takes 8.4 us, and while the sample interrupt
// or the UART's run (interrupts off) a second edge of the same joint would be read as an illegal
// transition, as it would on the board (its README: keep the board under ~30,000 edges/s).
#define MIN_EDGE_CYCLES (40 * CYCLES_PER_US)
#define PTY_OUT_MAX 65536                     // bytes kept for a host that does not read

// Data-space addresses (ATmega328P and ATmega2560 datasheets' register summaries).
enum { TCCR0A = 0x44, OCR0A = 0x47, OCR0B = 0x48, TCCR1A = 0x80, ICR1L = 0x86, OCR1AL = 0x88, OCR1BL = 0x8A, UBRR0L = 0xC4, PCICR = 0x68, PCIFR = 0x3B, PCMSK2 = 0x6D };

// A pin map: the twolink firmware on an Uno or a Mega (Timer1's OC1A/OC1B, TOP = ICR1, + = DIR low,
// encoders on one port), or stock ConfigurableFirmata on an Uno wired as docs/firmata.md suggests
// (analogWrite on D5/D6 = Timer0's OC0B/OC0A in 8-bit fast PWM, + = DIR high as johnny-five's
// forward, analogWrite(255) = the pin driven high; encoders A 2 / B 8, A 3 / B 12).
struct board {
  const char *name, *mcu;
  uint16_t ocr[2];          // OCRx data addresses (the low byte of a 16-bit one), per motor
  int timer1;               // 16-bit OCR with TOP = ICR1; else 8-bit fast PWM, TOP 0xFF
  uint16_t comReg;          // TCCRxA
  uint8_t comShift[2];      // where each motor's COM bits are in it
  uint16_t pwmDdr, pwmPortReg;  // DDRx and PORTx of the PWM pins
  uint8_t pwmBit[2];
  char pwmPort;
  char dirPort[2];
  uint8_t dirBit[2];
  uint16_t dirPortReg[2];   // PORTx data addresses
  int dirHighForward;       // + duty = DIR high (else DIR low)
  int digitalFull;          // COM bits off and the PWM pin high = full duty
  char encPort[4];          // A1 B1 A2 B2
  uint8_t encBit[4];
  int encReverse;           // B leads A when the counts go up (PJRC Encoder's sense of up)
  int ownPcint;             // simavr has no pin-change interrupt on port K: raise PCINT2 here
  uint8_t pcint2Vector;
};
static const struct board kBoards[] = {
    {"uno", "atmega328p", {OCR1AL, OCR1BL}, 1, TCCR1A, {6, 4}, 0x24, 0x25, {1, 2}, 'B', {'D', 'B'}, {7, 0}, {0x2B, 0x25}, 0, 0,
     {'C', 'C', 'C', 'C'}, {0, 1, 2, 3}, 0, 0, 0},
    {"mega", "atmega2560", {OCR1AL, OCR1BL}, 1, TCCR1A, {6, 4}, 0x24, 0x25, {5, 6}, 'B', {'H', 'H'}, {4, 5}, {0x102, 0x102}, 0, 0,
     {'K', 'K', 'K', 'K'}, {0, 1, 2, 3}, 0, 1, 11},
    {"uno-firmata", "atmega328p", {OCR0B, OCR0A}, 0, TCCR0A, {4, 6}, 0x2A, 0x2B, {5, 6}, 'D', {'D', 'D'}, {4, 7}, {0x2B, 0x2B}, 1, 1,
     {'D', 'B', 'D', 'B'}, {2, 0, 3, 4}, 1, 0, 0},
};

static const struct board* B;
static avr_t* avr;
static double wallS(void);
static double wall0;  // wall time [s] that corresponds to simulated time 0
static uint64_t sliceCycles;
static int realtime = 1;
static int lead = 0;
static int hostLockstep = 0;
static int hostOwes;          // a T frame went out and no LF came back from the host since
static int hostAway;          // the host did not answer within hostWaitMs: no waiting until it writes again
static double hostWaitS = 1.0; // --host-wait-ms: how long a slice waits for the host's answer [s]
static int uartAtLineStart = 1, tLine;
static unsigned long long hostWaits;  // slices that waited for the host
static unsigned long long hostTimeouts;  // ... and went on without it after hostWaitS

// ---- motor outputs: the duty the pins apply, integrated over the slice -----------------------------
static double dutyNow[2];            // -1..1
static double dutyArea[2];           // integral of duty over the slice so far [cycles]
static uint64_t dutyAt;              // cycle of the last integration
static uint64_t lastLfCycle;         // when the host's last LF reached the AVR
static uint64_t lastByteCycle;       // when the host's last byte reached the AVR
static uint64_t rxFreeAt;            // our model of simavr's receive pump: when the next byte is in
static int outputsWereOn;
static int firmwareUp;               // the first byte came out of the UART: the encoder interrupt is on

static uint16_t reg16(uint16_t lo) { return (uint16_t)(avr->data[lo] | (avr->data[lo + 1] << 8)); }
// Simulated time since the harness started [us]: the plant's clock. (The firmware's micros() restarts
// at a reset; this does not.)
static unsigned long long simUs(void) { return (unsigned long long)(avr->cycle / CYCLES_PER_US); }

// The PWM's TOP as the firmware set it: ICR1 when it configures Timer1 (the TCCR1A write comes after
// the ICR1 write). Not ICR1 now: simavr 1.6 still runs input capture on ICP1 (PB0 = D8, joint 2's
// direction pin on the Uno) when ICR1 is TOP, where the datasheet disconnects it, so every edge of
// that pin overwrites ICR1 with TCNT1.
static uint16_t pwmTop;

static double pinDuty(int j) {
  const uint8_t com = (uint8_t)(avr->data[B->comReg] >> B->comShift[j]) & 3;  // COMxA1:0 / COMxB1:0
  if (!(avr->data[B->pwmDdr] & (1 << B->pwmBit[j]))) return 0;
  double level;
  if (com == 2 && B->timer1) {
    const uint16_t top = pwmTop;
    uint16_t ocr = reg16(B->ocr[j]);
    if (top == 0) return 0;
    if (ocr > top) ocr = top;
    level = (double)ocr / top;
  } else if (com == 2) {
    level = (avr->data[B->ocr[j]] + 1) / 256.0;  // fast PWM: high for OCR + 1 of 256 counts
  } else if (B->digitalFull) {
    level = (avr->data[B->pwmPortReg] >> B->pwmBit[j]) & 1;
  } else {
    return 0;
  }
  const int dirHigh = (avr->data[B->dirPortReg[j]] >> B->dirBit[j]) & 1;
  return (dirHigh == B->dirHighForward ? 1.0 : -1.0) * level;
}

static void emit(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
}

// Any write that may change a motor output: integrate the old duty up to now, then take the new one.
static void dutyChanged(void) {
  const uint64_t now = avr->cycle;
  for (int j = 0; j < 2; ++j) {
    dutyArea[j] += dutyNow[j] * (double)(now - dutyAt);
    dutyNow[j] = pinDuty(j);
  }
  dutyAt = now;
  const int on = dutyNow[0] != 0 || dutyNow[1] != 0;
  if (outputsWereOn && !on) {
    const uint64_t since = now > lastLfCycle ? (now - lastLfCycle) / CYCLES_PER_US : 0;
    const uint64_t sinceByte = now > lastByteCycle ? (now - lastByteCycle) / CYCLES_PER_US : 0;
    emit("Z %llu %llu %llu\n", simUs(), (unsigned long long)since, (unsigned long long)sinceByte);
  }
  outputsWereOn = on;
}

static void onIoWrite(avr_t* a, avr_io_addr_t addr, uint8_t v, void* param) {
  (void)a, (void)v, (void)param;
  if (addr == TCCR1A && B->timer1) pwmTop = reg16(ICR1L);
  dutyChanged();  // called after simavr's own handler has stored the value
}
static void onDirPin(avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)value, (void)param;
  dutyChanged();
}

// ---- the UART: pty <-> simulated UART0 ----------------------------------------------------------------
static int ptyMaster = -1;
static uint8_t inBuf[4096];
static size_t inLen, inPos;
static uint8_t outBuf[PTY_OUT_MAX];
static size_t outLen;
static unsigned long long outDropped;
// A host has the pty open: reading the master fails with EIO while nobody has the slave open.
static int hostOpen;
static unsigned long long closedDropped, closedTotal;  // board bytes discarded while no host had it open
static int xoff;
static avr_uart_t* uart0;

static void uartOut(avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)param;
  firmwareUp = 1;
  // A whole T frame (its LF) is out: the host owes an answer.
  if (uartAtLineStart) tLine = value == 'T';
  uartAtLineStart = value == '\n';
  if (uartAtLineStart && tLine) hostOwes = 1;
  if (!hostOpen) ++closedDropped;
  else if (outLen < sizeof outBuf) outBuf[outLen++] = (uint8_t)value;
  else ++outDropped;
}
// The host's first handshake request as it reaches the AVR's UART (a line-protocol H frame; on the
// uno-firmata map, Firmata's REPORT_VERSION 0xF9 or REPORT_FIRMWARE query 0xF0 0x79): "K us" once, its
// board time; `twolink rig --firmware` counts its injections' times from it.
static int hostAtLineStart = 1, hostAfterSysex = 0, handshakeSaid = 0;
static void watchHandshake(uint8_t b, uint64_t atCycle) {
  if (handshakeSaid) return;
  const int firmata = strcmp(B->name, "uno-firmata") == 0;
  const int request = firmata ? b == 0xF9 || (hostAfterSysex && b == 0x79) : hostAtLineStart && b == 'H';
  hostAtLineStart = b == '\n';
  hostAfterSysex = b == 0xF0;
  if (!request) return;
  handshakeSaid = 1;
  emit("K %llu\n", (unsigned long long)(atCycle / CYCLES_PER_US));
}

static void pushInput(void) {
  avr_irq_t* in = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT);
  while (inPos < inLen && !xoff) {
    const uint8_t b = inBuf[inPos++];
    const uint64_t start = rxFreeAt > avr->cycle ? rxFreeAt : avr->cycle;
    rxFreeAt = start + (uart0 ? uart0->cycles_per_byte : 160);
    lastByteCycle = rxFreeAt;
    watchHandshake(b, rxFreeAt);
    if (b == '\n') {
      lastLfCycle = rxFreeAt;
      hostOwes = 0;
    }
    avr_raise_irq(in, b);
  }
}
static void uartXon(avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)value, (void)param;
  xoff = 0;
  pushInput();
}
static void uartXoff(avr_irq_t* irq, uint32_t value, void* param) { (void)irq, (void)value, (void)param, xoff = 1; }

// simavr 1.6 counts start + 8 data + parity + stop = 11 bit times for 8N1; the wire has 10.
static void onBaudWrite(avr_t* a, avr_io_addr_t addr, uint8_t v, void* param) {
  (void)a, (void)addr, (void)v, (void)param;
  if (uart0 && uart0->cycles_per_byte % 11 == 0) uart0->cycles_per_byte = uart0->cycles_per_byte / 11 * 10;
}

static void openPty(void) {
  ptyMaster = posix_openpt(O_RDWR | O_NOCTTY);
  if (ptyMaster < 0 || grantpt(ptyMaster) != 0 || unlockpt(ptyMaster) != 0) {
    fprintf(stderr, "fil_harness: cannot create a pseudo-terminal: %s\n", strerror(errno));
    exit(3);
  }
  const char* path = ptsname(ptyMaster);
  // Raw mode now; the slave is then closed again: the host refuses a port another process holds open.
  // (While no host has it open, reading the master fails with EIO, which ptyIo() ignores.)
  const int ptySlave = open(path, O_RDWR | O_NOCTTY);
  struct termios t;
  if (ptySlave < 0 || tcgetattr(ptySlave, &t) != 0) {
    fprintf(stderr, "fil_harness: cannot open %s: %s\n", path, strerror(errno));
    exit(3);
  }
  cfmakeraw(&t);
  tcsetattr(ptySlave, TCSANOW, &t);
  close(ptySlave);
  fcntl(ptyMaster, F_SETFL, fcntl(ptyMaster, F_GETFL) | O_NONBLOCK);
  emit("P %s\n", path);
}

// The host opened or closed the pty. Closed: what the board sends is discarded, and so is what the
// kernel still holds for the host (tcflush on the master flushes the slave's input: Linux pty.c,
// pty_flush_buffer); opened: the same once more, for what was written before it was noticed.
static void hostSeen(int open) {
  if (open == hostOpen) return;
  hostOpen = open;
  outLen = 0;
  tcflush(ptyMaster, TCOFLUSH);
  emit("H %d %llu %llu\n", open, simUs(), open ? closedDropped : 0ULL);
  closedTotal += closedDropped;
  closedDropped = 0;
}

static void ptyIo(void) {
  if (inPos == inLen) inPos = inLen = 0;
  if (inLen < sizeof inBuf) {
    const ssize_t n = read(ptyMaster, inBuf + inLen, sizeof inBuf - inLen);
    if (n > 0) {
      inLen += (size_t)n;
      hostAway = 0;
    }
    if (n >= 0 || errno != EIO) hostSeen(1);
    else hostSeen(0);
  }
  pushInput();
  if (outLen > 0) {
    const ssize_t n = write(ptyMaster, outBuf, outLen);
    if (n > 0) {
      memmove(outBuf, outBuf + n, outLen - (size_t)n);
      outLen -= (size_t)n;
    }
  }
}

// --host-lockstep: waits until the host has answered the last T frame (its LF is read, not yet on the
// AVR's UART: pushInput() then delivers it at this slice's start).
static void waitForHost(void) {
  if (!hostLockstep || hostAway) return;
  const double start = wallS();
  int waited = 0;
  for (;;) {
    int owes = hostOwes;
    for (size_t i = inPos; i < inLen && owes; ++i)
      if (inBuf[i] == '\n') owes = 0;
    if (!owes) break;
    if (!waited) ++hostWaits;
    waited = 1;
    const double left = hostWaitS - (wallS() - start);
    if (left <= 0) {
      hostAway = 1;
      ++hostTimeouts;
      break;
    }
    struct pollfd p = {.fd = ptyMaster, .events = POLLIN};
    poll(&p, 1, (int)(left * 1e3) + 1);
    if (inPos == inLen) inPos = inLen = 0;
    if (inLen < sizeof inBuf) {
      const ssize_t n = read(ptyMaster, inBuf + inLen, sizeof inBuf - inLen);
      if (n > 0) inLen += (size_t)n;
      // The host closed the port (EIO while nobody has the slave open): it will not answer; no waiting.
      if (n < 0 && errno == EIO) {
        hostSeen(0);
        break;
      }
    }
  }
}

// ---- encoders: quadrature edges towards the plant's counts ----------------------------------------------
// Gray code, bits B A, for count mod 4 = 0..3 (A leads B when counting up), idle high at count 0.
static const uint8_t kGray[4] = {3, 2, 0, 1};
// The pins follow the plant like a real encoder, edge by edge. At power-on they start at count 0 and
// wind to the plant's counts once the firmware is up (its banner), as if the arm had been at its zero
// pose at power-on; after a reset they simply go on, and the firmware counts from where it restarts.
static int64_t levelCount[2];   // the position the pins show [counts]; mod 4 decides the levels
static int64_t target[2];       // the plant's newest counts
static double velocity[2];      // the plant's velocity with them [counts per slice]
static int64_t goal[2];         // where the pins head in this slice [counts]
static int edgesLeft[2];
static int edgeTurn;
static uint64_t lastEdge[2];    // cycle of each joint's last edge
static avr_int_vector_t pcint2;  // the Mega's PCINT2 (port K), which simavr 1.6 does not model

// Bits 0..3: A1 B1 A2 B2.
static uint8_t encoderBits(void) {
  const int64_t sign = B->encReverse ? -1 : 1;
  return (uint8_t)(kGray[(sign * levelCount[0]) & 3] | kGray[(sign * levelCount[1]) & 3] << 2);
}

static avr_irq_t* encoderIrq(int line) {
  return avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(B->encPort[line]), B->encBit[line]);
}

static void setEncoderPins(uint8_t before) {
  const uint8_t bits = encoderBits();
  // The lines of each port at once: SET_EXTERNAL replaces the port's whole external mask.
  for (int i = 0; i < 4; ++i) {
    int first = 1;
    for (int k = 0; k < i; ++k) first &= B->encPort[k] != B->encPort[i];
    if (!first) continue;
    avr_ioport_external_t ext = {.name = (unsigned)B->encPort[i], .mask = 0, .value = 0};
    for (int k = i; k < 4; ++k) {
      if (B->encPort[k] != B->encPort[i]) continue;
      ext.mask |= (uint8_t)(1 << B->encBit[k]);
      if ((bits >> k) & 1) ext.value |= (uint8_t)(1 << B->encBit[k]);
    }
    avr_ioctl(avr, AVR_IOCTL_IOPORT_SET_EXTERNAL(B->encPort[i]), &ext);
  }
  for (int i = 0; i < 4; ++i)
    if (((before ^ bits) >> i) & 1) avr_raise_irq(encoderIrq(i), (bits >> i) & 1);
  if (B->ownPcint && (avr->data[PCMSK2] & (before ^ bits))) avr_raise_interrupt(avr, &pcint2);
}

// simavr matches a cycle timer by callback *and* param (to cancel or re-register it): the param stays
// NULL and the interval lives here, or an old edge timer would run on beside the new one.
static uint64_t edgeInterval;

static avr_cycle_count_t edgeTimer(avr_t* a, avr_cycle_count_t when, void* param) {
  (void)a, (void)param;
  const uint64_t interval = edgeInterval;
  int j = edgeTurn;
  if (edgesLeft[j] == 0 || when - lastEdge[j] < MIN_EDGE_CYCLES) j ^= 1;
  if (edgesLeft[0] + edgesLeft[1] == 0) return 0;
  if (edgesLeft[j] == 0 || when - lastEdge[j] < MIN_EDGE_CYCLES) return when + CYCLES_PER_US;  // too soon
  edgeTurn = j ^ 1;
  lastEdge[j] = when;
  const uint8_t before = encoderBits();
  levelCount[j] += goal[j] > levelCount[j] ? 1 : -1;
  --edgesLeft[j];
  setEncoderPins(before);
  return edgesLeft[0] + edgesLeft[1] > 0 ? when + interval : 0;
}

// `stale`: slices since the plant's newest answer was due; the pins head for where the plant will be
// by then at its last velocity (the answer after a pause of the plant process corrects the rest).
static void scheduleEdges(long long stale) {
  avr_cycle_timer_cancel(avr, edgeTimer, NULL);
  if (!firmwareUp) return;
  int total = 0;
  const int cap = (int)(sliceCycles / MIN_EDGE_CYCLES);  // per joint per slice
  for (int j = 0; j < 2; ++j) {
    const double ahead = (double)target[j] + velocity[j] * (double)stale;
    goal[j] = (int64_t)(ahead < 0 ? ahead - 0.5 : ahead + 0.5);
    int64_t need = goal[j] - levelCount[j];
    if (need < 0) need = -need;
    edgesLeft[j] = need > cap ? cap : (int)need;
    total += edgesLeft[j];
  }
  if (total == 0) return;
  edgeInterval = sliceCycles / (uint64_t)total;
  avr_cycle_timer_register(avr, edgeInterval / 2, edgeTimer, NULL);
}

// ---- the plant process -------------------------------------------------------------------------------
static char cmdBuf[8192];
static size_t cmdLen;
static int64_t repliedUpTo = -1;  // the newest slice whose counts arrived
static int quitting;

static void resetAvr(void) {
  avr_reset(avr);  // also cancels every cycle timer: the edges of this slice stop here
  // The reset cleared the PIN registers; the encoder lines keep their levels.
  const uint8_t bits = encoderBits();
  for (int i = 0; i < 4; ++i) {
    avr_irq_t* irq = encoderIrq(i);
    avr_raise_irq(irq, !((bits >> i) & 1));
    avr_raise_irq(irq, (bits >> i) & 1);
  }
  xoff = 0;
  rxFreeAt = avr->cycle;
  pwmTop = 0;
  dutyChanged();
  emit("B %llu\n", simUs());
}

static void handleCommand(const char* line) {
  long long k, c1, c2;
  double v1 = 0, v2 = 0;
  if (sscanf(line, "C %lld %lld %lld %lf %lf", &k, &c1, &c2, &v1, &v2) >= 3) {
    target[0] = c1;
    target[1] = c2;
    velocity[0] = v1;
    velocity[1] = v2;
    // Real time starts with the plant's first answer: the plant process takes a while to start.
    if (repliedUpTo < 0) wall0 = wallS() - (double)avr->cycle / (double)F_CPU;
    repliedUpTo = k;
  } else if (strcmp(line, "R") == 0) {
    resetAvr();
  } else if (strcmp(line, "Q") == 0) {
    quitting = 1;
  } else {
    fprintf(stderr, "fil_harness: unknown command from the plant process: %s\n", line);
  }
}

// Reads stdin; blocks until a line arrives when `wait` is set. Returns 0 at EOF.
static int readCommands(int wait) {
  struct pollfd p = {.fd = 0, .events = POLLIN};
  while (poll(&p, 1, wait ? -1 : 0) > 0) {
    const ssize_t n = read(0, cmdBuf + cmdLen, sizeof cmdBuf - cmdLen - 1);
    if (n <= 0) return 0;
    cmdLen += (size_t)n;
    char* start = cmdBuf;
    char* lf;
    while ((lf = memchr(start, '\n', cmdLen - (size_t)(start - cmdBuf))) != NULL) {
      *lf = 0;
      handleCommand(start);
      start = lf + 1;
    }
    cmdLen -= (size_t)(start - cmdBuf);
    memmove(cmdBuf, start, cmdLen);
    wait = 0;
  }
  return 1;
}

// ---- real time ------------------------------------------------------------------------------------------
static double wallS(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static double maxBehindS, behindTotalS;
static unsigned long behindEvents, reanchors;
static double lastBehindReportS = -10;
// The episode under way (behind since board time episodeStartS, episodeMaxS at most; 0: none). An L line
// carries an episode's peak, said once it is over: the lag at the moment it first passed 5 ms (what this
// said before) under-reported a starvation that went on growing (a tune --port run that strayed while
// the board had been 50.9 ms behind said nothing of it).
static double episodeStartS, episodeMaxS;

// Says an episode that reached more than 5 ms behind: an L line each; on stderr at most once a second.
static void endEpisode(void) {
  if (episodeMaxS > 0.005) {
    ++behindEvents;
    emit("L %llu %llu\n", (unsigned long long)(episodeStartS * 1e6), (unsigned long long)(episodeMaxS * 1e6));
    const double now = wallS();
    if (now - lastBehindReportS >= 1.0) {
      lastBehindReportS = now;
      fprintf(stderr, "fil_harness: the simulation fell %.1f ms behind the wall clock from board time %.3f s\n", episodeMaxS * 1e3,
              episodeStartS);
    }
  }
  episodeMaxS = 0;
}

// Waits until the wall clock reaches simulated time `simS`, or says how far behind it is.
static void pace(double simS) {
  if (!realtime) return;
  const double behind = wallS() - wall0 - simS;
  if (behind <= 0) {
    endEpisode();  // caught up
    const double until = wall0 + simS;
    struct timespec t = {.tv_sec = (time_t)until, .tv_nsec = (long)((until - (double)(time_t)until) * 1e9)};
    clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL);
    return;
  }
  if (behind > maxBehindS) maxBehindS = behind;
  if (episodeMaxS == 0) episodeStartS = simS;
  if (behind > episodeMaxS) episodeMaxS = behind;
  // A board cannot be late: after a long stall of this process, start again from now (the host sees a
  // gap in the board's frames, as from a stalled USB link) rather than run the backlog at full speed.
  if (behind > 0.1) {
    endEpisode();
    behindTotalS += behind;
    wall0 += behind;
    ++reanchors;
  }
}

// A sleeping AVR skips ahead to its next timer event (up to Timer0's next overflow, ~1 ms): a timer at
// the end of the slice keeps the slices on their grid.
static avr_cycle_count_t sliceEnd(avr_t* a, avr_cycle_count_t when, void* param) {
  (void)a, (void)when, (void)param;
  return 0;
}

static void usage(void) {
  fprintf(stderr, "usage: fil_harness uno|mega|uno-firmata ELF [--slice-us N] [--lead N] [--no-realtime] [--host-lockstep [--host-wait-ms N]]\n");
  exit(2);
}

// simavr's own sleep callback (avr_callback_sleep_raw) usleep()s to keep a sleeping AVR in step with
// the wall clock; pace() does that here, per slice, so a sleeping AVR just skips ahead.
static void skipSleep(avr_t* a, avr_cycle_count_t howLong) { (void)a, (void)howLong; }

static avr_uart_t* findUart0(void) {
  avr_irq_t* irq0 = avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), 0);
  for (avr_io_t* io = avr->io_port; io; io = io->next)
    if (io->irq == irq0) return (avr_uart_t*)io;  // avr_io_t is the first member of avr_uart_t
  return NULL;
}

static void setup(const char* elf) {
  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(elf, &fw) != 0) {
    fprintf(stderr, "fil_harness: cannot read the firmware image %s\n", elf);
    exit(2);
  }
  strcpy(fw.mmcu, B->mcu);
  fw.frequency = F_CPU;
  avr = avr_make_mcu_by_name(fw.mmcu);
  if (!avr) {
    fprintf(stderr, "fil_harness: this simavr has no %s\n", fw.mmcu);
    exit(2);
  }
  avr_init(avr);
  avr->sleep = skipSleep;
  avr_load_firmware(avr, &fw);
  avr->log = LOG_NONE;
  avr_extint_set_strict_lvl_trig(avr, 0, 0);
  avr_extint_set_strict_lvl_trig(avr, 1, 0);
  uint32_t flags = 0;  // no AVR_UART_FLAG_POLL_SLEEP, no stdio echo
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  uart0 = findUart0();
  avr_register_io_write(avr, UBRR0L, onBaudWrite, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uartOut, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), uartXon, NULL);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), uartXoff, NULL);
  avr_register_io_write(avr, B->ocr[0], onIoWrite, NULL);
  avr_register_io_write(avr, B->ocr[1], onIoWrite, NULL);
  avr_register_io_write(avr, B->comReg, onIoWrite, NULL);
  for (int j = 0; j < 2; ++j) {
    avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(B->dirPort[j]), B->dirBit[j]), onDirPin, NULL);
    // analogWrite(255) and (0) drive the pin as a digital output
    if (B->digitalFull) avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(B->pwmPort), B->pwmBit[j]), onDirPin, NULL);
  }
  if (B->ownPcint) {
    pcint2.vector = B->pcint2Vector;
    pcint2.enable = (avr_regbit_t)AVR_IO_REGBIT(PCICR, 2);
    pcint2.raised = (avr_regbit_t)AVR_IO_REGBIT(PCIFR, 2);
    avr_register_vector(avr, &pcint2);
  }
  setEncoderPins((uint8_t)~encoderBits());  // idle: count 0, both lines high
}

int main(int argc, char** argv) {
  if (argc < 3) usage();
  B = NULL;
  for (size_t i = 0; i < sizeof kBoards / sizeof kBoards[0]; ++i)
    if (strcmp(argv[1], kBoards[i].name) == 0) B = &kBoards[i];
  if (!B) usage();
  uint64_t sliceUs = 250;
  for (int i = 3; i < argc; ++i) {
    if (strcmp(argv[i], "--slice-us") == 0 && i + 1 < argc) sliceUs = strtoull(argv[++i], NULL, 10);
    else if (strcmp(argv[i], "--lead") == 0 && i + 1 < argc) lead = atoi(argv[++i]);
    else if (strcmp(argv[i], "--no-realtime") == 0) realtime = 0;
    else if (strcmp(argv[i], "--host-lockstep") == 0) hostLockstep = 1;
    else if (strcmp(argv[i], "--host-wait-ms") == 0 && i + 1 < argc) hostWaitS = strtod(argv[++i], NULL) / 1e3;
    else usage();
  }
  if (sliceUs < 20 || sliceUs > 10000 || lead < 0 || lead > 400 || (hostLockstep && realtime) || !(hostWaitS > 0 && hostWaitS <= 600)) usage();
  sliceCycles = sliceUs * CYCLES_PER_US;
  // Ctrl-C on a terminal (and `timeout`, `kill -- -PGID`) reach the whole process group: the plant
  // process decides when this ends (Q, or the end of stdin), so that the totals still come out.
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, SIG_IGN);
  // simavr prints what it loads on stdout: keep stdout for the protocol, send that to stderr.
  const int protocolOut = dup(1);
  dup2(2, 1);
  setup(argv[2]);
  fflush(stdout);
  dup2(protocolOut, 1);
  close(protocolOut);
  setvbuf(stdout, NULL, _IOFBF, 1 << 16);
  openPty();
  fflush(stdout);
  wall0 = wallS();
  const double t0 = wallS();
  for (int64_t k = 0; !quitting; ++k) {
    // Lock-step: slice k runs once the plant has answered slice k - 1 - lead.
    while (repliedUpTo < k - 1 - lead && !quitting)
      if (!readCommands(1)) quitting = 1;
    if (quitting || !readCommands(0)) break;
    const uint64_t end = (uint64_t)(k + 1) * sliceCycles;
    pace((double)(k * sliceCycles) / (double)F_CPU);
    // The plant's answer to the previous slice usually arrives while pace() sleeps: read it now, or the
    // pins would follow counts one slice older than they need to (they did, until this was added), and
    // give a late answer up to a fifth of a slice of wall time (the simulation runs ~12x real time and
    // catches up). Beyond that the slice runs ahead of the plant process (counted in the S line).
    if (realtime && repliedUpTo < k - 1) {
      const double until = wallS() + (double)sliceCycles / F_CPU / 5;
      struct pollfd p = {.fd = 0, .events = POLLIN};
      int open = 1;
      for (double left; open && repliedUpTo < k - 1 && (left = until - wallS()) > 0;) {
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)(left * 1e9)};
        if (ppoll(&p, 1, &ts, NULL) > 0) open = readCommands(0);
      }
      if (!open) break;
    }
    const long long stale = repliedUpTo < k - 1 ? (long long)(k - 1 - repliedUpTo) : 0;
    waitForHost();
    ptyIo();
    scheduleEdges(stale);
    const uint64_t from = avr->cycle;  // == dutyAt: the duty is integrated from here
    if (end > avr->cycle) avr_cycle_timer_register(avr, end - avr->cycle, sliceEnd, NULL);
    while (avr->cycle < end) {
      const int state = avr_run(avr);
      if (state == cpu_Done || state == cpu_Crashed) {
        fprintf(stderr, "fil_harness: the simulated AVR stopped (state %d) at %.6f s\n", state, (double)avr->cycle / F_CPU);
        return 1;
      }
    }
    dutyChanged();
    const double span = (double)(avr->cycle - from);  // 0 if a sleeping AVR already ran past `end`
    emit("S %lld %llu %.5f %.5f %lld %lld %lld\n", (long long)k, simUs(), span > 0 ? dutyArea[0] / span : dutyNow[0],
         span > 0 ? dutyArea[1] / span : dutyNow[1], (long long)levelCount[0], (long long)levelCount[1], stale);
    dutyArea[0] = dutyArea[1] = 0;
    fflush(stdout);
    ptyIo();
  }
  endEpisode();  // one still under way at the end
  const double sim = (double)avr->cycle / F_CPU, wall = wallS() - t0;
  fprintf(stderr,
          "fil_harness: %.3f s of board time in %.3f s of wall time; behind the wall clock at most %.1f ms "
          "(%lu reports, %lu restarts skipping %.1f ms); UART bytes dropped for a host that did not read: %llu, discarded while no host had the port open: %llu%s\n",
          sim, wall, maxBehindS * 1e3, behindEvents, reanchors, behindTotalS * 1e3, outDropped, closedTotal + closedDropped,
          hostLockstep ? "; host lock-step" : "");
  if (hostLockstep)
    fprintf(stderr, "fil_harness: host lock-step: %llu slices waited for the host's answer, %llu went on without it after %g s\n", hostWaits,
            hostTimeouts, hostWaitS);
  emit("E %.6f %.6f %.3f %lu %llu\n", sim, wall, maxBehindS * 1e3, reanchors, outDropped);
  fflush(stdout);
  return 0;
}
