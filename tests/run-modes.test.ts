// The table of run modes (src/run/modes.ts, issue 36): one entry per mode, the law each builds, one
// mode per run, and the impedance passivity check fed the same way whoever runs the loop.
import { describe, expect, it } from 'vitest';
import { loadRig } from '../src/config/load.js';
import { FloatLaw, floatSettings } from '../src/control/float.js';
import { ImpedanceLaw, loopPassivity } from '../src/control/impedance.js';
import { RUN_MODES } from '../src/control/modes.js';
import type { ControlLaw } from '../src/control/law.js';
import { impedanceLaw, modeLaw, modeOf, MODES } from '../src/run/modes.js';

const rig = loadRig('rigs/mock-arm.json');
const ctx = { rig, rateHz: 500, time: 'virtual' as const, mock: true };
const spring = { space: 'endpoint' as const, stiffness: 100, dampingRatio: 1 };

describe('the mode table', () => {
  it('has an entry for every --mode name and for a controller, each with a label', () => {
    expect(Object.keys(MODES).sort()).toEqual([...RUN_MODES, 'controller'].sort());
    for (const m of Object.values(MODES)) expect(m.label.length).toBeGreaterThan(0);
  });

  it('track runs feedforward + PID (no law of its own); float and impedance hand the dashboard the law they run', async () => {
    const track = await modeLaw({ mode: 'track' }, ctx);
    expect(track.law).toBeUndefined();
    const float = await modeLaw({ mode: 'float', float: floatSettings(rig) }, ctx);
    expect(float.law).toBeInstanceOf(FloatLaw);
    expect(float.float).toBe(float.law);
    const imp = await modeLaw({ mode: 'impedance', impedance: spring }, ctx);
    expect(imp.law).toBeInstanceOf(ImpedanceLaw);
    expect(imp.impedance).toBe(imp.law);
    expect(imp.float).toBeUndefined();
  });

  it('a ControlLaw given by code is run as it is, and a law built before is not built again', async () => {
    const law: ControlLaw = { torques: () => ({ ok: true }) } as unknown as ControlLaw;
    const c = await modeLaw({ mode: 'controller', controller: law }, ctx);
    expect(c.law).toBe(law);
    await expect(c.close()).resolves.toBeUndefined();
    const built = impedanceLaw(ctx, spring);
    expect(impedanceLaw(ctx, built)).toBe(built);
  });

  it("the impedance law's passivity inputs are the loop's: its rate and the mock's or the rig file's cable delay (the worker and the virtual run alike)", () => {
    for (const mock of [true, false]) {
      const law = impedanceLaw({ rig, rateHz: 1000, mock }, spring);
      // The law keeps what it was checked against (a private field: read here, not part of its API).
      expect((law as unknown as { passivity: unknown }).passivity).toEqual(loopPassivity(rig, mock, 1000));
    }
  });

  it('one mode a run: the options name at most one of a controller, impedance and float', () => {
    expect(modeOf({})).toEqual({ mode: 'track' });
    expect(modeOf({ controller: 'ctl.js' })).toEqual({ mode: 'controller', controller: 'ctl.js' });
    expect(modeOf({ impedance: spring }).mode).toBe('impedance');
    expect(modeOf({ float: floatSettings(rig) }).mode).toBe('float');
    expect(() => modeOf({ controller: 'ctl.js', impedance: spring })).toThrow(/one mode/);
    expect(() => modeOf({ impedance: spring, float: floatSettings(rig) })).toThrow(/one mode/);
  });
});
