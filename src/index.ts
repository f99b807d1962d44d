/**
 * twolink's public API: explicit names only (no `export *`), grouped the way the code is layered:
 * model (pure math) -> protocol -> transport -> control -> record.
 */

// The arm model (src/model): pure math on plain numbers. One model, the actuated arm (rigid arm,
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
  computeForwardDynamics,
  computeForwardDynamicsUnderDuty,
  computeFriction,
  computeGravity,
  computeInverseDynamics,
  computeMassMatrix,
  computeMomentum,
  computeVelocityTerms,
  createActuatedArmData,
  computeEnergy,
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

// Rig and trajectory files (src/config): zod-validated, errors name the file and the field.
export type { MotorParams, RigFile } from './config/rig.js';
export { parseRigFile, RigFileError, rigFileSchema } from './config/rig.js';
export type { EncoderParams, JointLimits, PlantParams, Rig } from './config/load.js';
export { loadRig, resolveRig } from './config/load.js';
export { loadTrajectoryFile, trajectoryFileSchema } from './config/trajectory-file.js';
export { FileError } from './config/files.js';
export type { PlausibilityIssue } from './config/plausible.js';
export { plausibilityIssues } from './config/plausible.js';

// The line protocol (src/protocol): pure codec.
export type { BoardFrame, BoardInfo, Decoded, HostFrame, RejectCode, Rejection } from './protocol/codec.js';
export { crc16, decodeBoardFrame, decodeHostFrame, encodeBoardFrame, encodeHostFrame, FLAG, LineAssembler, MAX_LINE, PROTOCOL, SequenceTracker } from './protocol/codec.js';

// The link to the arm (src/transport): one interface, several transports.
export type { BoardIdentity, Link, LinkCounters, LinkEvent, Reading, StopOutcome } from './transport/link.js';
export { LinkError } from './transport/link.js';
export { LineLink } from './transport/line-link.js';
export type { Target } from './run/target.js';
export { openSerial, openSerialPort, resolveSerialPath } from './transport/open.js';
export type { OpenedSerial, SerialOptions, SerialPath } from './transport/open.js';
export { openTarget } from './run/target.js';
export type { BoardEnd, Composed, ComposedLink, ComposeOptions, LinkOptions, Place, PortPlace, TransportName } from './run/compose.js';
export { compose, linkOver, openEnd, TRANSPORTS } from './run/compose.js';

// Time (src/time).
export type { Clock } from './time/clock.js';
export { RealClock, VirtualClock } from './time/clock.js';

// The mock (src/mock): a simulated arm and board that speak the board's protocols.
export type { LineMock } from './mock/line-mock.js';
export { createLineMock } from './mock/line-mock.js';
/** @deprecated The old name of LineMock (src/rig became src/mock, issue 22). */
export type { LineMock as MockRig } from './mock/line-mock.js';
/** @deprecated The old name of createLineMock. */
export { createLineMock as createMockRig } from './mock/line-mock.js';
export { Plant } from './mock/plant.js';
export type { HostWiring } from './config/wiring.js';
export { WiredLink } from './transport/wired-link.js';
export { LineBoard } from './mock/line-board.js';
export type { MockWiring, WiringMistake } from './mock/wiring.js';
export { parseWiring, WiringError } from './mock/wiring.js';
export type { PlantWiring } from './mock/plant.js';

// The control loop (src/control).
export type { FeedforwardMode } from './control/controller.js';
export { Controller } from './control/controller.js';
export type { LoopCommand, LoopEvent } from './control/loop.js';
export { LoopCore } from './control/loop.js';
export type { FloatConstraint, FloatPhase, FloatSettings } from './control/float.js';
export { FloatLaw, floatSettings } from './control/float.js';
export type { Taught, TeachRecording } from './identify/taught.js';
export { buildTaught } from './identify/taught.js';
export type { CommandResult, LoopCommandKind, Refusal } from './control/commands.js';
export { ACCEPTED_COMMANDS, accepts, isFinished, refusal } from './control/commands.js';
export type { ImpedanceConfig, ImpedanceSettings, ImpedanceSpace, PassivityInputs } from './control/impedance.js';
export { checkImpedance, ImpedanceError, ImpedanceLaw, impedanceSettings, loopPassivity } from './control/impedance.js';
export { designDamping, endpointInertia, forceFromTorque, passiveStiffnessBound, passivityTimeS } from './control/impedance-math.js';
export type { PhasePlan, PlannedPhase } from './control/events.js';
export { describeEvent } from './control/events.js';
export type { Fault, JointTrouble, StopKind, StopNotes, StopReason } from './control/stop.js';
export { describeStop, FAULT_KINDS, isStopOf, STOP_KINDS, STOP_PATHS, stopPath } from './control/stop.js';
export type { LoopTiming, RunOptions, RunResult } from './control/runner.js';
export type { RunTiming } from './run/messages.js';
export { runLoop } from './control/runner.js';
export { Twin } from './control/twin.js';
export type { WiringFault, WiringMonitorOptions } from './control/wiring-monitor.js';
export { WiringMonitor } from './control/wiring-monitor.js';
export type { PreflightOptions } from './control/feasibility.js';
export { checkFeasible, FeasibilityError, preflight, startPose } from './control/feasibility.js';
export { planPath, type PlannedPath } from './control/plan.js';
export { Session } from './run/session.js';
export { virtualRun } from './run/virtual.js';
export type { RecordingHeader } from './telemetry/header.js';
export { recordingHeaderSchema } from './telemetry/header.js';
export { F as TICK, TICK_FIELDS, TICK_GROUPS, TICK_TABLE, tickObject, tickRow, type TickFieldSpec } from './telemetry/tick.js';

// Your own controller in the loop (--controller FILE): the contract and the adapter.
export type { ControllerContext, ControllerFactory, ControllerModel, ControllerSample, LawResult, PluggedOptions, UserController } from './control/user-controller.js';
export { ControllerError, ControllerFault, controllerContext, PluggedController } from './control/user-controller.js';
export type { ControllerModelOptions } from './control/controller-model.js';
export { controllerModel } from './control/controller-model.js';

// Recording (src/record).
export { Recorder } from './telemetry/recorder.js';
export type { RunSummary } from './run/stats.js';
export { RunStats } from './run/stats.js';

// Identification (src/identify).
export { fitTicks, identify, identifiedRigFile, nnls, regressorRows, baseParameters, designExcitation } from './identify/index.js';
export type { BaseParameters, FitResult, Identified } from './identify/index.js';

export { PROTOCOL_VERSION, VERSION } from './version.js';
