/**
 * What a run does with the arm (twolink run --mode): follow the trajectory with feedforward + PID
 * (`track`, the default), float under the user's hand with gravity and friction cancelled (`float`),
 * or behave as a spring-damper about the trajectory or a held pose (`impedance`). Issue 23.
 */
export const RUN_MODES = ['track', 'float', 'impedance'] as const;
export type RunMode = (typeof RUN_MODES)[number];
