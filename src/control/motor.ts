/**
 * The motor model lives in src/model/motor.ts (the actuated arm, src/model/actuated.ts, uses it);
 * re-exported here for the code and tests that import it from control.
 */
export { dutyForTorque, reflectedInertia, torqueForDuty } from '../model/motor.js';
