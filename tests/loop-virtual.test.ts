// The loop against the mock rig in virtual time, with a plant that differs from the nominal model
// (masses 12-15% heavier, friction the model lacks, encoder quantization and noise, one tick of latency
// from the sync telemetry): tracking, the twin's alarm, the e-stop.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { F, LOOP_STATES } from '../src/telemetry/tick.js';
import { builtinPath } from '../src/model/builtins.js';
import { lineMock, virtualRun } from './helpers/virtual-run.js';

const rig = () => loadRig('rigs/mock-arm.json');

describe('tracking the seed reach on a mismatched plant', () => {
  it('the mock plant really differs from the nominal model', () => {
    const r = rig();
    const arm = r.arm as unknown as Record<string, number>;
    const plant = r.plant!.arm as unknown as Record<string, number>;
    for (const k of ['m1', 'm2']) {
      const off = plant[k]! / arm[k]! - 1;
      expect(off).toBeGreaterThanOrEqual(0.1);
      expect(off).toBeLessThanOrEqual(0.2);
    }
    expect(r.friction.viscous).toEqual([0, 0]);
    expect(r.plant!.coulomb.every((c) => c > 0)).toBe(true);
    expect(r.plant!.noiseCounts).toBeGreaterThan(0);
  });

  it('feedforward + PID tracks under 0.5 deg RMS per joint; PID alone is at least 10 times worse', async () => {
    const r = rig();
    const reach = builtinPath(r.arm, 'reach')!;
    const ff = await virtualRun(r, [reach], { feedforward: 'desired' });
    const pid = await virtualRun(r, [reach], { feedforward: 'none' });
    expect(ff.summary.stop).toEqual({ kind: 'done' });
    expect(pid.summary.stop).toEqual({ kind: 'done' });
    expect(ff.summary.tracking.samples).toBeGreaterThan(400);
    for (let j = 0; j < 2; j++) {
      expect(ff.summary.tracking.rmsDeg[j]).toBeLessThan(0.5);
      expect(pid.summary.tracking.rmsDeg[j]! / ff.summary.tracking.rmsDeg[j]!).toBeGreaterThanOrEqual(10);
    }
    // The feedforward did the work: its torque is most of the command.
    const rows = ff.rows.filter((x) => x[F.phase] === 2);
    const ffAbs = rows.reduce((s, x) => s + Math.abs(x[F.tauFf0]!), 0);
    const pidAbs = rows.reduce((s, x) => s + Math.abs(x[F.tauPid0]!), 0);
    expect(ffAbs).toBeGreaterThan(3 * pidAbs);
  });

  it('computed torque on the measured state tracks as well', async () => {
    const r = rig();
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], { feedforward: 'measured' });
    for (let j = 0; j < 2; j++) expect(res.summary.tracking.rmsDeg[j]).toBeLessThan(0.5);
  });

  it('no command is ever non-finite and every tick is recorded', async () => {
    const r = rig();
    const res = await virtualRun(r, [builtinPath(r.arm, 'circle')!]);
    for (let k = 0; k < res.rows.length; k++) {
      expect(res.rows[k]![F.i]).toBe(k);
      for (let i = 0; i < res.rows[k]!.length; i++) expect(Number.isFinite(res.rows[k]![i])).toBe(true);
    }
  });
});

describe('the twin', () => {
  it('a clean run raises no alarm; its residual stays near the noise', async () => {
    for (const name of ['reach', 'point', 'circle']) {
      const r = rig();
      const res = await virtualRun(r, [builtinPath(r.arm, name)!]);
      expect(res.summary.twin.alarms, name).toBe(0);
      for (let j = 0; j < 2; j++) expect(res.summary.twin.maxDeg[j], name).toBeLessThan(r.twin.alarmDeg);
    }
  });

  it('a payload added mid-run raises the alarm within 100 ms, and the residual torque shows the load', async () => {
    const r = rig();
    let addedAt = -1;
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], {
      onTick: (core, _clock, mock) => {
        const p = core.progress;
        if (addedAt < 0 && p && p.phase === 'track' && p.t > 1.7) {
          mock.plant.setPayload(0.25);
          addedAt = core.row[F.t]!;
        }
      },
    });
    expect(addedAt).toBeGreaterThan(0);
    const alarms = res.events.filter((e) => e.kind === 'alarm');
    expect(alarms.length).toBeGreaterThan(0);
    const first = alarms[0]!.t;
    expect(first).toBeGreaterThanOrEqual(addedAt);
    expect(first - addedAt).toBeLessThanOrEqual(0.1);
    // Before the payload: no alarm at all.
    expect(res.rows.filter((x) => x[F.t]! < addedAt && x[F.alarm]! !== 0)).toHaveLength(0);
    // The momentum observer sees the payload's gravity torque on joint 1: -m g x_tip, with the tip at
    // x = L1 cos(a1) + L2 cos(a1 + a2) at the end of the reach.
    const later = res.rows.filter((x) => x[F.t]! > addedAt + 0.3 && x[F.t]! < addedAt + 0.6 && x[F.phase] === 2);
    expect(later.length).toBeGreaterThan(50);
    const mean = later.reduce((s, x) => s + x[F.tauExt0]!, 0) / later.length;
    const arm = r.arm as { L1: number; L2: number };
    const last = later[later.length - 1]!;
    const x = arm.L1 * Math.cos(last[F.q0]!) + arm.L2 * Math.cos(last[F.q0]! + last[F.q1]!);
    const expected = -0.25 * 9.81 * x;
    // The model error (plant 15% heavier) is in the estimate too: compare against the clean run's.
    const clean = await virtualRun(rig(), [builtinPath(r.arm, 'reach')!]);
    const cleanRows = clean.rows.filter((x2) => x2[F.t]! > addedAt + 0.3 && x2[F.t]! < addedAt + 0.6 && x2[F.phase] === 2);
    const cleanMean = cleanRows.reduce((s, x2) => s + x2[F.tauExt0]!, 0) / cleanRows.length;
    // within 20%: the observer is a 8 Hz filter and the arm is still settling after the reach
    expect(Math.abs(mean - cleanMean - expected)).toBeLessThan(0.2 * Math.abs(expected));
  });

  it('a stalled joint trips the alarm on that joint', async () => {
    const r = rig();
    let done = false;
    const res = await virtualRun(r, [builtinPath(r.arm, 'point')!], {
      onTick: (core, _c, mock) => {
        if (!done && core.progress && core.progress.phase === 'track' && core.progress.t > 1.8) {
          mock.plant.injected.stalled[0] = true;
          done = true;
        }
      },
    });
    const alarms = res.events.filter((e) => e.kind === 'alarm');
    expect(alarms.some((a) => a.kind === 'alarm' && a.joints.includes(0))).toBe(true);
  });
});

describe('safety', () => {
  it('an e-stop zeroes the motor command on the next tick, and the board confirms', async () => {
    const r = rig();
    let sentAt = -1;
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], {
      onTick: (core) => {
        const p = core.progress;
        if (sentAt < 0 && p && p.phase === 'track' && p.t > 1.6) {
          sentAt = core.row[F.sample]!;
          core.command({ kind: 'estop' });
        }
      },
    });
    expect(res.summary.stop).toEqual({ kind: 'estop' });
    expect(res.summary.stopReason).toBe('estop'); // the words for people
    expect(res.summary.stopOutcome).toBe('acknowledged');
    // Rows are per sample (F.i is the board's sample index); the e-stop between two samples writes its own row.
    const at = res.rows.findIndex((row) => row[F.sample] === sentAt);
    const before = res.rows[at]!;
    expect(Math.abs(before[F.duty0]!) + Math.abs(before[F.duty1]!)).toBeGreaterThan(0);
    const next = res.rows[at + 1]!;
    expect(LOOP_STATES[next[F.state]!]).toBe('estop');
    expect(next[F.duty0]).toBe(0);
    expect(next[F.duty1]).toBe(0);
    // and the plant's motors really are at zero
    expect(res.mock.plant.duty).toEqual([0, 0]);
    expect(lineMock(res).board.flags() & 0x01).toBe(0);
  });

  it('a lost link stops the run with a fault and the board watchdog cuts the motors', async () => {
    const r = rig();
    let silencedAt = -1;
    const res = await virtualRun(r, [builtinPath(r.arm, 'reach')!], {
      onTick: (core, _c, mock) => {
        if (silencedAt < 0 && core.progress && core.progress.t > 1.5) {
          // the board hangs but the plant keeps its last duty, as a board whose UART died would
          mock.board.injected.silent = true;
          silencedAt = core.row[F.t]!;
        }
      },
    });
    expect(res.summary.stop).toMatchObject({ kind: 'fault', fault: { kind: 'link-lost' } });
    expect(res.summary.stopOutcome).toBe('watchdog');
    const stopRow = res.rows.find((x) => LOOP_STATES[x[F.state]!] === 'fault')!;
    expect(stopRow[F.t]! - silencedAt).toBeLessThan(0.1);
  });
});
