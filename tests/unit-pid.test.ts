// The joint PID (src/control/pid.ts): the three terms, the integrator limit, and both anti-windup
// schemes, on hand-computable sequences.
import { describe, expect, it } from 'vitest';
import { Pid, type PidGains } from '../src/control/pid.js';

const gains = (o: Partial<PidGains> = {}): PidGains => ({ kp: 20, ki: 5, kd: 0.8, iLimit: 1, antiWindup: 'clamp', backcalc: 10, ...o });

describe('Pid', () => {
  it('is kp e + ki sum(e dt) + kd eDot, with the parts kept for recording', () => {
    const pid = new Pid(gains());
    const dt = 0.002;
    const errors = [0.01, 0.02, -0.005, 0.03];
    let integral = 0;
    for (const [k, e] of errors.entries()) {
      const eDot = 0.1 * (k - 1);
      const out = pid.update(e, eDot, dt, 0, 0);
      integral += 5 * e * dt;
      expect(pid.p).toBeCloseTo(20 * e, 12);
      expect(pid.d).toBeCloseTo(0.8 * eDot, 12);
      expect(pid.integral).toBeCloseTo(integral, 12);
      expect(out).toBeCloseTo(20 * e + integral + 0.8 * eDot, 12);
    }
  });

  it('takes dt from the caller: the same error over a longer dt integrates proportionally more', () => {
    const a = new Pid(gains());
    const b = new Pid(gains());
    a.update(0.1, 0, 0.001, 0, 0);
    b.update(0.1, 0, 0.004, 0, 0);
    expect(b.integral).toBeCloseTo(4 * a.integral, 12);
  });

  it('limits the integral contribution to +-iLimit', () => {
    const pid = new Pid(gains({ ki: 100, iLimit: 0.3 }));
    for (let k = 0; k < 1000; k++) pid.update(1, 0, 0.01, 0, 0);
    expect(pid.integral).toBe(0.3);
    for (let k = 0; k < 1000; k++) pid.update(-1, 0, 0.01, 0, 0);
    expect(pid.integral).toBe(-0.3);
  });

  it('clamping: stops integrating while saturated in the direction of the error, resumes when the error reverses', () => {
    const pid = new Pid(gains({ antiWindup: 'clamp' }));
    pid.update(0.1, 0, 0.01, 0, 0);
    const held = pid.integral;
    expect(held).toBeGreaterThan(0);
    // Saturated at the upper limit (+1) with a positive error: the integral is held.
    for (let k = 0; k < 50; k++) pid.update(0.1, 0, 0.01, 1, -2);
    expect(pid.integral).toBe(held);
    // Saturated at the upper limit but the error is now negative: integrating unwinds, so it does.
    pid.update(-0.1, 0, 0.01, 1, -2);
    expect(pid.integral).toBeCloseTo(held - 5 * 0.1 * 0.01, 12);
    // At the lower limit (-1) a negative error is held too.
    const now = pid.integral;
    pid.update(-0.1, 0, 0.01, -1, 2);
    expect(pid.integral).toBe(now);
  });

  it('back-calculation: bleeds the integral by backcalc * excess * dt', () => {
    const pid = new Pid(gains({ antiWindup: 'backcalc', backcalc: 10, iLimit: 100 }));
    pid.update(0.1, 0, 0.01, 0, 0);
    const i0 = pid.integral;
    // The previous output was cut by 0.5 N m (excess = saturated - unsaturated = -0.5).
    pid.update(0.1, 0, 0.01, 1, -0.5);
    expect(pid.integral).toBeCloseTo(i0 + (5 * 0.1 + 10 * -0.5) * 0.01, 12);
    // Held at a 1 N m limit with the error steady, the integral settles where ki e + backcalc (limit -
    // output) = 0: the unsaturated output exceeds the limit by only ki e / backcalc = 0.05 N m.
    let out = 0;
    for (let k = 0; k < 5000; k++) out = pid.update(0.1, 0, 0.01, 1, Math.min(1, out) - out);
    expect(out).toBeCloseTo(1 + (5 * 0.1) / 10, 6);
    expect(pid.integral).toBeCloseTo(1 + 0.05 - 20 * 0.1, 6);
  });

  it('reset clears the state', () => {
    const pid = new Pid(gains());
    pid.update(0.5, 1, 0.01, 0, 0);
    pid.reset();
    expect([pid.integral, pid.p, pid.d]).toEqual([0, 0, 0]);
    expect(pid.update(0, 0, 0.01, 0, 0)).toBe(0);
  });
});
