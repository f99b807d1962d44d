// The realtime project's setup file (vitest.config.ts): every child registered with own()
// (tests/helpers/owned-children.ts) is killed when its test, or its file, ends.
import { afterAll, afterEach } from 'vitest';
import { killFileChildren, killTestChildren } from './owned-children.js';

afterEach(() => {
  killTestChildren();
});
afterAll(() => {
  killFileChildren();
});
