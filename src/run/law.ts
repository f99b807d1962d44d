/**
 * A user's controller module (twolink run --controller FILE) as the loop's ControlLaw: the loop hands
 * it the state predicted at the instant its torque applies and the plan there.
 */
import type { Rig } from '../config/load.js';
import type { ControlLaw } from '../control/loop.js';
import { controllerContext, PluggedController } from '../control/user-controller.js';

export async function loadControlLaw(file: string, rig: Rig, rateHz: number): Promise<ControlLaw> {
  const plugged = await PluggedController.load(file, controllerContext(rig, rateHz));
  const desired = { q: [] as number[], qd: [] as number[], qdd: [] as number[] };
  return {
    step: (s, periodS, out) => {
      desired.q = s.qDesired;
      desired.qd = s.qdDesired;
      desired.qdd = s.qddDesired;
      return plugged.step(plugged.fill(s.t, s.q, s.qd, desired), periodS, out);
    },
    reset: () => {
      plugged.reset();
    },
  };
}
