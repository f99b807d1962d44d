/**
 * What each component needs of a resolved rig file (`Rig`, load.ts), as narrow types: a component
 * takes its part and nothing else, so a test, a tool or another host can build one without a whole
 * rig file, and the type says what the component reads. A `Rig` is each of them as it stands.
 */
import type { ActuatedArmSpec } from '../model/actuated.js';
import type { Rig } from './load.js';

/** The nominal actuated arm (the model's spec) with its joint count. */
export type ArmPart = Pick<Rig, 'joints'> & ActuatedArmSpec;

/**
 * The controller: the arm, its gains and feedforward, the joints' torque limits and the duty cap; the
 * encoders when known (where they sit and the play they cannot see: the backlash inverse, the
 * disturbance observer's feed).
 */
export type ControllerPart = ArmPart & Pick<Rig, 'control' | 'limits' | 'maxDuty'> & Partial<Pick<Rig, 'encoders'>>;

/** The twin: the arm and its alarm and anchoring settings. */
export type TwinPart = ArmPart & Pick<Rig, 'twin'>;

/** The feasibility check of a trajectory: the arm, the joints' limits and the duty cap. */
export type FeasibilityPart = ArmPart & Pick<Rig, 'limits' | 'maxDuty'>;

/** The board's safety timing as the host's loop needs it: its watchdog, when a silent link is lost, and the transport (a Firmata host's clock is its count of reports: its following-error default is wider). */
export type SafetyTimingPart = { link: Pick<Rig['link'], 'watchdogMs' | 'lostAfterTicks' | 'transport'> };

/**
 * The control loop and its runner (control/loop.ts, control/runner.ts): the controller's and the
 * twin's parts, the encoders (for the wiring monitor) and the board's safety timing.
 */
export type LoopPart = ControllerPart & TwinPart & Pick<Rig, 'encoders'> & SafetyTimingPart;

/** The Firmata link (transport/firmata-link.ts `createFirmataLink`): the pins, the encoders, the wiring section and the link's timing. */
export type FirmataLinkPart = Pick<Rig, 'file' | 'firmata' | 'encoders' | 'wiring'> & {
  link: Pick<Rig['link'], 'baudRate' | 'handshakeMs' | 'watchdogMs'>;
};

/** The simulated arm (mock/plant.ts): the true arm of the `plant` section and the encoders the board counts with. */
export type PlantPart = Pick<Rig, 'file' | 'encoders'> & { plant: NonNullable<Rig['plant']> };

/**
 * A mock board and its arm (mock/line-mock.ts, mock/firmata-mock.ts, mock/mock-thread.ts): the plant (which
 * the rig file may lack: the mock says so), the board's wiring and its serial line.
 */
export type MockPart = Pick<Rig, 'name' | 'file' | 'encoders' | 'plant' | 'firmata'> & {
  link: Pick<Rig['link'], 'baudRate' | 'transport'>;
};

/** The dashboard (tui/dashboard.ts): the rig's name, the arm it draws, and the twin's alarm threshold it shows. */
export type DashboardPart = Pick<Rig, 'name' | 'joints' | 'arm'> & { twin: Pick<Rig['twin'], 'alarmDeg'> };
