/**
 * One supervised "container" of the local pod: a child process driven by the pure kubelet state machine in
 * prober.ts. This module is the I/O edge: it spawns, probes over HTTP, and sends signals.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import http from 'node:http';
import { initialState, step, type KubeletAction, type KubeletEvent, type KubeletState } from './prober';
import { type ContainerProbes, type ProbeKind, type ProbeSpec } from './probe-spec';

export interface ContainerOptions {
  name: string;
  command: string;
  args: string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  probes: ContainerProbes;
  /** Maps a port written in the manifest to the port the local process really listens on. */
  mapPort: (port: number) => number;
  logFile: string;
  /** Lifecycle messages (start, probe failures, kills, exits). */
  onMessage: (container: string, message: string) => void;
  now?: () => number;
}

export interface ProbeOutcome {
  ok: boolean;
  detail: string;
}

/** An HTTP probe as the kubelet does it: 200-399 is success; timeouts and connection errors are failures. */
export function httpProbe(host: string, port: number, path: string, timeoutMs: number): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (o: ProbeOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(o);
    };
    const req = http.get(
      { host, port, path, headers: { 'User-Agent': 'kube-probe/local-pod', Accept: '*/*' } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => {
          if (chunks.length < 16) chunks.push(c);
        });
        res.on('end', () => {
          const code = res.statusCode ?? 0;
          const body = Buffer.concat(chunks).toString('utf8').slice(0, 300).replace(/\s+/g, ' ').trim();
          done({ ok: code >= 200 && code < 400, detail: `HTTP ${code}${body ? ` ${body}` : ''}` });
        });
        res.on('error', (err) => done({ ok: false, detail: err.message }));
      },
    );
    const timer = setTimeout(() => {
      req.destroy();
      done({ ok: false, detail: `timeout after ${timeoutMs} ms` });
    }, timeoutMs);
    req.on('error', (err) => done({ ok: false, detail: (err as NodeJS.ErrnoException).code ?? err.message }));
  });
}

export class SupervisedContainer {
  private state: KubeletState;
  private child: ChildProcess | null = null;
  private readonly log: WriteStream;
  private readonly now: () => number;
  private exitWaiters: Array<() => void> = [];

  constructor(private readonly opts: ContainerOptions) {
    this.now = opts.now ?? Date.now;
    this.state = initialState(this.now());
    // a run starts its log afresh (a grep finds this pod's lines only); the container's restarts within the run
    // share the one stream, so every instance of the run is in it
    this.log = createWriteStream(opts.logFile, { flags: 'w' });
  }

  get name(): string {
    return this.opts.name;
  }

  get pid(): number | null {
    return this.child?.pid ?? null;
  }

  get snapshot(): Readonly<KubeletState> {
    return this.state;
  }

  /** Advances the clock; call it often (the local pod does every 100 ms). */
  tick(): void {
    this.dispatch({ type: 'tick', nowMs: this.now() });
  }

  /** SIGTERM, then SIGKILL after the pod's grace period; resolves once the process is gone. */
  stop(): Promise<void> {
    this.dispatch({ type: 'stop', nowMs: this.now() });
    if (this.state.phase === 'stopped') return Promise.resolve();
    return new Promise((resolve) => this.exitWaiters.push(resolve));
  }

  closeLog(): void {
    this.log.end();
  }

  private dispatch(ev: KubeletEvent): void {
    const { state, actions } = step(this.state, this.opts.probes, ev);
    this.state = state;
    for (const a of actions) this.perform(a);
    if (state.phase === 'stopped' && this.exitWaiters.length > 0) {
      const waiters = this.exitWaiters;
      this.exitWaiters = [];
      for (const w of waiters) w();
    }
  }

  private say(message: string): void {
    this.opts.onMessage(this.opts.name, message);
    this.log.write(`--- local-pod ${new Date(this.now()).toISOString()} ${message}\n`);
  }

  private perform(a: KubeletAction): void {
    switch (a.type) {
      case 'start':
        this.spawnChild();
        break;
      case 'probe':
        this.runProbe(a.probe, a.spec, a.generation);
        break;
      case 'term':
        this.say(`${a.reason}: sending SIGTERM (SIGKILL in ${a.graceSeconds} s)`);
        this.signal('SIGTERM');
        break;
      case 'kill':
        this.say(`${a.reason}: sending SIGKILL`);
        this.signal('SIGKILL');
        break;
      case 'log':
        this.say(a.message);
        break;
    }
  }

  private spawnChild(): void {
    const child = spawn(this.opts.command, this.opts.args, {
      cwd: this.opts.cwd,
      env: this.opts.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout?.pipe(this.log, { end: false });
    child.stderr?.pipe(this.log, { end: false });
    const restarts = this.state.restarts;
    child.once('spawn', () => this.say(`started pid ${child.pid}${restarts > 0 ? ` (restart #${restarts})` : ''}`));
    let reported = false;
    const exited = (code: number | null, signal: NodeJS.Signals | null) => {
      if (reported) return;
      reported = true;
      if (this.child === child) this.child = null;
      this.dispatch({ type: 'exited', nowMs: this.now(), code, signal });
    };
    child.once('exit', exited);
    child.once('error', (err) => {
      this.say(`cannot start ${this.opts.command}: ${err.message}`);
      exited(127, null);
    });
  }

  private signal(sig: NodeJS.Signals): void {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    try {
      child.kill(sig);
    } catch (err) {
      this.say(`cannot send ${sig}: ${(err as Error).message}`);
    }
  }

  private runProbe(probe: ProbeKind, spec: ProbeSpec, generation: number): void {
    const port = this.opts.mapPort(spec.port);
    void httpProbe('127.0.0.1', port, spec.path, spec.timeoutSeconds * 1000).then((o) => {
      this.dispatch({
        type: 'probe',
        nowMs: this.now(),
        probe,
        generation,
        ok: o.ok,
        detail: `${spec.path} ${o.detail}`,
      });
    });
  }
}
