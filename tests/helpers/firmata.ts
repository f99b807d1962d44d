// The Firmata mock rig and a FirmataLink on it, in virtual time: helpers shared by tests/firmata-*.test.ts.
import type { SerialPortStream } from '@serialport/stream';
import { loadRig, type Rig } from '../../src/config/load.js';
import { createFirmataMock, type FirmataMock, type FirmataMockOptions } from '../../src/mock/firmata-mock.js';
import { runUntilSettled, settle, VirtualClock } from '../../src/time/clock.js';
import { FirmataLink } from '../../src/transport/firmata-link.js';
import { hangGuardMs } from './hang-guard.js';

export const FIRMATA_RIG = 'rigs/mock-arm-firmata.json';

/**
 * The Firmata mock rig file, with changes. These tests are about Firmata, not the cable: the board's
 * reports reach the host at the next 1 ms USB frame (the `native` model). A real Mega's 16U2 flushes
 * every 4.096 ms and pairs some 3 ms reports (src/config/cable.ts; tests/adapter-loop.test.ts and
 * tests/usb-adapter.test.ts hold the cable's own behaviour).
 */
export function firmataRig(change: (r: Rig) => void = () => {}): Rig {
  const loaded = loadRig(FIRMATA_RIG);
  const rig = { ...loaded, plant: { ...loaded.plant!, adapter: { kind: 'native' as const, latencyMs: loaded.plant!.adapter.latencyMs } } };
  change(rig);
  return rig;
}

/** Moves virtual time until `p` settles (src/time/clock.ts); its real-time bound is a hang guard (hang-guard.ts). */
export function pumpUntil<T>(
  clock: VirtualClock,
  p: Promise<T>,
  opts: { stepS?: number; maxS?: number; maxRealMs?: number } = {},
): Promise<T> {
  return runUntilSettled(clock, p, { ...opts, maxRealMs: hangGuardMs(opts.maxRealMs ?? 15_000) });
}

/** Runs virtual time for `seconds`, calling `each` after every step. */
export async function runFor(clock: VirtualClock, seconds: number, each: () => void = () => {}, stepS = 0.0005): Promise<void> {
  const end = clock.now() + seconds;
  while (clock.now() < end - 1e-12) {
    clock.advanceBy(Math.min(stepS, end - clock.now()));
    await settle();
    each();
  }
}

export interface Setup {
  clock: VirtualClock;
  /** The host's end of the cable, under the link. */
  stream: SerialPortStream;
  rig: Rig;
  mock: FirmataMock;
  link: FirmataLink;
}

/** A mock rig and a link on it (not opened). */
export async function setup(
  rig: Rig = firmataRig(),
  opts: FirmataMockOptions & { hostBaud?: number; handshakeMs?: number; answerMs?: number; linkRig?: Rig } = {},
): Promise<Setup> {
  const clock = new VirtualClock();
  const mock = createFirmataMock(rig, clock, opts);
  const stream = await mock.openStream(opts.hostBaud ?? rig.link.baudRate);
  const link = new FirmataLink({
    stream,
    name: mock.path,
    baudRate: opts.hostBaud ?? rig.link.baudRate,
    clock,
    firmata: (opts.linkRig ?? rig).firmata!,
    encoders: (opts.linkRig ?? rig).encoders,
    handshakeMs: opts.handshakeMs ?? 3000,
    answerMs: opts.answerMs ?? 500,
    watchdogMs: (opts.linkRig ?? rig).link.watchdogMs,
  });
  return { clock, stream, rig, mock, link };
}

/** Closes the link (letting virtual time run for it) and stops the rig. */
export async function teardown(s: Setup): Promise<void> {
  const closing = s.link.close();
  // close() waits on real timers at most; keep virtual time moving so that nothing waits on it.
  await pumpUntil(s.clock, closing).catch(() => {});
  s.mock.dispose();
}
