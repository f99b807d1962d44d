/**
 * Fuzzing the decoders with random and mutated input: the line protocol (framing, checksum, both
 * directions) and Firmata (firmata.js's parser, which johnny-five uses, with twolink's encoder sysex
 * handler). What must hold: nothing throws, no accepted frame has a wrong checksum (checked with a
 * bit-by-bit CRC written separately from the codec's table), and memory stays bounded.
 */
import { mulberry32 as rng } from '../model/random.js';
import { decodeBoardFrame, decodeHostFrame, encodeBoardFrame, encodeHostFrame, LineAssembler, MAX_LINE } from '../protocol/codec.js';
import { FIRMATA } from '../protocol/firmata.js';

/** CRC-16/CCITT-FALSE, bit by bit: an independent check of the codec's table-driven one. */
function crcBitwise(s: string): number {
  let c = 0xffff;
  for (let i = 0; i < s.length; i++) {
    c ^= s.charCodeAt(i) << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
  }
  return c;
}

export interface FuzzFigures {
  inputs: number;
  /** Lines that reached the decoders. */
  lines: number;
  accepted: number;
  /** Mutated frames that still decoded (their checksum happened to match: CRC-16 lets 1 in 65536 through). */
  mutatedAccepted: number;
  /** Accepted frames whose checksum does not match (must be 0). */
  badChecksumAccepted: number;
  /** Exceptions thrown by a decoder (must be 0). */
  exceptions: number;
  /** Largest amount the line assembler held [bytes] (bounded by MAX_LINE). */
  maxPending: number;
  heapGrowthMb: number;
  seconds: number;
}

const corpus = (): string[] => [
  encodeBoardFrame({ type: 'T', seq: 40001, ack: 40000, t: 123456789, counts: [-12345, 6789], flags: 1 }),
  encodeBoardFrame({ type: 'A', seq: 17, ack: 16 }),
  encodeBoardFrame({ type: 'E', seq: 9, ack: null, code: 'WDT', text: 'no command for 100 ms' }),
  encodeBoardFrame({
    type: 'I',
    seq: 0,
    ack: null,
    info: {
      fw: 'twolink-fw/1.0.0',
      proto: 1,
      board: 'uno',
      joints: 2,
      cpr: [4800, 2400],
      pwm: 400,
      torque: false,
      maxrate: 1000,
      wdt: 100,
    },
  }),
  encodeHostFrame({ type: 'M', seq: 123, duty: [-1000, 999] }),
  encodeHostFrame({ type: 'H', seq: 0, proto: 1 }),
  encodeHostFrame({ type: 'W', seq: 5, ms: 100 }),
];

/** One to three random edits of a frame: a flipped bit, a random byte, a deletion, an insertion, a cut, a repeat. */
function mutate(frame: string, r: () => number): string {
  let s = frame;
  const ops = 1 + Math.floor(r() * 3);
  for (let k = 0; k < ops; k++) {
    const p = Math.floor(r() * s.length);
    const op = r();
    if (op < 0.4) s = s.slice(0, p) + String.fromCharCode(s.charCodeAt(p) ^ (1 << Math.floor(r() * 8))) + s.slice(p + 1);
    else if (op < 0.55) s = s.slice(0, p) + String.fromCharCode(Math.floor(r() * 256)) + s.slice(p + 1);
    else if (op < 0.7) s = s.slice(0, p) + s.slice(p + 1);
    else if (op < 0.8) s = s.slice(0, p) + String.fromCharCode(32 + Math.floor(r() * 95)) + s.slice(p);
    else if (op < 0.9) s = s.slice(0, p);
    else s = s.slice(0, p) + s.slice(p, p + 8) + s.slice(p);
  }
  return s;
}

/** Fuzzes the line protocol's framing and decoders with `n` inputs. */
export function fuzzLine(n: number, seed = 1): FuzzFigures {
  const r = rng(seed);
  const seeds = corpus().map((s) => s.slice(0, -1));
  const asm = new LineAssembler();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  let lines = 0;
  let accepted = 0;
  let mutatedAccepted = 0;
  let bad = 0;
  let exceptions = 0;
  let maxPending = 0;
  let mutated = false;
  const check = (line: string): void => {
    lines++;
    for (const d of [decodeBoardFrame(line, 2), decodeHostFrame(line, 2)]) {
      if (!d.ok) continue;
      accepted++;
      if (mutated) mutatedAccepted++;
      const s = line.replace(/\r$/, '');
      const star = s.indexOf('*');
      if (crcBitwise(s.slice(0, star)) !== parseInt(s.slice(star + 1), 16)) bad++;
    }
  };
  for (let i = 0; i < n; i++) {
    const kind = r();
    let input: string;
    mutated = false;
    if (kind < 0.25) {
      // random bytes, biased toward the protocol's own characters
      const len = Math.floor(r() * 120);
      let s = '';
      for (let k = 0; k < len; k++)
        s += String.fromCharCode(r() < 0.5 ? ' *0123456789ABCDEFTMIAEH-\r'.charCodeAt(Math.floor(r() * 26)) : Math.floor(r() * 256));
      input = `${s}\n`;
      mutated = true;
    } else if (kind < 0.85) {
      // a valid frame, mutated
      const s = mutate(seeds[Math.floor(r() * seeds.length)]!, r);
      mutated = s !== seeds.find((x) => x === s);
      input = `${s}${r() < 0.05 ? '\r' : ''}\n`;
    } else if (kind < 0.97) {
      input = `${seeds[Math.floor(r() * seeds.length)]}\n`;
    } else {
      // a long line, in pieces, sometimes without its LF
      const len = MAX_LINE + Math.floor(r() * 4000);
      input = 'x'.repeat(len) + (r() < 0.5 ? '\n' : '');
    }
    try {
      asm.push(input, check);
    } catch {
      exceptions++;
    }
    if (asm.pending > maxPending) maxPending = asm.pending;
  }
  // one line of a megabyte, in 4 kB chunks
  for (let k = 0; k < 256; k++) asm.push('y'.repeat(4096), check);
  asm.push('\n', check);
  if (asm.pending > maxPending) maxPending = asm.pending;
  return {
    inputs: n + 1,
    lines,
    accepted,
    mutatedAccepted,
    badChecksumAccepted: bad,
    exceptions,
    maxPending,
    heapGrowthMb: (process.memoryUsage().heapUsed - heap0) / 1e6,
    seconds: (performance.now() - t0) / 1000,
  };
}

/**
 * Fuzzes the Firmata path as it runs: random and Firmata-shaped bytes arrive on the serial stream of
 * a FirmataLink that johnny-five has brought to `ready` (against the Firmata mock rig, in virtual
 * time). Exceptions must not escape the stream; the link must still decode a real encoder report after.
 */
export async function fuzzFirmata(n: number, seed = 2): Promise<FuzzFigures & { rejectedAsCorrupt: number; readingAfter: boolean }> {
  const { loadRig } = await import('../config/load.js');
  const { openLinked } = await import('../run/compose.js');
  const { VirtualClock, settle, runUntilSettled } = await import('../time/clock.js');
  const rig = loadRig('rigs/mock-arm-firmata.json');
  const clock = new VirtualClock();
  // The Firmata mock in this thread, in virtual time (run/compose.ts).
  const opened = await openLinked(rig, { kind: 'mock' }, clock, { handshakeMs: 5000 });
  const { stream } = opened.end;
  const link = opened.board as import('../transport/firmata-link.js').FirmataLink;
  const pump = <T>(p: Promise<T>): Promise<T> => runUntilSettled(clock, p);
  await pump(link.open());
  const r = rng(seed);
  const special = [
    FIRMATA.START_SYSEX,
    FIRMATA.END_SYSEX,
    FIRMATA.REPORT_VERSION,
    0x90,
    0xe0,
    FIRMATA.ENCODER_DATA,
    0x6e,
    0x79,
    0x6a,
    0x6c,
    0x7a,
  ];
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  let exceptions = 0;
  const corrupt0 = link.counters.corrupt;
  for (let i = 0; i < n; i++) {
    const len = Math.floor(r() * 48);
    const b = Buffer.alloc(len);
    for (let k = 0; k < len; k++) b[k] = r() < 0.3 ? special[Math.floor(r() * special.length)]! : Math.floor(r() * 256);
    try {
      stream.emit('data', b);
    } catch {
      exceptions++;
    }
  }
  const seconds = (performance.now() - t0) / 1000;
  const heapGrowthMb = (process.memoryUsage().heapUsed - heap0) / 1e6;
  // After the storm: an END_SYSEX to close any half message, then the board's real reports.
  stream.emit('data', Buffer.from([FIRMATA.END_SYSEX]));
  link.read();
  for (let k = 0; k < 100; k++) {
    clock.advanceBy(0.001);
    await settle();
  }
  const readingAfter = link.read() !== undefined;
  const caught = link.counters.corrupt - corrupt0;
  await pump(link.close()).catch(() => undefined);
  await opened.end.dispose();
  return {
    inputs: n,
    lines: n,
    accepted: 0,
    mutatedAccepted: 0,
    badChecksumAccepted: 0,
    exceptions,
    maxPending: 0,
    heapGrowthMb,
    seconds,
    rejectedAsCorrupt: caught,
    readingAfter,
  };
}
