/**
 * Variables of the spec's configuration table that nothing implements yet, with what they
 * will control. They are not parsed (no module could read them): a value that is set is
 * ignored, and start-up warns about it (reservedSettingWarnings) rather than pretending.
 */
export const RESERVED_SETTINGS: Readonly<Record<string, string>> = Object.freeze({
  PRIORITY_QUEUES: 'priority queuing (default off)',
});

/** One start-up warning per reserved variable that is set. */
export function reservedSettingWarnings(cfg: { reserved: readonly string[] }): string[] {
  return cfg.reserved.map((name) => `${name} is reserved: not implemented yet, its value is ignored`);
}
