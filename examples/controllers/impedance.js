// Endpoint impedance control: the endpoint behaves like a spring and a damper pulled along the plan,
// mapped to the joints through the transposed Jacobian (seed 002), with gravity compensation:
//
//   tau = J(q)^T ( K (xDesired - x) + D (vDesired - v) ) + G(q)
//
// x = the measured endpoint [m], v = J(q) qd [m/s]; vDesired = J(qDesired) qdDesired. K [N/m] and
// D [N s/m] are the same in x and y. A two-link arm (a one-link arm's Jacobian is 2 x 1 and works too).
//
//   twolink run --rig rigs/mock-arm.json --mock --traj circle --controller examples/controllers/impedance.js --json

const STIFFNESS = 400; // K [N/m]
const DAMPING = 14; // D [N s/m]

/** @type {import('twolink').ControllerFactory} */
export default function createController(context) {
  const { model } = context;
  const n = model.joints;
  // Scratch space, reused every tick (update runs inside the loop: no allocation there).
  const J = n === 2 ? [[0, 0], [0, 0]] : [[0], [0]]; // [m/rad]
  const v = [0, 0]; // measured endpoint velocity [m/s]
  const vDesired = [0, 0]; // [m/s]
  const f = [0, 0]; // endpoint force [N]
  const g = new Array(n).fill(0); // [N m]
  const tau = new Array(n).fill(0); // [N m]

  return {
    /** @param {import('twolink').ControllerSample} s */
    update(s) {
      model.endpointVelocity(s.q, s.qd, v);
      model.endpointVelocity(s.qDesired, s.qdDesired, vDesired);
      for (let k = 0; k < 2; k++) {
        f[k] = STIFFNESS * (s.endpointDesired[k] - s.endpoint[k]) + DAMPING * (vDesired[k] - v[k]);
      }
      model.jacobian(s.q, J);
      model.gravity(s.q, g);
      for (let i = 0; i < n; i++) tau[i] = J[0][i] * f[0] + J[1][i] * f[1] + g[i];
      return tau;
    },
  };
}
