// PD control with gravity compensation (Takegaki and Arimoto), the law of many robotics courses:
//
//   tau = Kp (qDesired - q) + Kd (qdDesired - qd) + G(q)
//
// G(q) [N m] comes from the rig's nominal model (context.model). The gains are set per joint from the
// inertia the joint sees, for a natural frequency of 4 Hz and a damping ratio of 0.8. No acceleration
// feedforward: the arm lags the plan a little on fast moves (compare with twolink's own controller).
//
//   twolink run --rig rigs/mock-arm.json --mock --traj reach --controller examples/controllers/pd-gravity.js --json

const BANDWIDTH_HZ = 4; // natural frequency of each joint's loop [Hz]
const DAMPING = 0.8;

/** @type {import('twolink').ControllerFactory} */
export default function createController(context) {
  const { model } = context;
  const n = model.joints;
  const wn = 2 * Math.PI * BANDWIDTH_HZ; // [rad/s]
  // The largest inertia each joint sees [kg m^2]: M_ii with the elbow folded in (cos q2 = 1); the
  // model's M includes the motor's rotor reflected through the gear (gear^2 J_rotor).
  const M = model.massMatrix(n === 2 ? [0, 0] : [0]);
  const kp = []; // [N m/rad]
  const kd = []; // [N m s/rad]
  for (let i = 0; i < n; i++) {
    const inertia = M[i][i];
    kp.push(inertia * wn * wn);
    kd.push(2 * DAMPING * inertia * wn);
  }
  const g = new Array(n).fill(0); // G(q) [N m], reused every tick
  const tau = new Array(n).fill(0); // [N m], reused every tick

  return {
    /** @param {import('twolink').ControllerSample} s */
    update(s) {
      model.gravity(s.q, g);
      for (let i = 0; i < n; i++) {
        tau[i] = kp[i] * (s.qDesired[i] - s.q[i]) + kd[i] * (s.qdDesired[i] - s.qd[i]) + g[i];
      }
      return tau;
    },
  };
}
