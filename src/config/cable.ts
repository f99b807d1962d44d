/**
 * The USB-serial cables between a laptop and an Arduino-class board: what each adapter chip does with
 * the bytes (the figures the mock's model in src/mock/usb-adapter.ts uses, each with the public source
 * it was read from), which adapter a board has, the USB IDs that tell them apart, and what rate and
 * answer delay a cable allows. Pure data and arithmetic.
 */
export const ADAPTER_KINDS = ['none', '16u2', 'ch340', 'ftdi', 'native'] as const;
export type AdapterKind = (typeof ADAPTER_KINDS)[number];

/** USB full-speed frame [s] (USB 2.0 specification: SOF every 1 ms on a full-speed bus). */
export const USB_FRAME_S = 0.001;

/**
 * The Uno/Mega's ATmega16U2 running Arduino's stock arduino-usbserial (LUFA), read in
 * arduino/ArduinoCore-avr `firmwares/atmegaxxu2/arduino-usbserial/Arduino-usbserial.c`:
 * `SetupHardware` starts Timer0 with `TCCR0B = (1 << CS02)` (clk/256, free running, 8 bits), and the
 * main loop sends the UART ring to the IN endpoint when `TIFR0 & (1 << TOV0)` (the overflow flag) or
 * `BufferCount > BUFFER_NEARLY_FULL`. One overflow every 256 x 256 / 16 MHz = 4.096 ms, at a fixed
 * phase (the flag is cleared, the counter keeps running). `Lib/LightweightRingBuff.h`:
 * `BUFFER_SIZE 128`, `BUFFER_NEARLY_FULL 96`; the threshold is strictly more than 96 bytes (97).
 * `Descriptors.h`: `CDC_TXRX_EPSIZE 64`. (arduino/Arduino's later LUFA-2015 rewrite of the same file
 * sends whenever the IN endpoint is free and has no Timer0 flush; ArduinoCore-avr ships the Timer0
 * source above next to its Uno R3 and Mega R3 hex files, so the model follows it.)
 */
export const U2 = {
  clockHz: 16e6,
  timer0Prescale: 256,
  /** Timer0 overflow period [s]: 256 counts x 256 prescale / 16 MHz = 4.096 ms. */
  flushS: (256 * 256) / 16e6,
  ringBytes: 128,
  /** The ring is flushed early when it holds more than this many bytes. */
  nearlyFullBytes: 96,
  endpointBytes: 64,
} as const;

/**
 * FTDI FT232R / FT231X. Linux `drivers/usb/serial/ftdi_sio.c` (torvalds/linux): `ftdi_port_probe`
 * sets `priv->latency = 16` when `read_latency_timer` fails, and `latency_timer_store` writes the
 * sysfs value (1-255 ms) to the chip with FTDI_SIO_SET_LATENCY_TIMER; `write_latency_timer` sends 1
 * when the port has ASYNC_LOW_LATENCY (`setserial low_latency`, serialport's `set({ lowLatency })`,
 * but only as root: `set_serial_info` skips the write for other users). `ftdi_process_read_urb`
 * strips two status bytes from each max-packet (64 bytes on the full-speed chips), so a full packet
 * carries 62 data bytes: the chip sends when 62 are waiting or when its latency timer expires (the
 * timer runs from the last packet it sent; with nothing waiting it sends the two status bytes).
 * FTDI's datasheet DS_FT232R gives a 256-byte receive buffer (UART -> USB) and a 128-byte transmit
 * buffer; the model never fills them at our rates.
 */
export const FTDI = {
  defaultLatencyMs: 16,
  minLatencyMs: 1,
  maxLatencyMs: 255,
  packetBytes: 64,
  statusBytes: 2,
  /** Data bytes in a full packet: it goes without waiting for the timer. */
  fullBytes: 64 - 2,
  rxBufferBytes: 256,
  txBufferBytes: 128,
} as const;

/**
 * WCH CH340/CH341. Linux `drivers/usb/serial/ch341.c` sets baud rate, line control and modem lines
 * only: there is no latency timer to read or set. Its bulk endpoints are 32 bytes (wMaxPacketSize
 * 0x20 in the CH341's descriptor, bigbigmdm/IMSProg `IMSProg_programmer/ch341funcs.h`). WCH publishes
 * no hold time; reports put a CH340 round trip at 1-3 ms. ESTIMATE: the chip holds a short packet for
 * about 1 ms (`holdS`) before it hands it to the host's next poll. Treat CH340 figures as estimates.
 */
export const CH340 = {
  packetBytes: 32,
  /** ESTIMATE (no datasheet figure): how long a short packet waits in the chip [s]. */
  holdS: 0.001,
} as const;

/**
 * Native USB CDC (ATmega32U4 Leonardo/Micro, SAMD21, RP2040, Teensy): the sketch's own USB stack
 * fills the IN endpoint, and on the 32U4 ArduinoCore-avr `cores/arduino/USBCore.cpp` flushes it on
 * every start-of-frame interrupt (`if (udint & (1<<SOFI)) USB_Flush(CDC_TX)`): the host takes it
 * within the 1 ms full-speed frame.
 */
export const NATIVE = { endpointBytes: 64 } as const;

/** The up-direction hold of an adapter kind: the period after which short data goes [s] (0: none). */
export function adapterFlushS(kind: AdapterKind, latencyMs: number = FTDI.defaultLatencyMs): number {
  switch (kind) {
    case '16u2':
      return U2.flushS;
    case 'ftdi':
      return latencyMs / 1000;
    case 'ch340':
      return CH340.holdS;
    default:
      return 0;
  }
}

/** A short human name of an adapter (for the start-up line, the summary and the dashboard). */
export function adapterName(kind: AdapterKind, latencyMs: number = FTDI.defaultLatencyMs): string {
  switch (kind) {
    case '16u2':
      return 'ATmega16U2 (arduino-usbserial, 4.096 ms flush)';
    case 'ftdi':
      return `FTDI (latency timer ${latencyMs} ms)`;
    case 'ch340':
      return 'CH340 (about 1 ms hold, estimated)';
    case 'native':
      return 'native USB CDC (next 1 ms frame)';
    default:
      return 'no adapter (bare wire)';
  }
}

/** Boards a rig file can name, and the USB path each has by default. */
export const BOARD_KINDS = ['uno', 'mega', 'leonardo', 'micro', 'nano', 'nano-ch340', 'other'] as const;
export type BoardKind = (typeof BOARD_KINDS)[number];

/**
 * The adapter a board has: the Uno R3 and Mega 2560 R3 a 16U2 (arduino-usbserial), the Leonardo and
 * Micro their own USB (ATmega32U4), the original Nano an FT232RL, most Nano clones a CH340.
 */
export const BOARD_ADAPTER: Record<BoardKind, AdapterKind> = {
  uno: '16u2',
  mega: '16u2',
  leonardo: 'native',
  micro: 'native',
  nano: 'ftdi',
  'nano-ch340': 'ch340',
  other: 'none',
};

/**
 * USB vendor:product IDs of the adapters (for `twolink doctor`): Arduino's own in ArduinoCore-avr
 * `boards.txt` (Uno R3 2341:0043, Mega 2560 R3 2341:0042, 2341:0010; Leonardo 2341:8036, Micro
 * 2341:8037, with their Caterina bootloaders at 2341:0036 and 2341:0037), FTDI's in Linux
 * `drivers/usb/serial/ftdi_sio_ids.h` (FT232R 0403:6001, FT-X 0403:6015), WCH's in `ch341.c`
 * (1a86:7523, 1a86:5523).
 */
export const USB_IDS: readonly { vid: number; pid: number; kind: AdapterKind; what: string }[] = [
  { vid: 0x2341, pid: 0x0043, kind: '16u2', what: 'Arduino Uno R3 (ATmega16U2)' },
  { vid: 0x2341, pid: 0x0001, kind: '16u2', what: 'Arduino Uno (8U2)' },
  { vid: 0x2341, pid: 0x0042, kind: '16u2', what: 'Arduino Mega 2560 R3 (ATmega16U2)' },
  { vid: 0x2341, pid: 0x0010, kind: '16u2', what: 'Arduino Mega 2560 (8U2)' },
  { vid: 0x2a03, pid: 0x0043, kind: '16u2', what: 'Arduino Uno R3 (arduino.org, ATmega16U2)' },
  { vid: 0x2341, pid: 0x8036, kind: 'native', what: 'Arduino Leonardo (ATmega32U4, native USB)' },
  { vid: 0x2341, pid: 0x8037, kind: 'native', what: 'Arduino Micro (ATmega32U4, native USB)' },
  { vid: 0x2341, pid: 0x0036, kind: 'native', what: 'Arduino Leonardo bootloader (Caterina)' },
  { vid: 0x2341, pid: 0x0037, kind: 'native', what: 'Arduino Micro bootloader (Caterina)' },
  { vid: 0x1b4f, pid: 0x9206, kind: 'native', what: 'SparkFun Pro Micro (ATmega32U4)' },
  { vid: 0x16c0, pid: 0x0483, kind: 'native', what: 'Teensy (USB serial)' },
  { vid: 0x2e8a, pid: 0x000a, kind: 'native', what: 'Raspberry Pi Pico (RP2040 CDC)' },
  { vid: 0x0403, pid: 0x6001, kind: 'ftdi', what: 'FTDI FT232R' },
  { vid: 0x0403, pid: 0x6015, kind: 'ftdi', what: 'FTDI FT231X (FT-X)' },
  { vid: 0x1a86, pid: 0x7523, kind: 'ch340', what: 'WCH CH340' },
  { vid: 0x1a86, pid: 0x5523, kind: 'ch340', what: 'WCH CH341' },
];

/** The adapter behind a USB vendor:product pair; an unknown one that speaks CDC ACM is taken as native. */
export function adapterOfUsbId(vid: number, pid: number, driver?: string): { kind: AdapterKind; what: string } | undefined {
  const hit = USB_IDS.find((u) => u.vid === vid && u.pid === pid);
  if (hit) return { kind: hit.kind, what: hit.what };
  if (driver === 'ftdi_sio') return { kind: 'ftdi', what: 'an FTDI adapter' };
  if (driver === 'ch341') return { kind: 'ch340', what: 'a CH34x adapter' };
  if (driver === 'cdc_acm') return { kind: 'native', what: 'a native USB CDC board' };
  return undefined;
}

/**
 * Samples per delivery of the cable above which a rate is "more than the cable carries" (2, and 500 Hz
 * behind the 16U2's 244 deliveries a second still counts as two). The hold is counted from the timer
 * alone: a stream of telemetry lines (37-44 bytes) also fills an FTDI's 62-byte packets every two
 * samples and passes the 16U2's 96-byte mark every two or three at 1 kHz, which the mock models, but
 * a ping-pong or a slower stream waits for the timer.
 */
const MAX_SAMPLES_PER_DELIVERY = 2.05;

/** Standard loop rates [Hz], fastest first (a rig file allows 100-1000 Hz). */
const RATES = [1000, 500, 250, 200, 100] as const;
/** Host time from a sample's arrival to its answer written, for the estimate below [s]. */
const HOST_S = 0.0003;

export interface CableAdvice {
  /** The fastest standard rate with at most about two samples per delivery of the cable [Hz]. */
  rateHz: number;
  /** Samples from a sample to the one that applies its answer, expected at `atHz`. */
  answerDelaySamples: number;
  /** How often the cable delivers what the board sent [Hz] (Infinity: at once). */
  deliveriesHz: number;
  /** The rate advised about. */
  atHz: number;
}

/**
 * What a cable allows: the cable hands the host what the board sent once per flush period, so a
 * loop faster than that gets its samples in bursts and answers only the newest of each (commands
 * change once per flush). The expected answer delay counts the newest sample's wait, a USB frame
 * each way and the host's turn: ceil((min(flush, period) + 2 frames + host) / period).
 */
export function cableAdvice(kind: AdapterKind, latencyMs: number = FTDI.defaultLatencyMs, atHz?: number): CableAdvice {
  const flush = adapterFlushS(kind, latencyMs);
  const deliveriesHz = flush > 0 ? 1 / flush : Infinity;
  const rateHz = RATES.find((r) => r <= MAX_SAMPLES_PER_DELIVERY * deliveriesHz) ?? RATES[RATES.length - 1]!;
  const hz = atHz ?? rateHz;
  const period = 1 / hz;
  const frames = kind === 'none' ? 0 : 2 * USB_FRAME_S;
  const wait = kind === 'none' || kind === 'native' ? 0 : Math.min(adapterFlushS(kind, latencyMs), period);
  const answerDelaySamples = Math.max(1, Math.ceil((wait + frames + HOST_S) / period - 1e-9));
  return { rateHz, answerDelaySamples, deliveriesHz, atHz: hz };
}

/**
 * One line for the start-up when the rate asked for is more than the cable carries (more than two
 * samples per delivery): what the cable allows and what to change. Undefined when it fits.
 */
export function cableWarning(kind: AdapterKind, latencyMs: number, rateHz: number): string | undefined {
  const a = cableAdvice(kind, latencyMs, rateHz);
  if (rateHz <= MAX_SAMPLES_PER_DELIVERY * a.deliveriesHz) return undefined;
  const name = adapterName(kind, latencyMs);
  const fix =
    kind === 'ftdi'
      ? `set the latency timer to 1 ms (echo 1 | sudo tee /sys/bus/usb-serial/devices/ttyUSB0/latency_timer; twolink doctor prints the udev rule), or run at ${a.rateHz} Hz`
      : kind === 'ch340'
        ? `run at ${a.rateHz} Hz, or use a native-USB board (Leonardo/Micro) for 1 kHz`
        : `run at ${a.rateHz} Hz or less (--rate ${a.rateHz}), or use a native-USB board (Leonardo/Micro, board "leonardo") for 1 kHz`;
  return `cable: ${name} delivers the board's samples about ${a.deliveriesHz.toFixed(0)} times a second; at ${rateHz} Hz they come in bursts and each answer applies ~${a.answerDelaySamples} samples late: ${fix}`;
}

/**
 * The loop rate a rig gets when its file names none: the fastest standard rate with at most two
 * samples per delivery of the cable (500 Hz behind a 16U2, 1 kHz native or FTDI at 1 ms, 100 Hz behind
 * an FTDI at 16 ms); 500 Hz without an adapter (a pty).
 */
export function defaultRateHz(kind: AdapterKind, latencyMs: number = FTDI.defaultLatencyMs): number {
  return kind === 'none' ? 500 : cableAdvice(kind, latencyMs).rateHz;
}

/**
 * The adapter a run goes through: the mock's modelled one (its plant's) or, on a real port, the one
 * the rig file names (its board's by default).
 */
export function runCable(
  rig: { cable: { adapter: AdapterKind; latencyMs: number }; plant?: { adapter: { kind: AdapterKind; latencyMs: number } } },
  mock: boolean,
): { kind: AdapterKind; latencyMs: number } {
  return mock && rig.plant
    ? { kind: rig.plant.adapter.kind, latencyMs: rig.plant.adapter.latencyMs }
    : { kind: rig.cable.adapter, latencyMs: rig.cable.latencyMs };
}

/**
 * Why a port must not be opened at `baudRate` on this board, or undefined. A native-USB board (the
 * ATmega32U4 Leonardo and Micro: Caterina) jumps to its bootloader when a port opened at 1200 baud is
 * closed: the "1200 bps touch" that avrdude and the Arduino IDE use to flash it (ArduinoCore-avr
 * CDC.cpp, `_usbLineInfo.dwDTERate == 1200` with DTR dropped starts the bootloader). twolink flashes no
 * board, so it never opens one at 1200 baud.
 */
export function bootloaderBaudRefusal(cable: { board: BoardKind; adapter: AdapterKind }, baudRate: number): string | undefined {
  if (cable.adapter !== 'native' || baudRate !== 1200) return undefined;
  return `1200 baud on a native-USB board (board "${cable.board}": its own USB, a Leonardo/Micro) is refused: closing a port opened at 1200 baud makes such a board jump to its bootloader (the "1200 bps touch" used to flash it), and its sketch stops. twolink does not flash boards; give another baud rate (--baud, or the rig file's link.baudRate)`;
}
