#!/usr/bin/env node
// The `twolink` command. The TypeScript sources are compiled to dist/ by `npm install` (the
// `prepare` script) so that start-up does not pay for a TypeScript loader.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`twolink: ${err instanceof Error ? err.stack ?? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
