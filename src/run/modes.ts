/**
 * The table of run modes: what law drives the arm in each, and how it is built. Like the transport
 * table (compose.ts), one entry per mode: `track` (feedforward + PID, the loop's own law), `float`
 * (control/float.ts), `impedance` (control/impedance.ts, its passivity checked for the run's loop) and
 * `controller` (a user's module in a thread of its own, run/law.ts, or a ControlLaw given by code).
 * Every caller (the worker, the virtual run, the bench, setup/tune/identify) gets its law here: the
 * float and impedance laws are constructed in this file only (tests/architecture.test.ts checks it),
 * and the names of `twolink run --mode` (control/modes.ts) are keys of the table (typed, and checked).
 */
import type { Rig } from '../config/load.js';
import { FloatLaw, type FloatSettings } from '../control/float.js';
import { ImpedanceLaw, loopPassivity, type ImpedanceSettings } from '../control/impedance.js';
import type { ControlLaw } from '../control/law.js';
import type { RunMode } from '../control/modes.js';
import { controllerDeadlineMs, loadControlLaw } from './law.js';

/** The mode of a run and what it needs: float's and impedance's settings (or a law built here before), a controller's module or a ControlLaw. */
export type ModeChoice =
  | { mode: 'track' }
  | { mode: 'float'; float: FloatSettings | FloatLaw }
  | { mode: 'impedance'; impedance: ImpedanceSettings | ImpedanceLaw }
  | { mode: 'controller'; controller: string | ControlLaw };

/** A run mode's name: those of `--mode`, and a user's controller. */
export type ModeName = ModeChoice['mode'];

/** What a law is built for: the rig, the loop's rate, real or virtual time, and whether the board is the mock (the impedance passivity check's delay). */
export interface ModeContext {
  rig: Rig;
  rateHz: number;
  time: 'real' | 'virtual';
  mock: boolean;
}

/** A mode's law, built: what the loop runs (undefined: feedforward + PID), the handles the dashboard's keys reach, and its end. */
export interface ModeLaw {
  mode: ModeName;
  law: ControlLaw | undefined;
  /** Float mode's law (the float, hold and home keys). */
  float?: FloatLaw;
  /** Impedance mode's law (the stiffness and tare keys). */
  impedance?: ImpedanceLaw;
  /** Ends what the law started (a controller's thread). */
  close(): Promise<void>;
}

interface ModeEntry<C extends ModeChoice> {
  /** One line for people. */
  label: string;
  law(choice: C, ctx: ModeContext): Promise<ModeLaw>;
}

const nothing = async (): Promise<void> => undefined;

/** The mode table: every `--mode` name (control/modes.ts) and a user's controller. */
export const MODES: { readonly [K in ModeName | RunMode]: ModeEntry<Extract<ModeChoice, { mode: K }>> } = {
  track: {
    label: 'feedforward + PID along the trajectories',
    law: async () => ({ mode: 'track', law: undefined, close: nothing }),
  },
  float: {
    label: 'float under the hand (gravity and friction cancelled)',
    law: async (c, ctx) => {
      const float = floatLaw(ctx.rig, c.float);
      return { mode: 'float', law: float, float, close: nothing };
    },
  },
  impedance: {
    label: 'a spring-damper about the plan',
    law: async (c, ctx) => {
      const impedance = impedanceLaw(ctx, c.impedance);
      return { mode: 'impedance', law: impedance, impedance, close: nothing };
    },
  },
  controller: {
    label: "a user's controller",
    law: async (c, ctx) => {
      if (typeof c.controller !== 'string') return { mode: 'controller', law: c.controller, close: nothing };
      const plugged = await loadControlLaw(c.controller, ctx.rig, ctx.rateHz, { deadlineMs: controllerDeadlineMs(ctx.rig, ctx.time) });
      return { mode: 'controller', law: plugged, close: () => plugged.close() };
    },
  },
};

/** Builds the law of `choice` (the table's entry for its mode). */
export function modeLaw(choice: ModeChoice, ctx: ModeContext): Promise<ModeLaw> {
  return (MODES[choice.mode] as ModeEntry<ModeChoice>).law(choice, ctx);
}

/**
 * The mode of a run given as options (the worker's input, a virtual run's): a controller, impedance
 * settings or float settings, at most one of them (the command line refuses the others), else track.
 */
export function modeOf(o: {
  controller?: string | ControlLaw | undefined;
  impedance?: ImpedanceSettings | ImpedanceLaw | undefined;
  float?: FloatSettings | FloatLaw | undefined;
}): ModeChoice {
  const given = [o.controller !== undefined, o.impedance !== undefined, o.float !== undefined].filter(Boolean).length;
  if (given > 1) throw new Error('a run has one mode: give a controller, impedance settings or float settings, not several');
  if (o.controller !== undefined) return { mode: 'controller', controller: o.controller };
  if (o.impedance !== undefined) return { mode: 'impedance', impedance: o.impedance };
  if (o.float !== undefined) return { mode: 'float', float: o.float };
  return { mode: 'track' };
}

/** Float mode's law with `settings` (or the one given). */
export function floatLaw(rig: Rig, settings: FloatSettings | FloatLaw): FloatLaw {
  return settings instanceof FloatLaw ? settings : new FloatLaw(rig, settings);
}

/** Impedance mode's law with `settings` (or the one given), its stiffness checked passive for the run's loop: its rate and the board's answer delay (the mock's adapter model, or the rig file's cable). */
export function impedanceLaw(ctx: Omit<ModeContext, 'time'>, settings: ImpedanceSettings | ImpedanceLaw): ImpedanceLaw {
  return settings instanceof ImpedanceLaw ? settings : new ImpedanceLaw(ctx.rig, settings, loopPassivity(ctx.rig, ctx.mock, ctx.rateHz));
}
