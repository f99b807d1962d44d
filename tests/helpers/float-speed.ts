// Float's speed cap as every float test checks it (issue 32): while the law drives the arm (the loop
// tracking, the float blended in), no joint's recorded speed is above its speed cap + 10 % (docs/float-teach-replay.md,
// "Float": half the speed limit, 270 deg/s on the mock's joint 2).
import { expect } from 'vitest';
import type { FloatLaw } from '../../src/control/float.js';
import { F, LOOP_STATES } from '../../src/telemetry/tick.js';

/** Asserts the cap over `rows` (a run's recorded ticks); returns the worst ratio per joint (1 = at the cap). */
export function expectSpeedCapHeld(rows: readonly Float64Array[], law: FloatLaw): number[] {
  const track = LOOP_STATES.indexOf('track');
  const cap = law.settings.speedCapRadS;
  const worst = cap.map(() => 0);
  const qd = [F.qd0, F.qd1];
  let floating = 0;
  for (const row of rows) {
    if (row[F.state] !== track || !(row[F.float]! > 0)) continue;
    floating++;
    for (let i = 0; i < cap.length; i++) worst[i] = Math.max(worst[i]!, Math.abs(row[qd[i]!]!) / cap[i]!);
  }
  expect(floating, 'rows recorded while floating').toBeGreaterThan(0);
  worst.forEach((w, i) => expect(w, `joint ${i + 1} at ${(w * 100).toFixed(0)} % of its float speed cap`).toBeLessThanOrEqual(1.1));
  return worst;
}
