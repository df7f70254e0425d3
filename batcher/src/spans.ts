/** The batcher's span vocabulary (docs/CONTRACTS.md, "Traces"); the helpers that open spans stay in shared. */

/** Span names the batcher emits. */
export const SPAN = {
  cycle: 'batcher.cycle',
  options: 'batcher.options',
  checkSessions: 'batcher.check_sessions',
  collect: 'batcher.collect',
  send: 'batcher.send',
  sessionCreate: 'batcher.session.create',
  rebuildState: 'batcher.rebuild_state',
  cfsUrlCheck: 'batcher.cfs_url_check',
} as const;

/** The batcher's own span attribute keys. */
export const ATTR = {
  cycleSeq: 'batcher.cycle.seq',
  sessionName: 'cfs.session.name',
  configurationName: 'cfs.configuration.name',
  batchSize: 'cfs.batch.size',
  sessionLimit: 'cfs.session.limit',
  sessionAnsibleLimit: 'cfs.session.ansible_limit',
} as const;

/**
 * Attributes of a `batcher.session.create` span. `limit` is the session's configuration_limit (the layers it runs);
 * `ansibleLimit`, the node list, is optional because it can be long.
 */
export function sessionSpanAttributes(s: {
  name: string;
  configuration: string;
  batchSize: number;
  limit: string;
  ansibleLimit?: string;
}): Record<string, string | number> {
  return {
    [ATTR.sessionName]: s.name,
    [ATTR.configurationName]: s.configuration,
    [ATTR.batchSize]: s.batchSize,
    [ATTR.sessionLimit]: s.limit,
    ...(s.ansibleLimit !== undefined ? { [ATTR.sessionAnsibleLimit]: s.ansibleLimit } : {}),
  };
}
