// The wiring monitor on recorded mock runs (virtual time): the arm wired wrong, the original rig file.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { WiringMonitor, type WiringFault } from '../src/control/wiring-monitor.js';
import { createActuatedArmModel } from '../src/model/actuated.js';
import { virtualRun, type TestRun } from '../src/testing.js';

const rig = loadRig('rigs/mock-arm.json');

/**
 * Feeds a recorded run to a monitor: each sample with the duty applied since the one before. Returns
 * the first verdict and its time; when the run stopped on a guard of its own first, what the monitor
 * suspected at that moment (what the loop puts in that stop's message).
 */
function replay(run: TestRun): { fault: WiringFault; t: number; via: 'update' | 'suspect' } | undefined {
  const m = new WiringMonitor(createActuatedArmModel(rig), { encoders: rig.encoders });
  const ticks = run.ticks;
  // The board applies a sample's answer at the next sample: the duty in effect between samples k-1 and k is the answer to sample k-2.
  for (let k = 2; k < ticks.length; k++) {
    if (ticks[k]!.state === 'fault') {
      const f = m.suspect();
      return f && { fault: f, t: ticks[k]!.t, via: 'suspect' };
    }
    const f = m.update(ticks[k]!.t - ticks[k - 1]!.t, ticks[k - 2]!.duty, ticks[k]!.meas.q, ticks[k]!.meas.qd);
    if (f) return { fault: f, t: ticks[k]!.t, via: 'update' };
  }
  return undefined;
}

/** When the run itself stopped on a fault [s], if it did. */
function faultTime(run: TestRun): number | undefined {
  const e = run.events.find((x) => x.kind === 'state' && (x.state === 'fault' || x.state === 'stopped') && x.stop?.kind === 'fault');
  return e?.t;
}

describe('wiring monitor: the correct wiring never fires', () => {
  it.each([['reach'], ['circle'], ['point']])('%s on the correctly wired mock', async (traj) => {
    const run = await virtualRun({ rig, traj });
    expect(run.summary.stop).toEqual({ kind: 'done' });
    expect(replay(run)).toBeUndefined();
  });

  it('a payload the model does not know (a twin alarm, not a wiring mistake)', async () => {
    const run = await virtualRun({ rig, traj: 'reach', injections: ['payload=0.25@1'] });
    expect(replay(run)).toBeUndefined();
  });
});

describe('wiring monitor: a miswired arm with the original rig file', () => {
  it.each([
    [
      'reverse-motor=1',
      'reversed',
      /joint 1 moves against its command: its motor is reversed, or its encoder counts backwards \(swap motor 1's two wires/,
    ],
    [
      'reverse-motor=2',
      'reversed',
      /joint 2 moves against its command: its (encoder counts backwards, or its motor is reversed|motor is reversed, or its encoder counts backwards)/,
    ],
    [
      'reverse-encoder=1',
      'reversed',
      /joint 1 moves against its command: its encoder counts backwards, or its motor is reversed \(swap encoder 1's A and B wires/,
    ],
    [
      'reverse-encoder=2',
      'reversed',
      /joint 2 moves against its command: its (encoder counts backwards, or its motor is reversed|motor is reversed, or its encoder counts backwards)/,
    ],
    ['swap-motors', 'swapped', /joint 1 follows motor 2 and joint 2 motor 1: the motors \(or the encoders\) are swapped/],
    ['swap-encoders', 'swapped', /joint 1 reads joint 2's encoder and joint 2 joint 1's: the encoders \(or the motors\) are swapped/],
  ])('%s: named before the run stops on its own', async (wiring, kind, message) => {
    const run = await virtualRun({ rig, traj: 'reach', wiring, maxSeconds: 20 });
    const stop = faultTime(run);
    expect(stop, run.summary.stopReason).toBeDefined();
    // The loop runs the monitor in its safety step: the run stops on its verdict. (A loop without it
    // stops on its limit guard, later: then the verdict is the monitor's on the recorded run.)
    const s = run.summary.stop;
    const v =
      s.kind === 'fault' && s.fault.kind === 'wiring'
        ? { fault: { kind: undefined, message: s.fault.message }, t: stop!, via: 'loop' }
        : replay(run);
    expect(v, `no verdict; the run ended ${run.summary.stopReason}`).toBeDefined();
    console.log(`${wiring}: ${v!.via} at ${v!.t.toFixed(3)} s (the run: ${run.summary.stopReason})`);
    expect(v!.t).toBeLessThanOrEqual(stop!);
    expect(v!.t).toBeLessThan(0.6);
    // The first explanation is the likelier; when another fits about as well the message names it too.
    if (v!.fault.kind !== undefined && !v!.fault.message.includes('; or else')) expect(v!.fault.kind).toBe(kind);
    expect(v!.fault.message).toMatch(message);
    expect(v!.fault.message).toContain('twolink setup');
  });
});
