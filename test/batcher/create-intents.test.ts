/** batcher/src/rules/create-intents.ts: what a failed POST proves, a session's actual members, the intents file format. */
import { CfsError } from '@cfs-batcher/shared';
import {
  createOutcome,
  parseIntents,
  serializeIntents,
  sessionMembers,
  uncertainCreating,
  type CreateIntent,
} from '@cfs-batcher/batcher';

const http = (status: number) => new CfsError('http', `HTTP ${status}`, 'POST', 'u', '/v3/sessions', status);

describe('createOutcome', () => {
  it.each([
    [http(409), 'exists'],
    [http(400), 'not_created'],
    [http(403), 'not_created'],
    [http(422), 'not_created'],
    [http(404), 'uncertain'],
    [http(408), 'uncertain'],
    [http(500), 'uncertain'],
    [http(502), 'uncertain'],
    [new CfsError('timeout', 't', 'POST', 'u', '/v3/sessions'), 'uncertain'],
    [new CfsError('unreachable', 'ECONNRESET', 'POST', 'u', '/v3/sessions'), 'uncertain'],
    [
      new CfsError('unreachable', 'ECONNREFUSED', 'POST', 'u', '/v3/sessions', undefined, undefined, true),
      'not_created',
    ],
    [new CfsError('invalid-response', 'a 201 that is not a session', 'POST', 'u', '/v3/sessions', 200), 'uncertain'],
  ])('%s -> %s', (err, want) => {
    expect(createOutcome(err)).toBe(want);
  });
});

describe('sessionMembers', () => {
  it('reads the ansible limit, trimmed and deduplicated; null when it says nothing', () => {
    expect(sessionMembers({ ansible: { limit: 'x1, x2,x1,' } })).toEqual(['x1', 'x2']);
    expect(sessionMembers({ ansible: { limit: '' } })).toBeNull();
    expect(sessionMembers({ ansible: { limit: null } })).toBeNull();
    expect(sessionMembers({})).toBeNull();
  });
});

describe('intents file', () => {
  const intent: CreateIntent = {
    name: 'batcher-1',
    at_ms: 5,
    key: 'cfg:0:',
    configuration_name: 'cfg',
    configuration_limit: '0',
    members: ['x1', 'x2'],
    body: { name: 'batcher-1', configuration_name: 'cfg', ansible_limit: 'x1,x2' },
  };

  it('round-trips', () => {
    expect(parseIntents(serializeIntents([intent], 9))).toEqual({ ok: true, intents: [intent] });
    expect(parseIntents(serializeIntents([], 9))).toEqual({ ok: true, intents: [] });
  });

  it.each([
    ['', /empty/],
    ['{"format":1,"intents":[', /not JSON/],
    ['{"format":2,"intents":[]}', /format 1/],
    ['{"format":1,"intents":{}}', /not a list/],
    ['{"format":1,"intents":[{"name":"b"}]}', /at_ms/],
    [
      '{"format":1,"intents":[{"name":"b","at_ms":1,"key":"k","configuration_name":"c","configuration_limit":"","members":[1],"body":{}}]}',
      /members/,
    ],
  ])('says what is wrong with %j', (text, why) => {
    const r = parseIntents(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toMatch(why);
  });
});

describe('uncertainCreating (for the heartbeat)', () => {
  it('uncertain while creates are held back or outcomes are unknown, else null', () => {
    expect(uncertainCreating(0, 100, 50)?.reason).toMatch(/unreadable/);
    expect(uncertainCreating(2, 0, 50)).toEqual({
      state: 'uncertain',
      reason: '2 session creates with unknown outcome; their components stay busy',
    });
    expect(uncertainCreating(0, 100, 100)).toBeNull();
  });
});
