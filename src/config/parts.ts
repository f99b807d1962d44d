/**
 * What each component needs of a resolved rig file (`Rig`, load.ts), as narrow types: a component
 * takes its part and nothing else, so a test, a tool or another host can build one without a whole
 * rig file, and the type says what the component reads. A `Rig` is each of them as it stands.
 */
import type { ActuatedArmSpec } from '../model/actuated.js';
import type { Rig } from './load.js';

/** The nominal actuated arm (the model's spec) with its joint count. */
export type ArmPart = Pick<Rig, 'joints'> & ActuatedArmSpec;

/** The controller: the arm, its gains and feedforward, the joints' torque limits and the duty cap. */
export type ControllerPart = ArmPart & Pick<Rig, 'control' | 'limits' | 'maxDuty'>;

/** The twin: the arm and its alarm and anchoring settings. */
export type TwinPart = ArmPart & Pick<Rig, 'twin'>;

/** The feasibility check of a trajectory: the arm, the joints' limits and the duty cap. */
export type FeasibilityPart = ArmPart & Pick<Rig, 'limits' | 'maxDuty'>;
