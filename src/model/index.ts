/** The arm model: pure math on plain numbers (no I/O, no clock, no node imports). */
export * from './types.js';
export * from './dynamics.js';
export * from './kinematics.js';
export * from './integrate.js';
export * from './arm.js';
export * from './motor.js';
export * from './actuated.js';
export * from './trajectory.js';
