#!/usr/bin/env node
// The `twolink` command. The TypeScript sources are compiled to dist/ by `npm install` (the
// `prepare` script runs `npm run build`: tsc, incremental, then zod bundled into one file) so that
// start-up does not pay for a TypeScript loader. Each command's module loads only when it runs.
import { existsSync } from 'node:fs';
import { setFlagsFromString } from 'node:v8';

// Garbage collection on the collecting thread alone, for every thread created from here on (the
// loop's, the mock board's): V8's parallel GC waits for helper threads that a busy machine starves,
// which made 50-120 ms pauses in the loop thread (npm run bench shows the GC pauses per thread).
setFlagsFromString('--single-threaded-gc');

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(main)) {
  process.stderr.write('twolink: dist/ is not built: run `npm install` (or `npm run build`) in the twolink folder first\n');
  process.exit(2);
}

const { main: run } = await import(main.href);
run(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`twolink: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
