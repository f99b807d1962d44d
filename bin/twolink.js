#!/usr/bin/env -S node --single-threaded-gc
// The `twolink` command. The TypeScript sources are compiled to dist/ by `npm install` (the
// `prepare` script runs `npm run build`: tsc, incremental, then zod bundled into one file) so that
// start-up does not pay for a TypeScript loader. Each command's module loads only when it runs.
import { existsSync } from 'node:fs';

// The shebang passes V8's --single-threaded-gc (as `npm start` does): garbage collection on the
// collecting thread alone. V8's parallel GC waits for helper threads that a busy machine starves,
// which made 47-120 ms pauses in the loop thread; with the flag they are 1-4 ms (the run's summary
// and npm run bench show the GC pauses per thread). It must be given at start: V8 aborts if it is set
// at run time.

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
    process.stderr.write(`twolink: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
    process.exitCode = 1;
  },
);
