/**
 * The task enums as the generated protobuf enums carry them. Both sides of the internal RPC
 * need this table (rpc/ serves it, the gateway reads it back into JSON names), and neither may
 * import the other, so it lives here: the one import kernel/ makes outside itself, of the
 * generated code (src/gen) only.
 */
import { ExecutionMode, ModelTier, TaskStatus } from '../gen/svc/v1/common_pb.js';
import type { ExecutionModeName, Mode, TaskStatusName, Tier } from './tasks.js';

export const TASK_STATUS_NAME: Record<TaskStatus, TaskStatusName> = {
  [TaskStatus.UNSPECIFIED]: 'TASK_STATUS_UNSPECIFIED',
  [TaskStatus.QUEUED]: 'TASK_STATUS_QUEUED',
  [TaskStatus.RUNNING]: 'TASK_STATUS_RUNNING',
  [TaskStatus.COMPLETED]: 'TASK_STATUS_COMPLETED',
  [TaskStatus.FAILED]: 'TASK_STATUS_FAILED',
  [TaskStatus.CANCELLED]: 'TASK_STATUS_CANCELLED',
  [TaskStatus.TIMEOUT]: 'TASK_STATUS_TIMEOUT',
  [TaskStatus.PAUSED]: 'TASK_STATUS_PAUSED',
};
const TASK_STATUS_BY_NAME = new Map<string, TaskStatus>(Object.entries(TASK_STATUS_NAME).map(([k, v]) => [v, Number(k) as TaskStatus]));
export const taskStatusFromName = (s: string) => TASK_STATUS_BY_NAME.get(s) ?? TaskStatus.UNSPECIFIED;

export const EXECUTION_MODE_NAME: Record<ExecutionMode, ExecutionModeName> = {
  [ExecutionMode.UNSPECIFIED]: 'EXECUTION_MODE_UNSPECIFIED',
  [ExecutionMode.SIMPLE]: 'EXECUTION_MODE_SIMPLE',
  [ExecutionMode.STANDARD]: 'EXECUTION_MODE_STANDARD',
  [ExecutionMode.COMPLEX]: 'EXECUTION_MODE_COMPLEX',
};
const EXECUTION_MODE_BY_NAME = new Map<string, ExecutionMode>(Object.entries(EXECUTION_MODE_NAME).map(([k, v]) => [v, Number(k) as ExecutionMode]));
export const executionModeFromName = (s: string) => EXECUTION_MODE_BY_NAME.get(s) ?? ExecutionMode.UNSPECIFIED;

/** SubmitOptions.mode for callers that send the enum rather than mode_name. Maps, not object literals. */
export const MODE_BY_ENUM = new Map<ExecutionMode, Mode | undefined>([
  [ExecutionMode.UNSPECIFIED, undefined],
  [ExecutionMode.SIMPLE, 'simple'],
  [ExecutionMode.STANDARD, 'standard'],
  [ExecutionMode.COMPLEX, 'complex'],
]);

export const TIER_BY_ENUM = new Map<ModelTier, Tier | undefined>([
  [ModelTier.UNSPECIFIED, undefined],
  [ModelTier.SMALL, 'small'],
  [ModelTier.MEDIUM, 'medium'],
  [ModelTier.LARGE, 'large'],
]);
/** A Map: `model_tier: "constructor"` must not find a prototype member. */
export const MODEL_TIER_BY_NAME = new Map<string, ModelTier>([
  ['small', ModelTier.SMALL],
  ['medium', ModelTier.MEDIUM],
  ['large', ModelTier.LARGE],
]);
