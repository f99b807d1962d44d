/**
 * A user's controller module (twolink run --controller FILE) as the loop's ControlLaw: the loop hands
 * it the state predicted at the instant its torque applies and the plan there.
 */
import type { ControlLaw } from '../control/loop.js';
import { controllerContext, PluggedController, type ControllerRig } from '../control/user-controller.js';

export async function loadControlLaw(file: string, rig: ControllerRig, rateHz: number): Promise<ControlLaw> {
  const plugged = await PluggedController.load(file, controllerContext(rig, rateHz));
  const desired: { q: readonly number[]; qd: readonly number[]; qdd: readonly number[] } = { q: [], qd: [], qdd: [] };
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
