/**
 * johnny-five's table of Firmata motor shields (`Motor.SHIELD_CONFIGS`), loaded only when a rig file
 * names a preset, and the pins of a rig file's `firmata` section with the presets resolved: the one
 * place the rig file's check (config/shields.ts), the host's link (transport/firmata-link.ts) and the
 * mock board get them from. Below config and transport, so that neither imports the other for it.
 */
import { createRequire } from 'node:module';
import { resolveWiring, type ShieldConfig, type Wiring, type WiringIssue, type WiringSpec } from './firmata-wiring.js';

type ShieldTable = Record<string, Record<string, ShieldConfig>>;

let table: ShieldTable | undefined;

/** johnny-five's Motor.SHIELD_CONFIGS. */
export function shields(): ShieldTable {
  table ??= (createRequire(import.meta.url)('johnny-five') as { Motor: { SHIELD_CONFIGS: ShieldTable } }).Motor.SHIELD_CONFIGS;
  return table;
}

/**
 * The pins of a rig file's `firmata` section, shield presets resolved: the one place the host's link
 * and the mock board get them from. johnny-five is loaded only when a preset is named.
 */
export function resolveFirmataWiring(spec: WiringSpec): Wiring | WiringIssue {
  return resolveWiring(spec, spec.motors.some((m) => 'shield' in m) ? shields() : {});
}
