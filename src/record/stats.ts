/** The run's summary lives in src/run/stats.ts (the run computes it); re-exported for record's users. */
export * from '../run/stats.js';
