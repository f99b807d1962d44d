/**
 * A URDF of the arm from its rig file: primitive shapes only (boxes and cylinders, no mesh files to
 * serve), the rig's lengths, masses, centres of mass and inertias, revolute joints with the rig's
 * soft limits. Pure: a string from numbers.
 *
 * Frames. The URDF's root link `base` is the seeds' frame, not ROS's z-up convention (REP 103): x
 * along alpha1 = 0 (horizontal), y up (gravity along -y), z out of the arm's plane towards the viewer
 * (right-handed), so that a counter-clockwise (positive) joint angle is a positive rotation about +z:
 * both joint axes are +z. Link i's frame sits on joint i with its x along the link; joint 2 is at
 * (L1, 0, 0) in link 1's frame, and a fixed joint puts the `tip` frame at (L2, 0, 0) in link 2's
 * (the endpoint of `twolink model fk`). Viewers with z up (Foxglove's 3D panel, RViz) see the arm
 * upright through the `world -> plane` transform of scene.ts (+90 degrees about x: the seeds' y
 * becomes the viewer's z), which the recordings and the live view send; the URDF itself stays in
 * the seeds' convention.
 *
 * Inertias. The planar model knows each link's inertia about the axis normal to the plane through
 * its centre of mass (I1, I2): that is izz. A slender link's inertia about the other axis across it
 * is the same (iyy = izz); about its own long axis the planar model says nothing, and the URDF gives
 * that of the drawn cross-section (a solid bar w x t: ixx = m (w^2 + t^2) / 12): positive, as simulators
 * and dynamics libraries that load a URDF require of every principal moment, and small enough to keep
 * the triangle inequalities of a physical body (ixx + iyy >= izz, iyy + izz >= ixx). The rig's
 * `arm` section is the one `twolink identify` writes, so an identified rig file gives the identified
 * masses, centres of mass and inertias; the motors' rotor inertia (reflected through the gears) is a
 * property of the drive, not of the link, and is not in the URDF.
 *
 * The link boxes' cross-section (LINK_SECTION_M) and the joint housings are for the picture only:
 * the rig file has no widths.
 */
import type { ArmParams } from '../model/types.js';
import { isTwoLink } from '../model/types.js';

/** One joint's soft limits, in SI units (the rig's `limits`, resolved). */
export interface UrdfJointLimits {
  /** [rad] */
  min: number;
  /** [rad] */
  max: number;
  /** [rad/s] */
  maxVel: number;
  /** [N m] */
  maxTorque: number;
}

/** What the URDF is made from: the rig's name, nominal (or identified) arm and soft limits. */
export interface UrdfSource {
  name: string;
  arm: ArmParams;
  limits: readonly UrdfJointLimits[];
}

/** Names of the URDF's links and joints, in chain order (a one-link arm has the first of each). */
export const URDF_LINKS = ['base', 'link1', 'link2', 'tip'] as const;
export const URDF_JOINTS = ['joint1', 'joint2'] as const;
/** The fixed joint from the last link to the endpoint frame. */
export const URDF_TIP_JOINT = 'tip_joint';

/** Width (y) and thickness (z) of a link's box [m], for the picture. */
export const LINK_SECTION_M = { width: 0.02, thickness: 0.01 } as const;
/** Joint housings: cylinders along z [m], for the picture. */
const HOUSING_M = { radius: 0.015, length: 0.03 } as const;

/** A number as URDF text: the shortest decimal that reads back as the same double. */
function n(v: number): string {
  if (!Number.isFinite(v)) throw new RangeError(`a URDF number must be finite (got ${v})`);
  return Object.is(v, -0) ? '0' : String(v);
}

function xmlAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A link's inertia about its own long axis [kg m^2]: a solid bar of the drawn cross-section. */
export function axialInertia(massKg: number): number {
  return (massKg * (LINK_SECTION_M.width ** 2 + LINK_SECTION_M.thickness ** 2)) / 12;
}

/** One link: the box along x from its joint, the housing of its joint, and its inertial. */
function link(name: string, L: number, d: number, m: number, I: number): string {
  const box = `<box size="${n(L)} ${n(LINK_SECTION_M.width)} ${n(LINK_SECTION_M.thickness)}"/>`;
  const housing = `<cylinder radius="${n(HOUSING_M.radius)}" length="${n(HOUSING_M.length)}"/>`;
  return [
    `  <link name="${name}">`,
    '    <inertial>',
    `      <origin xyz="${n(d)} 0 0" rpy="0 0 0"/>`,
    `      <mass value="${n(m)}"/>`,
    `      <inertia ixx="${n(axialInertia(m))}" ixy="0" ixz="0" iyy="${n(I)}" iyz="0" izz="${n(I)}"/>`,
    '    </inertial>',
    `    <visual name="${name}_body">`,
    `      <origin xyz="${n(L / 2)} 0 0" rpy="0 0 0"/>`,
    `      <geometry>${box}</geometry>`,
    '    </visual>',
    `    <visual name="${name}_housing">`,
    '      <origin xyz="0 0 0" rpy="0 0 0"/>',
    `      <geometry>${housing}</geometry>`,
    '    </visual>',
    '    <collision>',
    `      <origin xyz="${n(L / 2)} 0 0" rpy="0 0 0"/>`,
    `      <geometry>${box}</geometry>`,
    '    </collision>',
    '  </link>',
  ].join('\n');
}

function revolute(name: string, parent: string, child: string, x: number, lim: UrdfJointLimits): string {
  return [
    `  <joint name="${name}" type="revolute">`,
    `    <parent link="${parent}"/>`,
    `    <child link="${child}"/>`,
    `    <origin xyz="${n(x)} 0 0" rpy="0 0 0"/>`,
    '    <axis xyz="0 0 1"/>',
    `    <limit lower="${n(lim.min)}" upper="${n(lim.max)}" effort="${n(lim.maxTorque)}" velocity="${n(lim.maxVel)}"/>`,
    '  </joint>',
  ].join('\n');
}

/**
 * The URDF of the arm. No <material>: a viewer draws each arm in the colour it is given (Foxglove's
 * URDF layer: `fallbackColor`), so that the measured, desired and twin arms can differ.
 */
export function armUrdf(src: UrdfSource): string {
  const a = src.arm;
  const two = isTwoLink(a);
  const joints = two ? 2 : 1;
  if (src.limits.length < joints) throw new RangeError(`the URDF needs limits for ${joints} joint(s) (got ${src.limits.length})`);
  const parts = [
    '<?xml version="1.0"?>',
    `<!-- ${xmlAttr(src.name).replace(/--/g, '- -')}: written by twolink urdf (src/viz/urdf.ts). Frame "base": the seeds' convention, x along alpha1 = 0, y up (gravity -y), joint axes z. -->`,
    `<robot name="${xmlAttr(src.name)}">`,
    '  <link name="base"/>',
    revolute('joint1', 'base', 'link1', 0, src.limits[0]!),
    link('link1', a.L1, a.d1, a.m1, a.I1),
  ];
  if (two) {
    parts.push(revolute('joint2', 'link1', 'link2', a.L1, src.limits[1]!), link('link2', a.L2, a.d2, a.m2, a.I2));
  }
  parts.push(
    `  <joint name="${URDF_TIP_JOINT}" type="fixed">`,
    `    <parent link="${two ? 'link2' : 'link1'}"/>`,
    '    <child link="tip"/>',
    `    <origin xyz="${n(two ? a.L2 : a.L1)} 0 0" rpy="0 0 0"/>`,
    '  </joint>',
    '  <link name="tip"/>',
    '</robot>',
    '',
  );
  return parts.join('\n');
}
