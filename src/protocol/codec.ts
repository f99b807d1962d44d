/**
 * The twolink line protocol (firmware-protocol/PROTOCOL.md) as pure functions: CRC, framing, decoding
 * of both directions into typed frames, encoding, and the conformance vectors' canonical form.
 *
 * Decoding never throws: malformed input is a typed rejection whose `code` is the error code of
 * PROTOCOL.md section 4 and whose `reason` says what was wrong. The checks run in the order of
 * PROTOCOL.md ("The order of the checks"), so host, mock rig and firmware agree on every code.
 *
 * Lines are strings of byte values (decode serial bytes as latin1), without the LF.
 */
import { z } from 'zod';

/** Longest line in bytes, LF included. */
export const MAX_LINE = 128;

/** The protocol major version this code speaks. */
export const PROTOCOL = 1;

/** Error codes of PROTOCOL.md section 4 that a decoder can produce. */
export type RejectCode = 'LONG' | 'CHAR' | 'FORMAT' | 'CRC' | 'TYPE' | 'SYNTAX' | 'FIELDS' | 'RANGE';

/** A rejected line. */
export interface Rejection {
  ok: false;
  code: RejectCode;
  reason: string;
}

/** A decoded frame or a rejection. */
export type Decoded<F> = { ok: true; frame: F } | Rejection;

/** What the board says about itself (the `I` frame). */
export interface BoardInfo {
  fw: string;
  proto: number;
  board: string;
  joints: number;
  /** Encoder counts per joint revolution. */
  cpr: number[];
  /** PWM steps at duty 1000. */
  pwm: number;
  /** True when `Q` (torque) commands are supported. */
  torque: boolean;
  /** Highest telemetry rate [Hz]. */
  maxrate: number;
  /** Watchdog timeout [ms]. */
  wdt: number;
  /**
   * Milliseconds since the board booted (mod 2^32), when the board says it (`up=`, PROTOCOL.md section 3,
   * added after 1.0.0: older firmware leaves it out). Tells a board that kept running from one that
   * reset (run/reconnect.ts).
   */
  up?: number;
}

/** Frames the host sends. */
export type HostFrame =
  | { type: 'H'; seq: number; proto: number }
  | { type: 'M'; seq: number; duty: number[] }
  | { type: 'Q'; seq: number; torque: number[] }
  | { type: 'R'; seq: number; hz: number }
  | { type: 'N'; seq: number; enable: boolean }
  | { type: 'Z'; seq: number; mask: number }
  | { type: 'S'; seq: number }
  | { type: 'W'; seq: number; ms: number }
  | { type: 'P'; seq: number };

/** Frames the board sends. `ack` is null where the wire says `-`. */
export type BoardFrame =
  | { type: 'I'; seq: number; ack: number | null; info: BoardInfo }
  | { type: 'T'; seq: number; ack: number | null; t: number; counts: number[]; flags: number }
  | { type: 'A'; seq: number; ack: number | null }
  | { type: 'E'; seq: number; ack: number | null; code: string; text: string };

/** Telemetry flag bits (PROTOCOL.md section 3). */
export const FLAG = {
  EN: 0x01,
  WDT: 0x02,
  STOP: 0x04,
  RXERR: 0x08,
  GAP: 0x10,
  ENC: 0x20,
  BOOT: 0x40,
  TXDROP: 0x80,
} as const;

// ---------------------------------------------------------------------------------------------
// CRC-16/CCITT-FALSE

const CRC_TABLE = (() => {
  const t = new Uint16Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i << 8;
    for (let k = 0; k < 8; k++) c = c & 0x8000 ? ((c << 1) ^ 0x1021) & 0xffff : (c << 1) & 0xffff;
    t[i] = c;
  }
  return t;
})();

/** CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF) of the character codes of `s` (each < 256). */
export function crc16(s: string): number {
  let c = 0xffff;
  for (let i = 0; i < s.length; i++) c = ((c << 8) & 0xffff) ^ CRC_TABLE[((c >> 8) ^ s.charCodeAt(i)) & 0xff]!;
  return c;
}

/** The 4 upper-case hex digits of a CRC. */
export function crcHex(body: string): string {
  return crc16(body).toString(16).toUpperCase().padStart(4, '0');
}

// ---------------------------------------------------------------------------------------------
// Framing

function reject(code: RejectCode, reason: string): Rejection {
  return { ok: false, code, reason };
}

const HEX4 = /^[0-9A-F]{4}$/;

/**
 * Checks 1-5 of PROTOCOL.md (LONG, CHAR, FORMAT, CRC) and splits the body into tokens.
 * `line` excludes the LF; one trailing CR is stripped.
 */
export function unframe(line: string): { ok: true; tokens: string[] } | Rejection {
  if (line.length > MAX_LINE - 1) return reject('LONG', `line of ${line.length + 1} bytes, longer than ${MAX_LINE}`);
  const end = line.length > 0 && line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length;
  for (let i = 0; i < end; i++) {
    const c = line.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return reject('CHAR', `byte 0x${c.toString(16).padStart(2, '0').toUpperCase()} at column ${i + 1}`);
  }
  const s = end === line.length ? line : line.slice(0, end);
  const star = s.indexOf('*');
  if (star < 0) return reject('FORMAT', 'no "*" before the checksum');
  if (s.indexOf('*', star + 1) >= 0) return reject('FORMAT', 'more than one "*"');
  const body = s.slice(0, star);
  const crc = s.slice(star + 1);
  if (!HEX4.test(crc)) return reject('FORMAT', `checksum "${crc}" is not 4 upper-case hex digits`);
  if (body.length === 0) return reject('FORMAT', 'empty body');
  if (body.startsWith(' ') || body.endsWith(' ')) return reject('FORMAT', 'leading or trailing space');
  if (body.includes('  ')) return reject('FORMAT', 'two spaces in a row');
  const tokens = body.split(' ');
  if (tokens.length < 2) return reject('FORMAT', 'no sequence number');
  const want = crcHex(body);
  if (want !== crc) return reject('CRC', `checksum ${crc} does not match the body (${want})`);
  return { ok: true, tokens };
}

/** Appends the checksum and the LF to a body. */
export function frameLine(body: string): string {
  return `${body}*${crcHex(body)}\n`;
}

// ---------------------------------------------------------------------------------------------
// Integers

const CANON_UINT = /^(0|[1-9][0-9]*)$/;
const CANON_INT = /^(0|-?[1-9][0-9]*)$/;

type IntResult = { ok: true; v: number } | Rejection;

/**
 * A canonical integer in [min, max]; syntax before range; a long run of digits is RANGE. Sequence
 * numbers (and acks) are unsigned in the grammar, so "-1" there is SYNTAX; every other field is a
 * signed int, so "-1" where only positives are allowed is RANGE.
 */
function int(tok: string, what: string, min: number, max: number, unsigned = false): IntResult {
  if (!(unsigned ? CANON_UINT : CANON_INT).test(tok))
    return reject('SYNTAX', `${what} "${tok}" is not a canonical ${unsigned ? 'unsigned integer' : 'integer'}`);
  const v = tok.length > 16 ? (tok.startsWith('-') ? -Infinity : Infinity) : Number(tok);
  if (v < min || v > max) return reject('RANGE', `${what} ${tok.length > 16 ? `${tok.slice(0, 12)}...` : tok} is outside ${min}..${max}`);
  return { ok: true, v };
}

function seqOf(tok: string): IntResult {
  return int(tok, 'sequence number', 0, 65535, true);
}

function ackOf(tok: string): { ok: true; v: number | null } | Rejection {
  if (tok === '-') return { ok: true, v: null };
  return int(tok, 'ack', 0, 65535, true);
}

// ---------------------------------------------------------------------------------------------
// Host -> board

const HOST_TYPES = 'HMQRNZSWP';

/** Decodes a host frame (what the board and the mock rig receive). */
export function decodeHostFrame(line: string, joints: number): Decoded<HostFrame> {
  const u = unframe(line);
  if (!u.ok) return u;
  const t = u.tokens;
  const type = t[0]!;
  if (type.length !== 1 || !HOST_TYPES.includes(type)) return reject('TYPE', `"${type}" is not a host frame type`);
  const s = seqOf(t[1]!);
  if (!s.ok) return s;
  const seq = s.v;
  const f = t.slice(2);
  const need = (n: number, what: string): Rejection | undefined =>
    f.length === n ? undefined : reject('FIELDS', `${type} needs ${what} (${n} field${n === 1 ? '' : 's'}), got ${f.length}`);
  switch (type) {
    case 'H': {
      const e = need(1, 'the protocol version');
      if (e) return e;
      const p = int(f[0]!, 'protocol version', 1, 65535);
      return p.ok ? { ok: true, frame: { type, seq, proto: p.v } } : p;
    }
    case 'M':
    case 'Q': {
      const e = need(joints, `one value per joint`);
      if (e) return e;
      const lim = type === 'M' ? 1000 : 100000;
      const vals: number[] = [];
      for (let i = 0; i < joints; i++) {
        const r = int(f[i]!, type === 'M' ? `duty of joint ${i + 1}` : `torque of joint ${i + 1}`, -lim, lim);
        if (!r.ok) return r;
        vals.push(r.v);
      }
      return { ok: true, frame: type === 'M' ? { type, seq, duty: vals } : { type, seq, torque: vals } };
    }
    case 'R': {
      const e = need(1, 'a rate');
      if (e) return e;
      const r = int(f[0]!, 'telemetry rate', 0, 1000);
      if (!r.ok) return r;
      if (r.v > 0 && r.v < 10) return reject('RANGE', `telemetry rate ${r.v} Hz: use 0 (one per command) or 10..1000`);
      return { ok: true, frame: { type, seq, hz: r.v } };
    }
    case 'N': {
      const e = need(1, '0 or 1');
      if (e) return e;
      const r = int(f[0]!, 'enable', 0, 1);
      return r.ok ? { ok: true, frame: { type, seq, enable: r.v === 1 } } : r;
    }
    case 'Z': {
      const e = need(1, 'a joint mask');
      if (e) return e;
      const r = int(f[0]!, 'joint mask', 1, (1 << joints) - 1);
      return r.ok ? { ok: true, frame: { type, seq, mask: r.v } } : r;
    }
    case 'W': {
      const e = need(1, 'a timeout');
      if (e) return e;
      const r = int(f[0]!, 'watchdog timeout', 10, 1000);
      return r.ok ? { ok: true, frame: { type, seq, ms: r.v } } : r;
    }
    default: {
      // S, P
      const e = need(0, 'no fields');
      if (e) return e;
      return { ok: true, frame: { type: type as 'S' | 'P', seq } };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Board -> host

const BOARD_TYPES = 'ITAE';
const INFO_KEYS = ['fw', 'proto', 'board', 'joints', 'cpr', 'pwm', 'torque', 'maxrate', 'wdt'] as const;
const FLAGS = /^[0-9A-F]{2}$/;
const CODE = /^[A-Z]+$/;

function decodeInfo(fields: string[]): { ok: true; info: BoardInfo } | Rejection {
  const kv = new Map<string, string>();
  for (const tok of fields) {
    const eq = tok.indexOf('=');
    if (eq <= 0 || eq === tok.length - 1) return reject('SYNTAX', `"${tok}" is not key=value`);
    const k = tok.slice(0, eq);
    if (kv.has(k)) return reject('SYNTAX', `key ${k} given twice`);
    kv.set(k, tok.slice(eq + 1));
  }
  for (const k of INFO_KEYS) if (!kv.has(k)) return reject('FIELDS', `missing key ${k}`);
  const num = (k: string, min: number, max: number): IntResult => int(kv.get(k)!, k, min, max);
  const proto = num('proto', 1, 65535);
  if (!proto.ok) return proto;
  const joints = num('joints', 1, 2);
  if (!joints.ok) return joints;
  const cprParts = kv.get('cpr')!.split(',');
  if (cprParts.length !== joints.v) return reject('FIELDS', `cpr needs ${joints.v} values, got ${cprParts.length}`);
  const cpr: number[] = [];
  for (const c of cprParts) {
    const r = int(c, 'cpr', 1, 2 ** 31 - 1);
    if (!r.ok) return r;
    cpr.push(r.v);
  }
  const pwm = num('pwm', 1, 65535);
  if (!pwm.ok) return pwm;
  const torque = num('torque', 0, 1);
  if (!torque.ok) return torque;
  const maxrate = num('maxrate', 10, 1000);
  if (!maxrate.ok) return maxrate;
  const wdt = num('wdt', 10, 1000);
  if (!wdt.ok) return wdt;
  // Optional (older firmware has no `up`): absent is "unknown", never 0.
  const up = kv.has('up') ? int(kv.get('up')!, 'up', 0, 4294967295, true) : undefined;
  if (up && !up.ok) return up;
  return {
    ok: true,
    info: {
      fw: kv.get('fw')!,
      proto: proto.v,
      board: kv.get('board')!,
      joints: joints.v,
      cpr,
      pwm: pwm.v,
      torque: torque.v === 1,
      maxrate: maxrate.v,
      wdt: wdt.v,
      ...(up ? { up: up.v } : {}),
    },
  };
}

/** Decodes a board frame (what the host receives). `joints` fixes the telemetry's count fields. */
export function decodeBoardFrame(line: string, joints: number): Decoded<BoardFrame> {
  const u = unframe(line);
  if (!u.ok) return u;
  const t = u.tokens;
  const type = t[0]!;
  if (type.length !== 1 || !BOARD_TYPES.includes(type)) return reject('TYPE', `"${type}" is not a board frame type`);
  const s = seqOf(t[1]!);
  if (!s.ok) return s;
  const seq = s.v;
  if (t.length < 3) return reject('FIELDS', `${type} needs an ack`);
  const f = t.slice(3);
  switch (type) {
    case 'I': {
      const a = ackOf(t[2]!);
      if (!a.ok) return a;
      const i = decodeInfo(f);
      return i.ok ? { ok: true, frame: { type, seq, ack: a.v, info: i.info } } : i;
    }
    case 'T': {
      if (f.length !== joints + 2)
        return reject(
          'FIELDS',
          `T needs the time, ${joints} encoder counts and the flags (${joints + 2} fields after the ack), got ${f.length}`,
        );
      const a = ackOf(t[2]!);
      if (!a.ok) return a;
      const time = int(f[0]!, 'board time', 0, 4294967295);
      if (!time.ok) return time;
      const counts: number[] = [];
      for (let i = 0; i < joints; i++) {
        const c = int(f[1 + i]!, `count of joint ${i + 1}`, -2147483648, 2147483647);
        if (!c.ok) return c;
        counts.push(c.v);
      }
      const fl = f[joints + 1]!;
      if (!FLAGS.test(fl)) return reject('SYNTAX', `flags "${fl}" are not 2 upper-case hex digits`);
      return { ok: true, frame: { type, seq, ack: a.v, t: time.v, counts, flags: parseInt(fl, 16) } };
    }
    case 'A': {
      if (f.length !== 0) return reject('FIELDS', `A takes only an ack, got ${f.length} more fields`);
      const a = ackOf(t[2]!);
      return a.ok ? { ok: true, frame: { type, seq, ack: a.v } } : a;
    }
    default: {
      // E
      if (f.length < 1) return reject('FIELDS', 'E needs an error code');
      const a = ackOf(t[2]!);
      if (!a.ok) return a;
      if (!CODE.test(f[0]!)) return reject('SYNTAX', `error code "${f[0]}" is not upper-case letters`);
      return { ok: true, frame: { type: 'E', seq, ack: a.v, code: f[0]!, text: f.slice(1).join(' ') } };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding (validated with zod: nothing non-finite or out of range is ever put on the wire)

const seqSchema = z.number().int().min(0).max(65535);
const ackSchema = seqSchema.nullable();
const dutySchema = z.number().int().min(-1000).max(1000);

export const hostFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('H'), seq: seqSchema, proto: z.number().int().min(1).max(65535) }),
  z.object({ type: z.literal('M'), seq: seqSchema, duty: z.array(dutySchema).min(1).max(2) }),
  z.object({ type: z.literal('Q'), seq: seqSchema, torque: z.array(z.number().int().min(-100000).max(100000)).min(1).max(2) }),
  z.object({
    type: z.literal('R'),
    seq: seqSchema,
    hz: z
      .number()
      .int()
      .min(0)
      .max(1000)
      .refine((v) => v === 0 || v >= 10),
  }),
  z.object({ type: z.literal('N'), seq: seqSchema, enable: z.boolean() }),
  z.object({ type: z.literal('Z'), seq: seqSchema, mask: z.number().int().min(1).max(3) }),
  z.object({ type: z.literal('S'), seq: seqSchema }),
  z.object({ type: z.literal('W'), seq: seqSchema, ms: z.number().int().min(10).max(1000) }),
  z.object({ type: z.literal('P'), seq: seqSchema }),
]);

const infoSchema = z.object({
  fw: z.string().regex(/^[\x21-\x29\x2B-\x7E]+$/),
  proto: z.number().int().min(1),
  board: z.string().regex(/^[\x21-\x29\x2B-\x7E]+$/),
  joints: z.number().int().min(1).max(2),
  cpr: z.array(z.number().int().positive()),
  pwm: z.number().int().positive(),
  torque: z.boolean(),
  maxrate: z.number().int().min(10).max(1000),
  wdt: z.number().int().min(10).max(1000),
  up: z.number().int().min(0).max(4294967295).optional(),
});

export const boardFrameSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('I'), seq: seqSchema, ack: ackSchema, info: infoSchema }),
  z.object({
    type: z.literal('T'),
    seq: seqSchema,
    ack: ackSchema,
    t: z.number().int().min(0).max(4294967295),
    counts: z.array(z.number().int().min(-2147483648).max(2147483647)).min(1).max(2),
    flags: z.number().int().min(0).max(255),
  }),
  z.object({ type: z.literal('A'), seq: seqSchema, ack: ackSchema }),
  z.object({
    type: z.literal('E'),
    seq: seqSchema,
    ack: ackSchema,
    code: z.string().regex(CODE),
    text: z.string().regex(/^[\x20-\x29\x2B-\x7E]*$/),
  }),
]);

/** Encodes a host frame to its line (with CRC and LF). Throws on a frame that is not valid. */
export function encodeHostFrame(f: HostFrame): string {
  hostFrameSchema.parse(f);
  return frameLine(hostBody(f));
}

/** The body of a host frame, without validation: for the hot path, after the caller has checked. */
export function hostBody(f: HostFrame): string {
  switch (f.type) {
    case 'H':
      return `H ${f.seq} ${f.proto}`;
    case 'M':
      return `M ${f.seq} ${f.duty.join(' ')}`;
    case 'Q':
      return `Q ${f.seq} ${f.torque.join(' ')}`;
    case 'R':
      return `R ${f.seq} ${f.hz}`;
    case 'N':
      return `N ${f.seq} ${f.enable ? 1 : 0}`;
    case 'Z':
      return `Z ${f.seq} ${f.mask}`;
    case 'W':
      return `W ${f.seq} ${f.ms}`;
    default:
      return `${f.type} ${f.seq}`;
  }
}

const ackText = (a: number | null): string => (a === null ? '-' : String(a));

/** The identity fields in the canonical key order. */
export function infoText(i: BoardInfo): string {
  return `fw=${i.fw} proto=${i.proto} board=${i.board} joints=${i.joints} cpr=${i.cpr.join(',')} pwm=${i.pwm} torque=${i.torque ? 1 : 0} maxrate=${i.maxrate} wdt=${i.wdt}${i.up !== undefined ? ` up=${i.up}` : ''}`;
}

/** Encodes a board frame (what the mock rig sends). Throws on a frame that is not valid. */
export function encodeBoardFrame(f: BoardFrame): string {
  boardFrameSchema.parse(f);
  switch (f.type) {
    case 'I':
      return frameLine(`I ${f.seq} ${ackText(f.ack)} ${infoText(f.info)}`);
    case 'T':
      return frameLine(`T ${f.seq} ${ackText(f.ack)} ${f.t} ${f.counts.join(' ')} ${f.flags.toString(16).toUpperCase().padStart(2, '0')}`);
    case 'A':
      return frameLine(`A ${f.seq} ${ackText(f.ack)}`);
    default:
      return frameLine(`E ${f.seq} ${ackText(f.ack)} ${f.code}${f.text ? ` ${f.text}` : ''}`);
  }
}

/** The canonical meaning of a frame, as written in the conformance vectors. */
export function canonical(f: HostFrame | BoardFrame): string {
  switch (f.type) {
    case 'H':
      return `H seq=${f.seq} proto=${f.proto}`;
    case 'M':
      return `M seq=${f.seq} duty=${f.duty.join(',')}`;
    case 'Q':
      return `Q seq=${f.seq} torque=${f.torque.join(',')}`;
    case 'R':
      return `R seq=${f.seq} hz=${f.hz}`;
    case 'N':
      return `N seq=${f.seq} enable=${f.enable ? 1 : 0}`;
    case 'Z':
      return `Z seq=${f.seq} mask=${f.mask}`;
    case 'W':
      return `W seq=${f.seq} ms=${f.ms}`;
    case 'S':
    case 'P':
      return `${f.type} seq=${f.seq}`;
    case 'I':
      return `I seq=${f.seq} ack=${ackText(f.ack)} ${infoText(f.info)}`;
    case 'T':
      return `T seq=${f.seq} ack=${ackText(f.ack)} t=${f.t} counts=${f.counts.join(',')} flags=${f.flags.toString(16).toUpperCase().padStart(2, '0')}`;
    case 'A':
      return `A seq=${f.seq} ack=${ackText(f.ack)}`;
    case 'E':
      return `E seq=${f.seq} ack=${ackText(f.ack)} code=${f.code} text=${f.text}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Sequence numbers (PROTOCOL.md section 1)

/** What a sequence number says about the frames before it. */
export type SeqVerdict =
  { kind: 'first' } | { kind: 'next' } | { kind: 'gap'; lost: number } | { kind: 'duplicate' } | { kind: 'reordered' };

/** Tracks the sequence numbers of one direction. */
export class SequenceTracker {
  private last = -1;

  /** Judges `seq`; accepted frames ('first', 'next', 'gap') become the new `last`. */
  check(seq: number): SeqVerdict {
    if (this.last < 0) {
      this.last = seq;
      return { kind: 'first' };
    }
    const delta = (seq - this.last + 65536) % 65536;
    if (delta === 0) return { kind: 'duplicate' };
    if (delta >= 32768) return { kind: 'reordered' };
    this.last = seq;
    return delta === 1 ? { kind: 'next' } : { kind: 'gap', lost: delta - 1 };
  }

  /** Starts again: the next frame is accepted whatever its number (after a handshake). */
  reset(seq?: number): void {
    this.last = seq ?? -1;
  }
}

// ---------------------------------------------------------------------------------------------
// Bounded line assembly

/**
 * Splits a byte stream into lines without ever buffering more than MAX_LINE bytes: a line that
 * reaches MAX_LINE bytes without an LF is dropped and counted, and the bytes up to the next LF are
 * discarded (resynchronisation).
 */
export class LineAssembler {
  private buf = '';
  private skipping = false;
  /** Lines dropped for being too long. */
  overlong = 0;

  /** Feeds bytes (a latin1 string or a Buffer); calls `onLine` for each complete line (without LF). */
  push(chunk: string | Uint8Array, onLine: (line: string) => void): void {
    const s = typeof chunk === 'string' ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString('latin1');
    let start = 0;
    for (;;) {
      const lf = s.indexOf('\n', start);
      const piece = lf < 0 ? s.slice(start) : s.slice(start, lf);
      if (this.skipping) {
        if (lf >= 0) this.skipping = false;
      } else if (this.buf.length + piece.length >= MAX_LINE) {
        this.overlong++;
        this.buf = '';
        if (lf < 0) this.skipping = true;
      } else if (lf >= 0) {
        const line = this.buf + piece;
        this.buf = '';
        onLine(line);
      } else {
        this.buf += piece;
      }
      if (lf < 0) return;
      start = lf + 1;
    }
  }

  /** Bytes held for an incomplete line (at most MAX_LINE - 1). */
  get pending(): number {
    return this.buf.length;
  }
}
