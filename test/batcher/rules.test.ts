import fc from 'fast-check';
import {
  BatchBook,
  CREATE_FAILURE_REASONS,
  DEFAULT_OPTIONS,
  RECENT_SESSIONS_SIZE,
  batchKeyOf,
  certainlyNotCreated,
  cfsErrorLine,
  createFailureReason,
  decideCompletion,
  initialBackoff,
  isBackingOff,
  isReadyToSend,
  parseOptions,
  planRebuild,
  recordCompletions,
  sessionOutcome,
  sharedTags,
  toBatchComponent,
  type BatchComponent,
} from '@cfs-batcher/batcher';
import { CfsError, type CfsSession } from '@cfs-batcher/shared';
import { COMMIT_B, layer, rawComponent } from './fixtures';

function comp(id: string, over: Parameters<typeof rawComponent>[1] = {}): BatchComponent {
  const r = toBatchComponent(rawComponent(id, over));
  if (!r.ok) throw new Error(r.reason);
  return r.component;
}

describe('options', () => {
  it('uses the defaults and reports every missing option', () => {
    const p = parseOptions({});
    expect(p.options).toEqual(DEFAULT_OPTIONS);
    expect(Object.keys(p.missing).sort()).toEqual(Object.keys(DEFAULT_OPTIONS).sort());
    expect(p.problems).toEqual([]);
  });

  it('takes valid values and lists only the absent keys as missing', () => {
    const p = parseOptions({ batch_size: 5, batch_window: 0, batcher_disable: true, logging_level: 'debug' });
    expect(p.options).toMatchObject({ batch_size: 5, batch_window: 0, batcher_disable: true, logging_level: 'DEBUG' });
    expect(p.missing).not.toHaveProperty('batch_size');
    expect(p.missing).toHaveProperty('batcher_check_interval', 10);
  });

  it.each([
    ['batch_size', 0],
    ['batch_size', '25'],
    ['batch_size', 2.5],
    ['batcher_check_interval', 0],
    ['batch_window', -1],
    ['default_batcher_retry_policy', -1],
    ['batcher_max_backoff', null],
    ['batcher_disable', 'true'],
    ['batcher_pending_timeout', 0],
    ['logging_level', 'TRACE'],
  ])('rejects %s=%j and keeps the value in force', (name, value) => {
    const previous = { ...DEFAULT_OPTIONS, batch_size: 7, batcher_check_interval: 3 };
    const p = parseOptions({ ...previous, [name]: value }, previous);
    expect(p.problems).toHaveLength(1);
    expect(p.problems[0]!.option).toBe(name);
    expect(p.problems[0]!.message).toContain(name);
    expect(p.options).toEqual(previous);
    expect(p.missing).toEqual({});
  });

  it('keeps everything when the answer is not an object', () => {
    const previous = { ...DEFAULT_OPTIONS, batch_size: 9 };
    const p = parseOptions(null, previous);
    expect(p.options).toEqual(previous);
    expect(p.problems).toHaveLength(1);
  });
});

describe('component', () => {
  it('computes limit, latest status, key and pending layers', () => {
    const c = comp('x1', {
      desired_state: [layer(0, 'configured'), layer(1, 'pending'), layer(2, 'pending')] as never,
      state: [
        { clone_url: 'u', playbook: 'p', commit: 'c', status: 'applied', last_updated: '2024-01-01T00:00:00Z' },
        { clone_url: 'u2', playbook: 'p', commit: 'c', status: 'failed', last_updated: '2024-01-02T00:00:00Z' },
      ],
    });
    expect(c.configLimit).toBe('1,2');
    expect(c.latestStatus).toBe('failed');
    expect(c.latestTimestamp).toBe('2024-01-02T00:00:00Z');
    expect(c.batchKey).toBe(batchKeyOf('cfg', '1,2', 'failed'));
    expect(c.pendingLayers.map((l) => l.index)).toEqual([1, 2]);
  });

  it('changes its desired-state hash when a commit changes', () => {
    const a = comp('x1');
    const b = comp('x1', { desired_state: [layer(0, 'pending', { commit: COMMIT_B })] as never });
    expect(a.desiredStateHash).not.toBe(b.desiredStateHash);
  });

  it.each([
    ['missing desired_config', { desired_config: undefined }],
    ['missing or invalid error_count', { error_count: undefined }],
    ['desired_state[0] has no playbook', { desired_state: [layer(0, 'pending', { playbook: undefined })] }],
    ['desired_state[0] has no commit', { desired_state: [layer(0, 'pending', { commit: undefined })] }],
    ['missing desired_state (config_details)', { desired_state: undefined }],
    ['no pending layer', { desired_state: [layer(0, 'configured')] }],
  ])('rejects a record with %s', (reason, over) => {
    const r = toBatchComponent(rawComponent('bad', over));
    expect(r).toEqual({ ok: false, id: 'bad', reason });
  });
});

describe('batching', () => {
  it('sends a full batch at once and a partial one only after the window (strict >)', () => {
    const book = new BatchBook();
    book.add(comp('a'), 2, 1000);
    const [b] = book.all();
    expect(isReadyToSend(b!, 2, 60, 1000)).toBe(false);
    expect(isReadyToSend(b!, 2, 60, 61_000)).toBe(false);
    expect(isReadyToSend(b!, 2, 60, 61_001)).toBe(true);
    book.add(comp('b'), 2, 1000);
    expect(isReadyToSend(b!, 2, 60, 1000)).toBe(true);
  });

  it('keys batches by config, pending layers and latest status', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    book.add(comp('b', { desired_config: 'other' }), 25, 0);
    book.add(comp('c', { state: [{ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed' }] }), 25, 0);
    book.add(comp('d'), 25, 0);
    expect(book.all().map((b) => [...b.members.keys()].sort())).toEqual([['a', 'd'], ['b'], ['c']]);
  });

  it('never adds a member of an active batch elsewhere and moves a changed queued member', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    const [b] = book.all();
    expect(book.add(comp('a', { desired_config: 'new' }), 25, 0)).toBe('moved');
    expect(book.all()).toHaveLength(1);
    expect(book.all()[0]!.configName).toBe('new');
    expect(b!.members.size).toBe(0);
    const [n] = book.all();
    book.markActive(n!, 'batcher-x', 0);
    expect(book.add(comp('a'), 25, 0)).toBe('busy');
  });

  it('registers rebuilt members as busy', () => {
    const book = new BatchBook();
    book.addRebuilt('batcher-1', 'cfg', '0', new Map([['a', null]]), 0);
    expect(book.add(comp('a'), 25, 0)).toBe('busy');
    expect(book.all()).toHaveLength(1);
  });

  it('prunes queued members that are no longer pending', () => {
    const book = new BatchBook();
    book.add(comp('a'), 25, 0);
    book.add(comp('b'), 25, 0);
    expect(book.prune(new Set(['b']))).toEqual(['a']);
    expect(book.ownerOf('a')).toBeUndefined();
    expect([...book.all()[0]!.members.keys()]).toEqual(['b']);
  });

  it('shares only tags with equal values on every member', () => {
    expect(sharedTags([{ tags: { a: '1', b: '2' } }, { tags: { a: '1', b: '3' } }])).toEqual({ a: '1' });
    expect(sharedTags([{ tags: { a: '1' } }, { tags: {} }])).toBeUndefined();
    expect(sharedTags([])).toBeUndefined();
  });

  it('property: batches stay within batch_size, members share the key, no component is in two batches', () => {
    const arbComp = fc.record({
      id: fc.integer({ min: 0, max: 40 }).map((n) => `x${n}`),
      cfg: fc.constantFrom('c1', 'c2'),
      failed: fc.boolean(),
      tag: fc.constantFrom('t1', 't2', undefined),
    });
    fc.assert(
      fc.property(fc.array(arbComp, { maxLength: 120 }), fc.integer({ min: 1, max: 6 }), (items, size) => {
        const book = new BatchBook();
        for (const it of items) {
          book.add(
            comp(it.id, {
              desired_config: it.cfg,
              state: it.failed ? [{ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed' }] : [],
              tags: it.tag ? { k: it.tag } : {},
            }),
            size,
            0,
          );
        }
        const seen = new Set<string>();
        for (const b of book.all()) {
          expect(b.members.size).toBeGreaterThan(0);
          expect(b.members.size).toBeLessThanOrEqual(size);
          for (const [id, m] of b.members) {
            expect(m!.batchKey).toBe(b.key);
            expect(seen.has(id)).toBe(false);
            expect(book.ownerOf(id)).toBe(b);
            seen.add(id);
          }
          const tags = sharedTags(b.members.values()) ?? {};
          const members = [...b.members.values()];
          for (const [k, v] of Object.entries(tags)) for (const m of members) expect(m!.tags[k]).toBe(v);
          const allKeys = new Set(members.flatMap((m) => Object.keys(m!.tags)));
          for (const k of allKeys) {
            const everyEqual = members.every((m) => m!.tags[k] !== undefined && m!.tags[k] === members[0]!.tags[k]);
            expect(k in tags).toBe(everyEqual);
          }
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('backoff', () => {
  const fail = (n: number) => Array<boolean>(n).fill(false);

  it('halts after 20 failures: 60 s, doubling to the cap, and a success resumes', () => {
    let s = initialBackoff();
    let r = recordCompletions(s, fail(19), 0, 200);
    expect(r.event).toBeNull();
    r = recordCompletions(r.state, fail(1), 0, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 60 });
    s = r.state;
    expect(isBackingOff(s, 59_999)).toBe(true);
    expect(isBackingOff(s, 60_000)).toBe(false);
    expect(recordCompletions(s, fail(1), 30_000, 200).event).toBeNull(); // still within the halt
    r = recordCompletions(s, fail(1), 60_000, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 120 });
    r = recordCompletions(r.state, fail(1), 180_000, 200);
    expect(r.event).toEqual({ kind: 'halted', seconds: 200 });
    r = recordCompletions(r.state, [true], 190_000, 200);
    expect(r.event).toEqual({ kind: 'resumed' });
    expect(isBackingOff(r.state, 190_000)).toBe(false);
    expect(r.state.recent).toHaveLength(RECENT_SESSIONS_SIZE);
    // 19 earlier failures remain: 19 more failures are not enough, the 20th is
    expect(recordCompletions(r.state, fail(19), 200_000, 200).event).toBeNull();
    expect(recordCompletions(r.state, fail(20), 200_000, 200).event).toEqual({ kind: 'halted', seconds: 60 });
  });

  it('never halts when batcher_max_backoff is 0', () => {
    const r = recordCompletions(initialBackoff(), fail(25), 0, 0);
    expect(isBackingOff(r.state, 0)).toBe(false);
  });
});

describe('completion', () => {
  const ts = (t: string) => ({ clone_url: 'u', playbook: 'p', commit: 'c', status: 'failed', last_updated: t });

  it('marks still-pending layers skipped after success', () => {
    const start = comp('a', { desired_state: [layer(0, 'pending'), layer(1, 'pending')] as never });
    const d = decideCompletion('complete', 'batcher-s', new Map([['a', start]]), [start]);
    expect(d.actions).toHaveLength(1);
    const a = d.actions[0]!;
    expect(a.kind).toBe('skip');
    if (a.kind === 'skip') {
      expect(a.patches).toHaveLength(2);
      expect(a.patches[0]!.state_append).toMatchObject({ status: 'skipped', session_name: 'batcher-s' });
    }
  });

  it('increments error_count on the first pending layer after a failure Ansible did not record', () => {
    const start = comp('a', { error_count: 1, desired_state: [layer(0, 'pending'), layer(1, 'pending')] as never });
    const d = decideCompletion('failed', 'batcher-s', new Map([['a', start]]), [start]);
    expect(d.ansibleFailure).toBe(false);
    expect(d.actions[0]).toMatchObject({
      kind: 'fail',
      patch: { error_count: 2, state_append: { status: 'failed', clone_url: 'https://vcs/l0.git' } },
    });
  });

  it('does nothing when Ansible recorded a failure for a member', () => {
    const start = comp('a', { state: [ts('2024-01-01T00:00:00Z')] });
    const cur = comp('a', { state: [ts('2024-01-01T00:05:00Z')] });
    const d = decideCompletion('failed', 's', new Map([['a', start]]), [cur]);
    expect(d.ansibleFailure).toBe(true);
    expect(d.actions.map((a) => a.kind)).toEqual(['ansible-failure']);
  });

  it('leaves a member whose desired state changed, and ignores members no longer pending', () => {
    const start = comp('a');
    const changed = comp('a', { desired_state: [layer(0, 'pending', { commit: COMMIT_B })] as never });
    const done = toBatchComponent(rawComponent('b', { configuration_status: 'configured' }), false);
    const d = decideCompletion(
      'complete',
      's',
      new Map([
        ['a', start],
        ['b', start],
      ]),
      [changed, (done as { component: BatchComponent }).component],
    );
    expect(d.actions).toEqual([{ id: 'a', kind: 'changed' }]);
  });
});

describe('rebuild plan and session status', () => {
  const session = (name: string, status: string, limit: string | null, succeeded = 'none'): CfsSession => ({
    name,
    configuration: { name: 'cfg', limit: '0' },
    ansible: { limit },
    status: { session: { status, succeeded } },
  });

  it('adopts incomplete batcher- sessions only and reports empty limits', () => {
    const plan = planRebuild([
      session('batcher-1', 'running', 'a,b'),
      session('batcher-2', 'complete', 'c', 'true'),
      session('my-batcher-x', 'running', 'd'),
      session('batcher-3', 'pending', ''),
      session('batcher-4', 'pending', null),
    ]);
    expect(plan.targets).toEqual([
      { sessionName: 'batcher-1', configName: 'cfg', configLimit: '0', memberIds: ['a', 'b'] },
    ]);
    expect(plan.skipped.map((s) => s.name)).toEqual(['batcher-3', 'batcher-4']);
  });

  it.each([
    ['pending', 'none', 'pending'],
    ['running', 'none', 'running'],
    ['complete', 'true', 'complete'],
    ['complete', 'false', 'failed'],
    ['complete', 'unknown', 'failed'],
    ['running', 'false', 'failed'],
    ['weird', 'none', 'unknown'],
  ])('status %s succeeded %s -> %s', (status, succeeded, outcome) => {
    expect(sessionOutcome(session('batcher-1', status, 'a', succeeded))).toBe(outcome);
  });
});

describe('CFS error lines', () => {
  const err = (kind: ConstructorParameters<typeof CfsError>[0], message: string, status?: number, notSent = false) =>
    new CfsError(kind, message, 'POST', 'http://x/v3/sessions', '/v3/sessions', status, undefined, notSent);

  it('maps each kind to the original line', () => {
    const table: [CfsError, string][] = [
      [err('unreachable', 'cannot reach'), 'Unable to connect to CFS: cannot reach'],
      [err('timeout', 'timeout'), 'Unable to connect to CFS: timeout'],
      [err('http', '503 from CFS', 503), 'Unexpected response from CFS: 503 from CFS'],
      [
        err('invalid-response', 'Non-JSON response from CFS for GET'),
        'Non-JSON response from CFS: Non-JSON response from CFS for GET',
      ],
      [err('invalid-response', 'Unexpected response: null'), 'Unexpected response from CFS: Unexpected response: null'],
    ];
    for (const [e, line] of table) expect(cfsErrorLine(e)).toBe(line);
  });

  it('gives every kind of failed create its own reason: auth, not-found and other client errors apart from 400', () => {
    const table: [CfsError, string][] = [
      [err('http', 'bad configuration', 400), 'http_400'],
      [err('http', 'token expired', 401), 'http_auth'],
      [err('http', 'wrong tenant', 403), 'http_auth'],
      [err('http', 'no /v3 in CFS_API_URL', 404), 'http_404'],
      [err('http', 'name clash', 409), 'http_409'],
      [err('http', 'unprocessable', 422), 'http_4xx'],
      [err('http', 'too many requests', 429), 'http_4xx'],
      [err('http', 'Kafka down', 503), 'http_5xx'],
      [err('timeout', 'timeout'), 'timeout'],
      [err('unreachable', 'ECONNREFUSED'), 'unreachable'],
      [err('invalid-response', 'Non-JSON'), 'invalid'],
    ];
    expect(table.map(([e]) => createFailureReason(e))).toEqual(table.map(([, r]) => r));
    // every reason the rule gives is one the metric declares (and exports at 0), and each is reachable
    expect(new Set(table.map(([, r]) => r))).toEqual(new Set(CREATE_FAILURE_REASONS));
  });

  it('knows which failed POSTs certainly created nothing', () => {
    expect(certainlyNotCreated(err('http', '', 400))).toBe(true);
    expect(certainlyNotCreated(err('http', '', 409))).toBe(false);
    expect(certainlyNotCreated(err('http', '', 503))).toBe(false);
    expect(certainlyNotCreated(err('timeout', ''))).toBe(false);
    expect(certainlyNotCreated(err('unreachable', '', undefined, true))).toBe(true);
  });
});
