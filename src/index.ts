/**
 * twolink's public API (`import ... from 'twolink'`): what a program that uses twolink needs, named one
 * by one (no `export *`). It is five things:
 *
 * 1. the arm model: pure math on plain numbers (kinematics, the actuated arm's dynamics one term per
 *    function, simulation, trajectories);
 * 2. the rig file: its zod schema, its loader, and the errors that name the file and the field;
 * 3. the controller contract: what a module given to `--controller` exports and receives;
 * 4. how a run ends: the stop value and its words;
 * 5. the recording reader: the NDJSON a run writes (`--record`), its tick table and its summary.
 *
 * Plus the line protocol's pure codec (firmware-protocol/PROTOCOL.md), for firmware of your own. A run in
 * your own tests (the mock arm in virtual time) is the other entry, `twolink/testing`. Everything else
 * (the loop, the transports, the mock's parts, the commands) is internal and may change in any 0.x
 * release: drive it through the CLI. CHANGELOG.md lists what left this list and what to use instead.
 */

// 1. The arm model (src/model): pure math, no I/O, no clock. One model, the actuated arm (rigid arm,
// motors, friction; createRigidArmModel for the links alone), one function per term.
export type { ArmParams, Energy, ExternalLoads, Mat2, OneLinkParams, TwoLinkParams, Vec2 } from './model/types.js';
export { isTwoLink } from './model/types.js';
export { externalTorques } from './model/dynamics.js';
export type { Elbow, ForwardKinematics, PointKinematics } from './model/kinematics.js';
export {
  armEndpoint,
  endpoint,
  endpointAcceleration,
  endpointVelocity,
  forwardKinematics,
  fromDownwardVertical,
  inverseKinematics,
  inverseKinematics1,
  jacobian,
  jacobianDot,
  jointAngles,
  ReachError,
  segmentAngles,
  toDownwardVertical,
  wrapAngle,
} from './model/kinematics.js';
export type { AccelerationFn, IntegratorName } from './model/integrate.js';
export { FixedStepIntegrator, INTEGRATORS } from './model/integrate.js';
export type { SimulateOptions, SimulationResult } from './model/arm.js';
export { simulate } from './model/arm.js';
export type { ActuatedArmData, ActuatedArmModel, ActuatedArmSpec } from './model/actuated.js';
export {
  computeActuatorTorques,
  computeCoriolisMatrix,
  computeCoriolisTransposeVelocity,
  computeEnergy,
  computeForwardDynamics,
  computeForwardDynamicsUnderDuty,
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeMomentum,
  computeVelocityTerms,
  createActuatedArmData,
  createActuatedArmModel,
  createRigidArmModel,
  maxMassMatrixDiagonal,
  motorDamping,
  motorDuty,
  motorTorque,
  motorTorqueLimit,
  NOMINAL_COULOMB_VELOCITY,
} from './model/actuated.js';
export { dutyForTorque, reflectedInertia, torqueForDuty } from './model/motor.js';
export type { PathStart, PathStep, Trajectory, TrajectorySample } from './model/trajectory.js';
export { buildPath, endpointMinJerk, jointMinJerk, minJerkProfile, sampleAt, TrajectoryError } from './model/trajectory.js';
export type { PathSpec } from './model/builtins.js';
export { builtinNames, builtinPath, scalePath } from './model/builtins.js';

// 2. Rig and trajectory files (src/config): zod-validated; errors name the file and the field.
export type { MotorParams, RigFile } from './config/rig.js';
export { parseRigFile, RigFileError, rigFileSchema } from './config/rig.js';
export type { EncoderParams, JointLimits, PlantParams, Rig } from './config/load.js';
export { loadRig, resolveRig } from './config/load.js';
export { loadTrajectoryFile, trajectoryFileSchema } from './config/trajectory-file.js';
export { FileError } from './config/files.js';
export type { PlausibilityIssue } from './config/plausible.js';
export { plausibilityIssues } from './config/plausible.js';

// 3. Your own controller in the loop (`--controller FILE`, examples/controllers/): the module's default
// export is a ControllerFactory; twolink calls its update(sample) once per sample.
export type { ControllerContext, ControllerFactory, ControllerModel, ControllerSample, UserController } from './control/user-controller.js';
export { ControllerError, ControllerFault } from './control/user-controller.js';
export type { FeedforwardMode } from './control/controller.js';

// 4. How a run ends: a value (`stop.kind`, and a fault's kind), and its words for people.
export type { Fault, JointTrouble, StopKind, StopNotes, StopReason } from './control/stop.js';
export { describeStop, FAULT_KINDS, isStopOf, STOP_KINDS, STOP_PATHS, stopPath } from './control/stop.js';
export type { RunSummary } from './run/stats.js';

// 5. Recordings (`--record FILE`, docs/outputs.md): the reader, the header, the tick table.
export type { LoadedRecording, RecordingEvent, RecordingInfo, RecordingSummaryLine, RecordingVisitor } from './record/read.js';
export { loadRecording, readRecording, RecordingError } from './record/read.js';
export type { RecordingHeader } from './telemetry/header.js';
export { recordingHeaderSchema } from './telemetry/header.js';
export type { TickField, TickFieldSpec, TickObject } from './telemetry/tick.js';
export { F as TICK, TICK_FIELDS, TICK_GROUPS, TICK_TABLE, tickObject } from './telemetry/tick.js';

// The line protocol's codec (src/protocol, firmware-protocol/PROTOCOL.md): pure functions on strings.
export type { BoardFrame, BoardInfo, Decoded, HostFrame, RejectCode, Rejection } from './protocol/codec.js';
export {
  crc16,
  decodeBoardFrame,
  decodeHostFrame,
  encodeBoardFrame,
  encodeHostFrame,
  FLAG,
  LineAssembler,
  MAX_LINE,
  PROTOCOL,
  SequenceTracker,
} from './protocol/codec.js';

export { PROTOCOL_VERSION, VERSION } from './version.js';
