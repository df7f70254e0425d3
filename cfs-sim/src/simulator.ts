/** createSimulator(): wires state, operator, faults, stats and the express app; listen/close/outage. */
import type http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { getLogger } from '@cfs-batcher/shared';
import type { Express } from 'express';
import { createApp } from './app';
import { markControl } from './bypass';
import type { ValidationFailure } from './deps';
import { FaultRegistry } from './faults';
import { ForeignBatcher } from './foreign-batcher';
import { generateInventory, type GenerateOptions } from './generator';
import { SessionHistory } from './history';
import { SimOperator, type OperatorSettings } from './operator';
import type { HostOutcome, SessionMode } from './outcomes';
import { loadScenarioFile, parseScenario, scenarioInventory, type Scenario } from './scenario';
import { findSpec, loadPatchedSpec } from './spec';
import { SimState } from './state';
import { RequestStats } from './stats';
import { createHttpServer, type Transport } from './transport';

const log = getLogger('cfs-sim');

export interface SimulatorOptions {
  /** A scenario document or the path of a scenario file. */
  scenario?: Scenario | string;
  generate?: GenerateOptions;
  operator?: Partial<
    Pick<OperatorSettings, 'pendingMs' | 'pendingJitterMs' | 'runningMs' | 'tickMs' | 'maxStartsPerSecond'>
  > & {
    paused?: boolean;
  };
  /** How answers are written (transport.ts); wins over the scenario's server.transport. Default 'nodelay'. */
  transport?: Transport;
  /** Also listen on this port (0 = any) for tests: never faulted, counted or closed; wins over the scenario's. */
  controlPort?: number;
  /** Validate requests and responses against the CFS OpenAPI spec (true = find the spec). */
  validateWithSpec?: boolean | { specPath?: string };
  now?: () => number;
}

export interface Simulator {
  app: Express;
  state: SimState;
  faults: FaultRegistry;
  operator: SimOperator;
  stats: RequestStats;
  history: SessionHistory;
  /** The scripted other batcher (off unless configured). */
  foreign: ForeignBatcher;
  /** Spec validator rejections seen so far (empty unless validateWithSpec). */
  validationErrors: ValidationFailure[];
  /** Whether the spec validator is active. */
  validating: boolean;
  /** Resolves with the port and base URL; controlPort is set when a control port was asked for. */
  listen(port: number, host?: string): Promise<{ port: number; url: string; controlPort?: number }>;
  readonly transport: Transport;
  /** Connection refused for durationMs (or until endOutage()), then the same port again. */
  startOutage(durationMs?: number): Promise<void>;
  endOutage(): Promise<void>;
  close(): Promise<void>;
}

function resolveSpec(opt: SimulatorOptions['validateWithSpec']): Record<string, unknown> | undefined {
  if (!opt) return undefined;
  const specPath = (typeof opt === 'object' && opt.specPath) || findSpec();
  // Only a CFS_OPENAPI_SPEC naming a missing file gets here: refused, not quietly run unvalidated.
  if (!specPath) throw new Error(`CFS_OPENAPI_SPEC=${process.env.CFS_OPENAPI_SPEC ?? ''}: no such file`);
  return loadPatchedSpec(specPath);
}

export function applyScenario(sc: Scenario, state: SimState, operator: SimOperator, faults: FaultRegistry): void {
  const inv = scenarioInventory(sc);
  for (const c of inv.configurations) state.putConfiguration(c);
  state.putComponents(inv.components);
  if (sc.options) state.options = { ...state.options, ...sc.options };
  if (sc.operator) {
    operator.setDelays(sc.operator);
    if (sc.operator.paused) operator.pause();
  }
  for (const o of sc.outcomes?.components ?? []) operator.setComponentOutcome(o.id, o.outcome as HostOutcome, o.layer);
  for (const o of sc.outcomes?.layers ?? [])
    operator.setLayerOutcome(o.configuration, o.layer, o.outcome as HostOutcome);
  for (const m of sc.outcomes?.sessions ?? []) operator.addSessionMode({ ...m, mode: m.mode as SessionMode });
  for (const f of sc.faults ?? []) faults.add(f);
}

export function createSimulator(opts: SimulatorOptions = {}): Simulator {
  const now = opts.now ?? Date.now;
  const state = new SimState();
  const history = new SessionHistory();
  const operator = new SimOperator(state, history, opts.operator, now);
  const faults = new FaultRegistry(now);
  const stats = new RequestStats();
  const validationErrors: ValidationFailure[] = [];
  const foreign = new ForeignBatcher(state, operator, now);
  let foreignAtListen: Scenario['foreignBatcher'];

  if (opts.generate) {
    const inv = generateInventory(opts.generate);
    for (const c of inv.configurations) state.putConfiguration(c);
    state.putComponents(inv.components);
  }
  let transport: Transport = opts.transport ?? 'nodelay';
  let controlPort = opts.controlPort;
  if (opts.scenario !== undefined) {
    const sc = typeof opts.scenario === 'string' ? loadScenarioFile(opts.scenario) : parseScenario(opts.scenario);
    applyScenario(sc, state, operator, faults);
    foreignAtListen = sc.foreignBatcher;
    // An explicit option (CLI flag) wins over the scenario file.
    transport = opts.transport ?? sc.server?.transport ?? transport;
    controlPort = opts.controlPort ?? sc.server?.controlPort;
  }
  if (opts.operator?.paused) operator.pause();

  let server: http.Server | null = null;
  let control: http.Server | null = null;
  let bound: { port: number; host: string } | null = null;
  const sockets = new Set<Socket>();
  let outageTimer: NodeJS.Timeout | null = null;
  let closed = false;

  const spec = resolveSpec(opts.validateWithSpec);
  const deps = {
    state,
    operator,
    faults,
    stats,
    history,
    now,
    validationErrors,
    foreign,
    startOutage: (ms: number) => sim.startOutage(ms),
  };
  const app = createApp(deps, { spec });

  function openServer(port: number, host: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const s = createHttpServer(transport, app);
      s.keepAliveTimeout = 5000;
      s.on('connection', (sock) => {
        sockets.add(sock);
        sock.once('close', () => sockets.delete(sock));
      });
      s.once('error', reject);
      s.listen(port, host, () => {
        s.off('error', reject);
        server = s;
        resolve((s.address() as AddressInfo).port);
      });
    });
  }

  /** The control listener: plain transport, requests marked so faults and stats pass them by. */
  function openControl(port: number, host: string): Promise<http.Server> {
    return new Promise((resolve, reject) => {
      const s = createHttpServer('nodelay', (req, res) => {
        markControl(req);
        app(req, res);
      });
      s.keepAliveTimeout = 5000;
      s.once('error', reject);
      s.listen(port, host, () => {
        s.off('error', reject);
        resolve(s);
      });
    });
  }

  function closeServer(): Promise<void> {
    const s = server;
    server = null;
    if (!s) return Promise.resolve();
    return new Promise((resolve) => {
      s.close(() => resolve());
      faults.releaseHanging();
      for (const sock of sockets) sock.destroy();
    });
  }

  const sim: Simulator = {
    app,
    state,
    faults,
    operator,
    stats,
    history,
    foreign,
    validationErrors,
    validating: spec !== undefined,
    transport,
    async listen(port: number, host = '127.0.0.1') {
      const actual = await openServer(port, host);
      bound = { port: actual, host };
      let ctl: number | undefined;
      if (controlPort !== undefined) {
        control = await openControl(controlPort, host);
        ctl = (control.address() as AddressInfo).port;
      }
      operator.start();
      // Started with the server, as the operator: it creates sessions only once there is a CFS to see them.
      if (foreignAtListen) foreign.configure(foreignAtListen);
      log.info('CFS simulator listening', {
        host,
        port: actual,
        control_port: ctl ?? null,
        transport,
        spec_validation: spec !== undefined,
      });
      return { port: actual, url: `http://${host}:${actual}/v3`, controlPort: ctl };
    },
    async startOutage(durationMs?: number) {
      if (!bound) throw new Error('simulator is not listening');
      if (outageTimer) clearTimeout(outageTimer);
      await closeServer();
      log.info('outage started: listening socket closed', { duration_ms: durationMs ?? null });
      if (durationMs !== undefined) {
        outageTimer = setTimeout(
          () => void sim.endOutage().catch((err) => log.error('outage end failed', { error: String(err) })),
          durationMs,
        );
      }
    },
    async endOutage() {
      if (outageTimer) clearTimeout(outageTimer);
      outageTimer = null;
      if (server || !bound || closed) return;
      await openServer(bound.port, bound.host);
      log.info('outage ended: listening again', { port: bound.port });
    },
    async close() {
      closed = true;
      if (outageTimer) clearTimeout(outageTimer);
      operator.stop();
      foreign.stop();
      faults.releaseHanging();
      faults.cancelTimers();
      await closeServer();
      const c = control;
      control = null;
      if (c) {
        c.closeAllConnections();
        await new Promise<void>((resolve) => c.close(() => resolve()));
      }
    },
  };
  return sim;
}
