// The seed reach, tracked with feedforward + PID by the real loop over johnny-five and the Firmata mock
// rig, at the highest rate this path sustains (one report per tick), in virtual time.
import { describe, expect, it } from 'vitest';
import { firmataReach, firmataVariant, lineReach } from '../src/bench/firmata.js';
import { loadRig } from '../src/config/load.js';

const report = (label: string, rms: number[], max: number[]): void =>
  console.log(
    `${label}: tracking RMS ${rms.map((v) => v.toFixed(3)).join(' / ')} deg, max ${max.map((v) => v.toFixed(3)).join(' / ')} deg`,
  );

describe('the seed reach over Firmata', () => {
  const base = loadRig('rigs/mock-arm-firmata.json');

  it('at 57600 baud: 3 ms reports, the loop at 333 Hz, tracking within a few tenths of a degree', async () => {
    const r = await firmataReach(base);
    report('Firmata 57600 baud, 333 Hz', r.summary.tracking.rmsDeg, r.summary.tracking.maxDeg);
    expect(r.samplingIntervalMs).toBe(3);
    expect(r.summary.rateHz).toBe(333);
    expect(r.summary.stop).toEqual({ kind: 'done' });
    expect(r.summary.stopOutcome).toBe('acknowledged');
    expect(r.readingsPerTick).toBeGreaterThan(0.95);
    expect(r.readingsPerTick).toBeLessThan(1.05);
    expect(r.summary.tracking.samples).toBeGreaterThan(300);
    for (const v of r.summary.tracking.rmsDeg) expect(v).toBeLessThan(0.5);
  });

  it('at 115200 baud: 2 ms reports and 500 Hz track closer, near the line protocol at 1 Mbaud', async () => {
    const r = await firmataReach(firmataVariant(base, 115200, 500, 0));
    const line = await lineReach(loadRig('rigs/mock-arm.json'), 500);
    report('Firmata 115200 baud, 500 Hz', r.summary.tracking.rmsDeg, r.summary.tracking.maxDeg);
    report('line protocol 1 Mbaud, 500 Hz', line.tracking.rmsDeg, line.tracking.maxDeg);
    expect(r.samplingIntervalMs).toBe(2);
    expect(r.summary.stopOutcome).toBe('acknowledged');
    for (let j = 0; j < 2; j++) {
      expect(r.summary.tracking.rmsDeg[j]!).toBeLessThan(0.4);
      expect(r.summary.tracking.rmsDeg[j]!).toBeLessThan(3 * line.tracking.rmsDeg[j]!);
    }
  });

  it('reports asked every 1 ms at 57600 baud arrive stale, and the tracking shows it (the following-error limit stops it; no motor is blamed)', async () => {
    const ok = await firmataReach(base);
    const stale = firmataVariant(base, 57600, 333, 1);
    const tooFast = await firmataReach(stale);
    // no cause: a stale report is no motor's trouble
    expect(tooFast.summary.stop).toEqual({
      kind: 'fault',
      fault: {
        kind: 'following-error',
        joint: expect.any(Number),
        errorDeg: expect.any(Number),
        limitDeg: expect.closeTo(10, 9),
        t: expect.any(Number),
      },
    });
    // Without the limit, the whole reach: several times worse than the 3 ms reports.
    const free = await firmataReach({ ...stale, limits: stale.limits.map((l) => ({ ...l, followingError: Math.PI })) });
    report('Firmata 57600 baud, 333 Hz, 1 ms reports', free.summary.tracking.rmsDeg, free.summary.tracking.maxDeg);
    for (let j = 0; j < 2; j++) expect(free.summary.tracking.rmsDeg[j]!).toBeGreaterThan(3 * ok.summary.tracking.rmsDeg[j]!);
  });
});
