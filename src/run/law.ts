/**
 * A user's controller module (twolink run --controller FILE) as the loop's ControlLaw: it runs in a
 * thread of its own (controller-thread.ts), handed the state predicted at the instant its torque
 * applies and the plan there, and ended when it does not answer within `deadlineMs`.
 */
import type { ControlLaw } from '../control/loop.js';
import type { ControllerRig } from '../control/user-controller.js';
import { ControllerThread, type ControllerThreadOptions } from './controller-thread.js';

/** The loop's law, and how to end the controller's thread when the run is over. */
export type PluggedLaw = ControlLaw & { close(): Promise<void> };

/**
 * The deadline of one call into a controller [ms, real time]. In real time, the board's watchdog
 * (link.watchdogMs): past it the board stops the motors anyway. In virtual time nothing waits for the
 * controller but the run, so a busy machine gets more slack: at least 1 s.
 */
export function controllerDeadlineMs(rig: ControllerRig, clock: 'real' | 'virtual'): number {
  return clock === 'real' ? rig.link.watchdogMs : Math.max(1000, rig.link.watchdogMs);
}

export async function loadControlLaw(file: string, rig: ControllerRig, rateHz: number, opts: ControllerThreadOptions): Promise<PluggedLaw> {
  return ControllerThread.start(file, rig, rateHz, opts);
}
