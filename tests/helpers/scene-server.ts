// A live-view server of the scene's channels with the description latched, its stderr lines kept, and
// its close added to the caller's list (the live-view tests close them after each test).
import { FoxgloveServer, type LiveAccess } from '../../src/viz/live.js';
import { sceneChannels, SCENE_TOPICS } from '../../src/viz/scene.js';

/** A server of the scene's channels with the description latched, its stderr lines kept; its close goes to `closers`. */
export async function sceneServer(
  closers: (() => Promise<void> | void)[],
  access: Omit<LiveAccess, 'say'> = {},
): Promise<{ s: FoxgloveServer; said: string[] }> {
  const said: string[] = [];
  const s = await FoxgloveServer.start('127.0.0.1', 0, sceneChannels(), { ...access, say: (l) => said.push(l) });
  s.publish(SCENE_TOPICS.description, new Uint8Array(8), 0n, true);
  closers.push(() => s.close());
  return { s, said };
}
