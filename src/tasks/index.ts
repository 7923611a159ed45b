/**
 * Tasks: the task model, its start message (built once), its SQL (tasks and task_events),
 * and its rules: submission (validation for every entry point, then commit and queue),
 * cancel, pause and resume through the durable control state.
 */
export * from './model.js';
export * from './store.js';
export * from './submit.js';
export * from './enqueue.js';
export * from './control.js';
export * from './not-available.js';
