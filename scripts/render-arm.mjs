// docs/arm-3d.svg: the arm as Foxglove's 3D panel poses it, drawn without a display or a GPU. A 1 kHz
// reach of the mock rig (virtual time) is recorded and exported as MCAP (`compare --export mcap`'s
// code); the URDF on its /robot_description is parsed by urdf-loader (npm) into three.js objects
// (the library Foxglove's 3D panel draws with), posed from the /tf message where the measured arm is
// farthest from the desired one in the middle of the run (each joint's angle from its rotation about z), and drawn by three.js's
// SVGRenderer in linkedom's DOM, seen along -z (the arm's plane), with the endpoint paths up to then.
// Not a screenshot of Foxglove. Usage (after npm run build): node scripts/render-arm.mjs [out.svg]
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DOMParser, parseHTML } from 'linkedom';
import { McapIndexedReader } from '@mcap/core';

const out = process.argv[2] ?? 'docs/arm-3d.svg';
// urdf-loader and SVGRenderer want a browser's DOM: linkedom's.
const xdoc = new DOMParser().parseFromString('<robot/>', 'text/xml');
Object.assign(globalThis, {
  DOMParser,
  Document: xdoc.constructor,
  Element: Object.getPrototypeOf(xdoc.documentElement.constructor),
  document: parseHTML('<html></html>').document,
});
const THREE = await import('three');
const { SVGRenderer } = await import('three/examples/jsm/renderers/SVGRenderer.js');
const URDFLoader = (await import('urdf-loader')).default;
const { loadRig } = await import('../dist/config/load.js');
const { builtinPath } = await import('../dist/model/builtins.js');
const { virtualRun } = await import('../dist/run/virtual.js');
const { exportMcap } = await import('../dist/record/export.js');
const { readCdrString, SCENE_ARMS, SCENE_TOPICS } = await import('../dist/viz/scene.js');

const rig = loadRig('rigs/mock-arm.json');
const dir = mkdtempSync(join(tmpdir(), 'twolink-render-'));
await virtualRun(rig, [builtinPath(rig.arm, 'reach')], { record: join(dir, 'run.ndjson'), keepRows: false });
await exportMcap(join(dir, 'run.ndjson'), join(dir, 'run.mcap'));
const bytes = readFileSync(join(dir, 'run.mcap'));
const reader = await McapIndexedReader.Initialize({
  readable: { size: async () => BigInt(bytes.length), read: async (o, s) => bytes.subarray(Number(o), Number(o + s)) },
});
const dec = new TextDecoder();
let urdf = '';
const tfs = [];
const paths = [];
for await (const m of reader.readMessages()) {
  const topic = reader.channelsById.get(m.channelId).topic;
  if (topic === SCENE_TOPICS.description) urdf = readCdrString(m.data);
  if (topic === SCENE_TOPICS.tf) tfs.push(JSON.parse(dec.decode(m.data)));
  if (topic === SCENE_TOPICS.path) paths.push({ t: m.logTime, u: JSON.parse(dec.decode(m.data)) });
}
const angle = (tf, child) => {
  const r = tf.transforms.find((t) => t.child_frame_id === child).rotation;
  return 2 * Math.atan2(r.z, r.w);
};
const gap = (tf) =>
  Math.abs(angle(tf, 'measured/link1') - angle(tf, 'desired/link1')) + Math.abs(angle(tf, 'measured/link2') - angle(tf, 'desired/link2'));
// Past the approach (the arm starts hanging, the plan's start elsewhere): the largest gap in the middle of the run.
const tf = tfs.slice(Math.floor(tfs.length * 0.3), Math.floor(tfs.length * 0.8)).reduce((a, b) => (gap(b) > gap(a) ? b : a));
const stamp = BigInt(tf.transforms[0].timestamp.sec) * 1_000_000_000n + BigInt(tf.transforms[0].timestamp.nsec);

const scene = new THREE.Scene();
for (const a of SCENE_ARMS) {
  const robot = new URDFLoader().parse(urdf);
  robot.setJointValue('joint1', angle(tf, `${a.name}/link1`));
  robot.setJointValue('joint2', angle(tf, `${a.name}/link2`));
  robot.traverse((o) => {
    if (o.isMesh) o.material = new THREE.MeshBasicMaterial({ color: a.color, opacity: 0.7, transparent: true });
  });
  scene.add(robot);
}
for (const p of paths.filter((x) => x.t <= stamp)) {
  for (const e of p.u.entities) {
    const l = e.lines[0];
    const c = l.color;
    scene.add(
      new THREE.Line(
        new THREE.BufferGeometry().setFromPoints(l.points.map((q) => new THREE.Vector3(q.x, q.y, 0.05))),
        new THREE.LineBasicMaterial({ color: new THREE.Color(c.r, c.g, c.b) }),
      ),
    );
  }
}
const reach = rig.arm.L1 + (rig.arm.L2 ?? 0);
const cam = new THREE.OrthographicCamera(-reach * 1.05, reach * 1.05, reach * 1.05, -reach * 1.05, -10, 10);
cam.position.set(0, 0, 5);
cam.lookAt(0, 0, 0);
const r = new SVGRenderer();
r.setSize(600, 600);
r.render(scene, cam);
const first = tfs[0].transforms[0].timestamp;
const t = Number(stamp - (BigInt(first.sec) * 1_000_000_000n + BigInt(first.nsec))) / 1e9;
const svg = r.domElement.outerHTML.replace('<svg ', `<svg xmlns="http://www.w3.org/2000/svg" `);
writeFileSync(
  out,
  `<!-- twolink scripts/render-arm.mjs: rigs/mock-arm.json, reach (virtual time), /tf ${t.toFixed(3)} s after the first; blue measured, green desired, orange twin; three.js SVGRenderer, not a Foxglove screenshot -->\n${svg}\n`,
);
process.stdout.write(`wrote ${out}\n`);
