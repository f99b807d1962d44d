/**
 * Firmata motor shields named by preset (`{ "shield": "DF_ROBOT", "motor": "A" }`): resolved through
 * johnny-five's table (loaded only when a rig file names a shield) and their pins checked against the
 * board the rig file names, at load, so that a wrong preset is an input error (exit 2) before anything
 * connects, like the pin-by-pin wiring checked in rig.ts.
 */
import { resolveMotorPins, motorPinList } from '../protocol/firmata-wiring.js';
import { shields } from '../protocol/firmata-shields.js';
import { BOARDS } from '../protocol/firmata.js';
import type { Rig } from './load.js';
import { RigFileError } from './rig.js';

/** Throws a RigFileError naming `firmata.motors[i]` for a preset that is unknown or does not fit the board. */
export function checkShields(rig: Rig): Rig {
  const f = rig.firmata;
  if (!f || !f.motors.some((m) => 'shield' in m)) return rig;
  const board = BOARDS[f.board];
  const an = f.board === 'uno' ? 'an Uno' : 'a Mega';
  f.motors.forEach((m, i) => {
    if (!('shield' in m)) return;
    const field = `firmata.motors[${i}]`;
    const fail = (why: string): never => {
      throw new RigFileError(rig.file, `${field}: ${why}`, field);
    };
    const r = resolveMotorPins(m, shields());
    if (typeof r === 'string') fail(r);
    else {
      const what = `shield ${m.shield} motor ${m.motor}`;
      for (const { role, pin } of motorPinList(r)) {
        if (pin >= board.totalPins || !board.digital(pin))
          fail(`${what} uses pin ${pin} for ${role}, which ${an} cannot give it (pins 2-${board.totalPins - 1})`);
      }
      if (!board.pwm.has(r.pwm))
        fail(`${what} drives PWM on pin ${r.pwm}, which cannot do PWM on ${an} (PWM pins: ${[...board.pwm].join(' ')})`);
    }
  });
  return rig;
}
