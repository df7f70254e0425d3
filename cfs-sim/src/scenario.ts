/**
 * Scenario files (JSON, format in cfs-sim/README.md): inventory, options, operator timing, outcomes and faults.
 * Every rejection names the file, the JSON path and what was wrong.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { faultRuleSchema } from './faults';
import { generateInventory } from './generator';
import { HOST_OUTCOMES, SESSION_MODES } from './outcomes';
import { optionsInput, stateLayerInput } from './schemas';
import { TRANSPORTS } from './transport';
import type { Component, Configuration } from './types';

export class ScenarioError extends Error {
  override name = 'ScenarioError';
}

/** Shared with the control API (control.ts): the same words configure the operator from a file or over HTTP. */
export const outcome = z.enum(HOST_OUTCOMES as [string, ...string[]]);
export const sessionModeRuleSchema = z.strictObject({
  mode: z.enum(SESSION_MODES as [string, ...string[]]),
  configuration: z.string().optional(),
  nameContains: z.string().optional(),
  count: z.number().int().min(1).optional(),
});

/** Shared with the control API: the scripted other batcher's settings (foreign-batcher.ts). */
export const foreignBatcherSchema = z.strictObject({
  running: z.boolean().optional(),
  intervalMs: z.number().int().min(100).optional(),
  batchSize: z.number().int().min(1).optional(),
  windowMs: z.number().int().min(0).optional(),
});

const componentSchema = z.strictObject({
  /** Any string, as the real CFS stores whatever id it is given: commas, whitespace and '' included. */
  id: z.string(),
  desired_config: z.string().optional(),
  enabled: z.boolean().optional(),
  error_count: z.number().int().min(0).optional(),
  retry_policy: z.number().int().min(-1).optional(),
  tags: z.record(z.string(), z.string()).optional(),
  state: z.array(stateLayerInput).optional(),
});

const configurationSchema = z.strictObject({
  name: z.string().min(1).max(60),
  description: z.string().optional(),
  layers: z.array(
    z.strictObject({
      name: z.string().optional(),
      clone_url: z.string().optional(),
      source: z.string().optional(),
      playbook: z.string().optional(),
      commit: z.string().optional(),
      branch: z.string().optional(),
    }),
  ),
});

export const scenarioSchema = z.strictObject({
  description: z.string().optional(),
  options: optionsInput.optional(),
  configurations: z.array(configurationSchema).optional(),
  components: z.array(componentSchema).optional(),
  generate: z
    .strictObject({
      components: z.number().int().min(0).max(200_000),
      configurations: z.number().int().min(1).max(100).optional(),
      layersPerConfiguration: z.number().int().min(1).max(10).optional(),
      taggedFraction: z.number().min(0).max(1).optional(),
    })
    .optional(),
  operator: z
    .strictObject({
      pendingMs: z.number().int().min(0).optional(),
      pendingJitterMs: z.number().int().min(0).optional(),
      runningMs: z.number().int().min(0).optional(),
      maxStartsPerSecond: z.number().int().min(0).optional(),
      paused: z.boolean().optional(),
    })
    .optional(),
  server: z
    .strictObject({
      /** 'nodelay' (default): TCP_NODELAY, one write per answer; 'python': Nagle on, headers and body written apart. */
      transport: z.enum(TRANSPORTS).optional(),
      /** Also listen here (0 = any free port): same API, never faulted, counted or closed by an outage. */
      controlPort: z.number().int().min(0).max(65535).optional(),
    })
    .optional(),
  outcomes: z
    .strictObject({
      components: z
        .array(z.strictObject({ id: z.string().min(1), layer: z.number().int().min(0).optional(), outcome }))
        .optional(),
      layers: z
        .array(z.strictObject({ configuration: z.string().min(1), layer: z.number().int().min(0).optional(), outcome }))
        .optional(),
      sessions: z.array(sessionModeRuleSchema).optional(),
    })
    .optional(),
  faults: z.array(faultRuleSchema).optional(),
  /** A scripted other batcher (foreign-batcher.ts), creating sessions as the original does. */
  foreignBatcher: foreignBatcherSchema.optional(),
});
export type Scenario = z.infer<typeof scenarioSchema>;

function fail(source: string, where: string, what: string): never {
  throw new ScenarioError(`scenario ${source}: ${where}: ${what}`);
}

/** Validates a parsed scenario document, including cross-references (duplicates, unknown names). */
export function parseScenario(data: unknown, source = '(inline)'): Scenario {
  const res = scenarioSchema.safeParse(data);
  if (!res.success) {
    const first = res.error.issues[0]!;
    const more = res.error.issues.length > 1 ? ` (and ${res.error.issues.length - 1} more problems)` : '';
    fail(source, first.path.join('.') || '(root)', `${first.message}${more}`);
  }
  const sc = res.data;
  const configNames = new Set<string>();
  sc.configurations?.forEach((c, i) => {
    if (configNames.has(c.name)) fail(source, `configurations.${i}.name`, `duplicate configuration '${c.name}'`);
    configNames.add(c.name);
  });
  const ids = new Set<string>();
  sc.components?.forEach((c, i) => {
    if (ids.has(c.id)) fail(source, `components.${i}.id`, `duplicate component id '${c.id}'`);
    ids.add(c.id);
  });
  sc.outcomes?.components?.forEach((o, i) => {
    if (!ids.has(o.id) && !sc.generate) fail(source, `outcomes.components.${i}.id`, `unknown component '${o.id}'`);
  });
  sc.outcomes?.layers?.forEach((o, i) => {
    if (!configNames.has(o.configuration) && !sc.generate)
      fail(source, `outcomes.layers.${i}.configuration`, `unknown configuration '${o.configuration}'`);
  });
  return sc;
}

export function loadScenarioFile(file: string): Scenario {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ScenarioError(`scenario ${file}: cannot read file: ${(err as Error).message}`);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ScenarioError(`scenario ${file}: not valid JSON: ${(err as Error).message}`);
  }
  return parseScenario(data, file);
}

/** The inventory a scenario describes (generated records first, explicit ones override). */
export function scenarioInventory(sc: Scenario): { components: Component[]; configurations: Configuration[] } {
  const gen = sc.generate ? generateInventory(sc.generate) : { components: [], configurations: [] };
  const configurations: Configuration[] = [...gen.configurations, ...(sc.configurations ?? []).map((c) => ({ ...c }))];
  const components: Component[] = [
    ...gen.components,
    ...(sc.components ?? []).map((c) => ({
      ...c,
      state: (c.state ?? []).map((l) => ({
        status: 'applied',
        session_name: '',
        last_updated: '2024-01-10T13:37:52Z',
        ...l,
      })),
    })),
  ];
  return { components, configurations };
}
