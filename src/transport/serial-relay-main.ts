/**
 * The serial relay: a child process whose MAIN thread owns serialport's port (SerialPort with
 * @serialport/bindings-cpp) and does nothing but carry bytes between it and its parent, the loop's
 * worker (relay-binding.ts; why a process, docs/serial.md). bindings-cpp delivers reads through the
 * main thread's libuv loop, so it works here on every OS, where in a worker it aborts node
 * (serialport/node-serialport #2748, #2974).
 *
 * Wire: stdin is the host's bytes to the board, stdout the board's bytes to the host (nothing else is
 * ever written to stdout), the IPC channel the control messages (relay-wire.ts). The end of stdin
 * closes the port after the bytes before it are written, so a stop command sent before close() is
 * not lost. The parent going away (IPC disconnect) closes the port too.
 */
import { SerialPort } from 'serialport';
import { existsSync } from 'node:fs';
import { cableLoss } from './cable.js';
import { parseRelayArgs, type RelayReply, type RelayRequest, type RelayStatus } from './relay-wire.js';
import { raiseProcessPriority, type ProcessPriority } from '../time/priority.js';
import { requestRealtime } from '../time/threads.js';
import { clearHupcl, type DtrOnOpen } from './dtr.js';

const send = (m: RelayStatus | RelayReply): void => {
  if (process.connected) process.send!(m);
};

/** The relay's priority: Linux SCHED_FIFO for all its threads (chrt -a), elsewhere what os.setPriority gives a user. */
async function priority(rt: boolean, rtPriority: number): Promise<string> {
  if (!rt) return 'normal priority (not asked for: --no-rt)';
  if (process.platform === 'linux') {
    const r = await requestRealtime(process.pid, rtPriority, { allTasks: true });
    return r.granted ? `SCHED_FIFO ${rtPriority}` : `normal priority (SCHED_FIFO refused: ${r.reason})`;
  }
  const p: ProcessPriority = raiseProcessPriority(process.pid);
  return p.kind === 'raised' ? p.name : `normal priority (${p.reason})`;
}

/**
 * Node >= 26.4: bindings-cpp's poller calls back into JavaScript without MakeCallback, so the read
 * waiting on its 'readable' event resumes only at the loop's next unrelated event, and this process has
 * none (serialport/bindings-cpp PR #239). An immediate scheduled from that event is one: the loop's check
 * phase runs it, and the read's continuation with it. (macOS and Linux bindings have the poller; Windows's
 * reads do not use it.)
 */
function nudgeReads(port: SerialPort): void {
  const poller = (port.port as unknown as { poller?: { on(event: 'readable', f: () => void): void } } | undefined)?.poller;
  poller?.on('readable', () => setImmediate(() => undefined));
}

/**
 * Linux: HUPCL cleared (bindings-cpp's `hupcl: false` leaves a set flag set there), so closing leaves
 * DTR up and the next open does not reset the board. Windows: `hupcl: false` held DTR off. (dtr.ts)
 */
function keepDtr(path: string, hupcl: boolean): Promise<DtrOnOpen> {
  if (process.platform === 'linux') return clearHupcl(path);
  if (process.platform === 'win32') return Promise.resolve(hupcl ? 'raised' : 'none');
  return Promise.resolve('unknown');
}

/**
 * The port closed by itself: a port that vanished (EIO, ENXIO, ENODEV: a cable pulled) is classified
 * here, where the error is whole, as the tty binding does it (cable.ts); serialport keeps only its
 * message on the close. serialport's Linux binding says only "bad file descriptor" (disconnected) when
 * a pty's far end dies: its device node gone then is ENODEV, as the tty binding says it.
 */
function closedStatus(path: string, e: (Error & { disconnected?: boolean }) | undefined): RelayStatus {
  const gone =
    e?.disconnected === true && !existsSync(path)
      ? Object.assign(new Error(`ENODEV: the device node ${path} is gone (${e.message})`), { code: 'ENODEV' })
      : undefined;
  const cable = e ? (cableLoss(path, e) ?? (gone ? cableLoss(path, gone) : undefined)) : undefined;
  return {
    type: 'closed',
    disconnected: e?.disconnected === true || cable !== undefined,
    message: (gone ?? e)?.message ?? 'the port closed',
    ...(cable ? { code: cable.code } : {}),
  };
}

/**
 * The host's drain requests: each is answered once the bytes written before it (`bytes`, counted from
 * the start) have been handed to the port and the port has drained them.
 */
class Drains {
  private written = 0; // bytes from the host handed to the port [B]
  private readonly pending: { id: number; bytes: number }[] = [];
  constructor(private readonly port: SerialPort) {}

  /** `n` more bytes handed to the port. */
  wrote(n: number): void {
    this.written += n;
    this.settle();
  }

  add(id: number, bytes: number): void {
    this.pending.push({ id, bytes });
    this.settle();
  }

  private settle(): void {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const d = this.pending[i]!;
      if (this.written < d.bytes) continue;
      this.pending.splice(i, 1);
      this.port.drain((e) => send({ type: 'reply', id: d.id, ...(e ? { error: e.message } : {}) }));
    }
  }
}

/** Answers one request of the host's (relay-binding.ts) on the port. */
function answer(port: SerialPort, drains: Drains, m: RelayRequest): void {
  const reply = (p: Promise<unknown>): void =>
    void p.then(
      (value) => send({ type: 'reply', id: m.id, ...(value !== undefined ? { value } : {}) }),
      (e: unknown) => send({ type: 'reply', id: m.id, error: e instanceof Error ? e.message : String(e) }),
    );
  const cb = <T>(f: (done: (e: Error | null, v?: T) => void) => void): Promise<T | undefined> =>
    new Promise((resolve, reject) => f((e, v) => (e ? reject(e) : resolve(v))));
  switch (m.type) {
    case 'update':
      reply(cb((done) => port.update({ baudRate: m.baudRate }, (e) => done(e ?? null))));
      return;
    case 'set':
      reply(cb((done) => port.set(m.options, (e) => done(e ?? null))));
      return;
    case 'get':
      reply(cb((done) => port.get((e, status) => done(e ?? null, status))));
      return;
    case 'flush':
      reply(cb((done) => port.flush((e) => done(e ?? null))));
      return;
    case 'drain':
      drains.add(m.id, m.bytes);
      return;
  }
}

async function main(): Promise<void> {
  let args;
  try {
    args = parseRelayArgs(process.argv[2]);
  } catch (e) {
    send({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    process.exit(2);
  }
  const port = new SerialPort({ path: args.path, baudRate: args.baudRate, autoOpen: false, lock: args.lock, hupcl: args.hupcl });
  try {
    await new Promise<void>((resolve, reject) => port.open((e) => (e ? reject(e) : resolve())));
  } catch (e) {
    send({ type: 'error', message: e instanceof Error ? e.message : String(e) });
    process.exit(2);
  }
  // Lower the kernel's latency timer on USB-serial chips where it applies (Linux only; a pty refuses it: no matter).
  if (process.platform === 'linux') port.set({ lowLatency: true } as never, () => undefined);
  if (args.nudge) nudgeReads(port);
  const dtr = await keepDtr(args.path, args.hupcl);
  const drains = new Drains(port);
  let closing = false;
  const closePort = (): void => {
    if (closing) return;
    closing = true;
    if (port.isOpen) port.drain(() => port.close(() => process.exit(0)));
    else process.exit(0);
  };
  port.on('data', (d: Buffer) => process.stdout.write(d));
  port.on('close', (e?: Error & { disconnected?: boolean }) => {
    if (!closing) send(closedStatus(args.path, e));
    // Let the message out before the process ends.
    setTimeout(() => process.exit(0), 50);
  });
  port.on('error', (e: Error) => send(closedStatus(args.path, e)));
  process.stdin.on('data', (d: Buffer) => {
    port.write(d, () => drains.wrote(d.length));
  });
  process.stdin.on('end', closePort);
  process.on('disconnect', closePort);
  process.on('message', (m: RelayRequest) => answer(port, drains, m));
  send({ type: 'open', pid: process.pid, priority: await priority(args.rt, args.rtPriority), dtr });
}

void main();
