/**
 * The tick format lives in src/telemetry/tick.ts (one declarative table, every view generated from
 * it); this module re-exports it for the loop, the run and the dashboard, which import it from here.
 */
export * from '../telemetry/tick.js';
