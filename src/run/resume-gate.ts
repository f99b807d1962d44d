/**
 * The loop thread's part of `--reconnect` (docs/cable.md): before a segment's loop moves the arm, the
 * handshake is done here, the board's uptime compared with the last segment's (reconnect.ts), and a
 * board that reset (or cannot say) does not move until its zero is re-taken: the main thread asks
 * (as setup asks, or `--yes`), then, with the motors off, the arm is let come to rest hanging and the
 * encoders are zeroed there. That is right only where the rig file's zero is the hanging pose
 * (encoders[].zeroDeg = -90, 0 deg, as twolink setup writes it); any other zero is refused, with why.
 *
 * The loop then runs on the link as opened here: its `open()` answers with this handshake's identity
 * instead of a second one, and its `startSampling` finds the board sampling already after a re-zero.
 */
import type { MessagePort } from 'node:worker_threads';
import type { Rig } from '../config/load.js';
import type { BoardIdentity, Link, Reading } from '../transport/link.js';
import { LinkError } from '../transport/link.js';
import { hangingDeg } from '../model/builtins.js';
import { bootVerdict, type BootMark } from './reconnect.js';
import type { WorkerCommand, WorkerMessage } from './messages.js';

/**
 * The arm counts as at rest when no joint's reading spans more than this over REST_WINDOW_S [deg]: a
 * few counts of a 2400-count encoder with its noise (the mock rig's: 0.3 counts RMS), far below the
 * swing of an arm that still moves.
 */
export const REST_DEG = 1;
/** [s] of board time. */
export const REST_WINDOW_S = 0.5;
/** Longest wait for the arm to come to rest [s] of board time. */
export const REST_LIMIT_S = 20;

/** The rig file's zero is the hanging pose, joint by joint, within 0.5 deg: the zero can be re-taken by letting the arm hang. */
export function zeroIsHanging(rig: Pick<Rig, 'joints' | 'encoders'>): boolean {
  const hang = hangingDeg(rig.joints);
  return rig.encoders.slice(0, rig.joints).every((e, j) => Math.abs((e.zero * 180) / Math.PI - hang[j]!) <= 0.5);
}

/** Spread of each joint over the readings [deg]. */
function spreadDeg(rs: readonly Reading[], joints: number): number {
  let worst = 0;
  for (let j = 0; j < joints; j++) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const r of rs) {
      lo = Math.min(lo, r.q[j]!);
      hi = Math.max(hi, r.q[j]!);
    }
    worst = Math.max(worst, ((hi - lo) * 180) / Math.PI);
  }
  return worst;
}

/** Samples with the motors off until the arm has rested REST_WINDOW_S; resolves with how long it took [s] of board time. */
async function untilAtRest(link: Link, rig: Rig, rateHz: number): Promise<number> {
  await link.enable(false);
  return new Promise<number>((resolve, reject) => {
    const window: Reading[] = [];
    let t0: number | undefined;
    link.onSample((r) => {
      t0 ??= r.boardTime;
      window.push(r);
      while (window.length > 1 && r.boardTime - window[0]!.boardTime > REST_WINDOW_S) window.shift();
      const full = r.boardTime - window[0]!.boardTime >= REST_WINDOW_S * 0.98;
      if (full && spreadDeg(window, rig.joints) <= REST_DEG) resolve(r.boardTime - t0);
      else if (r.boardTime - t0 > REST_LIMIT_S)
        reject(
          new LinkError(
            `${link.name}: the board reset and the arm did not come to rest within ${REST_LIMIT_S} s with the motors off: its zero cannot be re-taken; is something holding or pushing it?`,
            'board-reset',
          ),
        );
    });
    link.startSampling(rateHz).catch(reject);
  });
}

/** What the main thread decided about a board that reset: re-take the zero now, or do not move it. */
function decision(port: MessagePort): Promise<boolean> {
  return new Promise((resolve) => {
    const on = (m: WorkerCommand): void => {
      const go =
        m.type === 'rezero' ? m.go : m.type === 'command' && (m.command.kind === 'stop' || m.command.kind === 'estop') ? false : undefined;
      if (go === undefined) return;
      port.off('message', on);
      resolve(go);
    };
    port.on('message', on);
  });
}

/**
 * The handshake and, for a board that reset, the zero re-taken; returns the link the loop runs on.
 * Throws a LinkError (the loop never starts) when the zero is refused or cannot be re-taken.
 */
export async function resumeGate(
  link: Link,
  rig: Rig,
  rateHz: number,
  before: BootMark | undefined,
  port: MessagePort,
  post: (m: WorkerMessage) => void,
): Promise<Link> {
  const identity: BoardIdentity = await link.open();
  const mark: BootMark = { uptimeMs: identity.uptimeMs, hostMs: Date.now() };
  const verdict = before ? bootVerdict(before, mark) : undefined;
  post({ type: 'boot', identity, mark, ...(verdict ? { verdict } : {}) });
  let sampling = false;
  if (verdict && verdict.kind !== 'kept-running') {
    if (!zeroIsHanging(rig)) {
      throw new LinkError(
        `${link.name}: the board reset (its encoders restarted) and the rig file's zero (encoders[].zeroDeg) is not the hanging pose [${hangingDeg(rig.joints).join(', ')}] deg, so twolink cannot re-take it: power the board off and on with the arm at zeroDeg, then run again`,
        'board-reset',
      );
    }
    if (!(await decision(port)))
      throw new LinkError(`${link.name}: the board reset and its zero was not re-taken: the arm was not moved`, 'board-reset');
    sampling = true;
    const restS = await untilAtRest(link, rig, rateHz);
    await link.zero();
    post({ type: 'rezeroed', restS });
  }
  return new Proxy(link, {
    get(target, p) {
      if (p === 'open') return () => Promise.resolve(identity);
      // Sampling goes on once started (the Link's rule): the loop's start finds it running (a second
      // start would restart the board-time reconstruction of the Firmata link under the loop).
      if (p === 'startSampling' && sampling) return () => Promise.resolve();
      const v: unknown = Reflect.get(target, p, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
