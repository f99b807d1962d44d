// Smoke test of the real firmware image in simavr (make sim-test; needs simavr and libsimavr-dev):
// boots build/<board>/twolink_fw.elf on a simulated 16 MHz AVR, talks to it over the simulated UART
// at 1 Mbaud, and checks what the host tests cannot: the Timer1 PWM registers and DIR pins, the
// encoder interrupt, the watchdog cut time in simulated microseconds, that the AVR hardware watchdog
// never fires, and the stack's low-water mark. Usage: sim_test uno|mega <elf>. Exit 0 = passed.
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <simavr/avr_ioport.h>
#include <simavr/avr_uart.h>
#include <simavr/sim_avr.h>
#include <simavr/sim_elf.h>
#include <simavr/sim_irq.h>

// Data-space addresses (the datasheets' register summaries); Timer1 is at the same place on both.
enum { TCCR1A = 0x80, ICR1L = 0x86, OCR1AL = 0x88, OCR1BL = 0x8A, DDRB = 0x24 };

struct board {
  const char *name, *mcu;
  uint16_t ramend;
  uint8_t pwmBits;             // DDRB bits of OC1A | OC1B
  uint16_t dirPort[2];         // PORTx of DIR 1, DIR 2
  uint8_t dirBit[2];
  char encPort;                // encoder A1 B1 A2 B2 on bits 0..3 of this port
  int encSimulated;            // simavr 1.6 models pin-change interrupts on this port
};
static const struct board kBoards[] = {
    {"uno", "atmega328p", 0x08FF, (1 << 1) | (1 << 2), {0x2B, 0x25}, {7, 0}, 'C', 1},   // D7 = PD7, D8 = PB0
    {"mega", "atmega2560", 0x21FF, (1 << 5) | (1 << 6), {0x102, 0x102}, {4, 5}, 'K', 0}, // D7 = PH4, D8 = PH5
};

static avr_t* avr;
static const struct board* B;
static char rx[65536];  // everything the board sent
static size_t rxLen, rxRead;
static char tx[4096];   // bytes waiting for the simulated UART
static size_t txLen, txPos;
static int xoff;
static uint32_t txDoneUs;  // [us] when the last queued byte went into the simulated UART
static uint16_t minSp = 0xFFFF;
static int failures, checks;

static void uartOut(avr_irq_t* irq, uint32_t value, void* param) {
  (void)irq, (void)param;
  if (rxLen < sizeof rx) rx[rxLen++] = (char)value;
}
static void uartXon(avr_irq_t* irq, uint32_t value, void* param) { (void)irq, (void)value, (void)param, xoff = 0; }
static void uartXoff(avr_irq_t* irq, uint32_t value, void* param) { (void)irq, (void)value, (void)param, xoff = 1; }

static uint32_t nowUs(void) { return (uint32_t)(avr->cycle / 16); }
static uint16_t reg16(uint16_t lo) { return (uint16_t)(avr->data[lo] | (avr->data[lo + 1] << 8)); }
static int dirPin(int j) { return (avr->data[B->dirPort[j]] >> B->dirBit[j]) & 1; }

static void check(int ok, const char* fmt, ...) {
  ++checks;
  if (ok) return;
  ++failures;
  va_list ap;
  va_start(ap, fmt);
  printf("FAIL [sim %s] ", B->name);
  vprintf(fmt, ap);
  printf("\n");
  va_end(ap);
}

static void step(void) {
  int state = avr_run(avr);
  if (state == cpu_Done || state == cpu_Crashed) {
    printf("FAIL [sim %s] the simulated CPU stopped (state %d) at %u us\n", B->name, state, nowUs());
    exit(1);
  }
  uint16_t sp = (uint16_t)(avr->data[R_SPL] | (avr->data[R_SPH] << 8));
  if (sp < minSp) minSp = sp;
  if (txPos < txLen && !xoff) {
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_INPUT), (uint8_t)tx[txPos++]);
    if (txPos == txLen) txDoneUs = nowUs();
  }
}

static void runFor(uint32_t us) {
  for (uint32_t end = nowUs() + us; nowUs() < end;) step();
}

static uint16_t crc16(const char* p, size_t n) {
  uint16_t crc = 0xFFFF;
  while (n--) {
    crc ^= (uint16_t)((uint8_t)*p++ << 8);
    for (int k = 0; k < 8; ++k) crc = (uint16_t)(crc & 0x8000 ? (crc << 1) ^ 0x1021 : crc << 1);
  }
  return crc;
}

// Queues body "*" CRC LF for the board.
static void sendFrame(const char* body) {
  txLen = txPos = 0;
  txLen = (size_t)snprintf(tx, sizeof tx, "%s*%04X\n", body, crc16(body, strlen(body)));
}

// The next line from the board (CRC checked and stripped), or "" after `timeoutUs`.
static const char* nextLine(uint32_t timeoutUs) {
  static char line[256];
  for (uint32_t end = nowUs() + timeoutUs;;) {
    char* lf = memchr(rx + rxRead, '\n', rxLen - rxRead);
    if (lf) {
      size_t n = (size_t)(lf - (rx + rxRead));
      memcpy(line, rx + rxRead, n < 255 ? n : 255);
      line[n < 255 ? n : 255] = 0;
      rxRead += n + 1;
      char* star = strrchr(line, '*');
      check(n == 0 || (star && strtoul(star + 1, 0, 16) == crc16(line, (size_t)(star - line))), "bad CRC on \"%s\"", line);
      if (star) *star = 0;
      return line;
    }
    if (nowUs() >= end) return "";
    step();
  }
}

static void expectLine(const char* prefix, uint32_t timeoutUs, const char* what) {
  const char* l = nextLine(timeoutUs);
  check(strncmp(l, prefix, strlen(prefix)) == 0, "%s: got \"%s\", want \"%s...\"", what, l, prefix);
}

static void setEncoderBits(uint8_t bits) {
  for (int i = 0; i < 4; ++i)
    avr_raise_irq(avr_io_getirq(avr, AVR_IOCTL_IOPORT_GETIRQ(B->encPort), i), (bits >> i) & 1);
}

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s uno|mega <elf>\n", argv[0]);
    return 2;
  }
  B = strcmp(argv[1], "mega") == 0 ? &kBoards[1] : &kBoards[0];
  elf_firmware_t fw;
  memset(&fw, 0, sizeof fw);
  if (elf_read_firmware(argv[2], &fw) != 0) {
    printf("FAIL [sim %s] cannot read %s\n", B->name, argv[2]);
    return 1;
  }
  strcpy(fw.mmcu, B->mcu);
  fw.frequency = 16000000;
  avr = avr_make_mcu_by_name(fw.mmcu);
  if (!avr) return printf("FAIL [sim] simavr has no %s\n", fw.mmcu), 1;
  avr_init(avr);
  avr_load_firmware(avr, &fw);
  avr->log = LOG_NONE;
  uint32_t flags = 0;  // no console echo, no host sleeps: run as fast as possible
  avr_ioctl(avr, AVR_IOCTL_UART_SET_FLAGS('0'), &flags);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUTPUT), uartOut, 0);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XON), uartXon, 0);
  avr_irq_register_notify(avr_io_getirq(avr, AVR_IOCTL_UART_GETIRQ('0'), UART_IRQ_OUT_XOFF), uartXoff, 0);
  setEncoderBits(0x0F);  // idle encoder lines high, as the pull-ups hold them

  // Boot: a lone LF, the banner, PWM configured at 20 kHz with both outputs low.
  check(strcmp(nextLine(100000), "") == 0, "a lone LF before the first banner");
  expectLine("I 0 - fw=twolink-fw/1.0.0 proto=1 board=", 100000, "banner");
  check(reg16(ICR1L) == 400 && reg16(OCR1AL) == 0 && reg16(OCR1BL) == 0, "Timer1 TOP 400, duty 0 at boot");
  check((avr->data[DDRB] & B->pwmBits) == B->pwmBits, "PWM pins are outputs");
  check((avr->data[TCCR1A] & 0xA0) == 0xA0, "OC1A/OC1B connected (non-inverting)");
  expectLine("I 1 - ", 600000, "banner repeat after 500 ms");

  sendFrame("H 0 1");
  expectLine("I 2 0 fw=", 5000, "I answers H");
  sendFrame("R 1 0");
  expectLine("A 3 1", 5000, "R");
  sendFrame("M 2 500 -250");
  expectLine("E 4 2 DISABLED", 5000, "M while disabled");
  check(reg16(OCR1AL) == 0, "no duty while disabled");
  sendFrame("N 3 1");
  expectLine("A 5 3", 5000, "N 1");

  // Encoders (bits: A1 B1 A2 B2), from the idle state 11 of both: joint 1 forward 25 cycles (A leads
  // B: +100 counts), then joint 2 backward 10 cycles (-40 counts). 20 us per edge = 50k counts/s.
  static const uint8_t fwd[4] = {2, 0, 1, 3}, back[4] = {1, 0, 2, 3};
  for (int c = 0; c < 25; ++c)
    for (int k = 0; k < 4; ++k) {
      setEncoderBits((uint8_t)(fwd[k] | 0x0C));
      runFor(20);
    }
  for (int c = 0; c < 10; ++c)
    for (int k = 0; k < 4; ++k) {
      setEncoderBits((uint8_t)(0x03 | back[k] << 2));
      runFor(20);
    }
  sendFrame("M 4 500 -250");
  expectLine("T 6 4 ", 5000, "T after M");
  check(reg16(OCR1AL) == 200 && reg16(OCR1BL) == 100, "duty 500/-250 -> OCR1A 200, OCR1B 100 (got %u, %u)",
        reg16(OCR1AL), reg16(OCR1BL));
  check(dirPin(0) == 0 && dirPin(1) == 1, "DIR 1 low (+), DIR 2 high (-)");

  // The T above carries the counts: re-read it from the log.
  {
    const char* log = rx;
    const char* tl = strstr(log, "\nT 6 4 ");
    long c1 = 0, c2 = 0;
    unsigned long tus = 0;
    char fl[3] = "";
    check(tl && sscanf(tl + 7, "%lu %ld %ld %2s", &tus, &c1, &c2, fl) == 4, "parse T");
    if (B->encSimulated) check(c1 == 100 && c2 == -40, "encoder counts 100, -40 (got %ld, %ld)", c1, c2);
    else printf("sim %s: encoder checks skipped (simavr 1.6 has no pin-change interrupt on port %c)\n", B->name,
                B->encPort);
    check(strcmp(fl, "01") == 0, "flags 01 (got %s)", fl);
  }
  setEncoderBits(0x0C);  // A and B of joint 1 change at once: an illegal transition
  runFor(50);
  sendFrame("M 5 0 0");
  {
    const char* l = nextLine(5000);
    check(strlen(l) > 2 && strcmp(l + strlen(l) - 2, B->encSimulated ? "21" : "01") == 0,
          "ENC flag after an illegal transition: \"%s\"", l);
  }

  // Watchdog: the last accepted frame was M 5; the outputs must go off 100 ms later.
  sendFrame("M 6 1000 1000");
  const char* l6 = nextLine(5000);
  const unsigned long t6 = strtoul(strchr(strchr(l6 + 2, ' ') + 1, ' ') + 1, 0, 10);  // [us] board time
  const uint32_t fed = txDoneUs + 10;  // the LF is on the wire for 10 us at 1 Mbaud
  check(reg16(OCR1AL) == 400, "duty 1000 -> OCR1A 400");
  uint32_t cut = 0;
  while (nowUs() - fed < 150000 && !cut) {
    step();
    if (reg16(OCR1AL) == 0) cut = nowUs();
  }
  // Simulated time only within +-1.5 ms: simavr 1.6's Timer0 makes Arduino's micros() step by one
  // overflow (1.024 ms) against the cycle count now and then. The exact check is on the board's clock
  // below: the firmware has no other notion of time.
  check(cut && cut - fed >= 98500 && cut - fed <= 101500, "watchdog cut %u us after the M arrived (want ~100 ms)",
        cut - fed);
  expectLine("E ", 5000, "E WDT");
  const char* lw = nextLine(5000);
  const unsigned long tw = strtoul(strchr(strchr(lw + 2, ' ') + 1, ' ') + 1, 0, 10);
  check(tw - t6 > 100000 && tw - t6 <= 101000, "board time from M 6 to the WDT telemetry: %lu us", tw - t6);

  // Garbage, then still in service; the AVR hardware watchdog must not have reset the board.
  txLen = txPos = 0;
  uint32_t r = 7;
  for (int i = 0; i < 3000; ++i) {
    r = r * 1103515245u + 12345u;
    tx[txLen++] = (char)(r >> 16);
  }
  tx[txLen++] = '\n';
  runFor(60000);
  // A flood can overflow the core's 64-byte receive ring and lose the final LF; the host resyncs the
  // board's line assembler with a lone LF (PROTOCOL.md section 1) before it talks again.
  txLen = txPos = 0;
  tx[txLen++] = '\n';
  runFor(100);
  rxRead = rxLen;
  sendFrame("P 7");
  {
    const char* l = nextLine(5000);
    while (l[0] == 'E') l = nextLine(5000);  // the resync LF's own rejection (an empty or partial line)
    check(strncmp(l, "A ", 2) == 0, "P after garbage: got \"%s\", want \"A ...\"", l);
  }
  check(reg16(OCR1AL) == 0 && reg16(OCR1BL) == 0, "garbage applied no duty");
  check(strstr(rx + 1, "\nI 0 - ") == 0, "no reset (no second boot banner)");

  const unsigned stack = (unsigned)(B->ramend - minSp);
  printf("sim %s: %d checks, %d failed; stack peak %u bytes; simulated %u ms\n", B->name, checks, failures, stack,
         nowUs() / 1000);
  return failures ? 1 : 0;
}
