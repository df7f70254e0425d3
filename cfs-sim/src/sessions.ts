/** Session handlers' logic, independent of express. */
import { parseAge, parseEnum, parseLimit, parseTags, qstr, tagsMatch } from './params';
import { ProblemError } from './problem';
import { parseBody, sessionCreateInput } from './schemas';
import { pageKeys } from './sorted-keys';
import type { SimState } from './state';
import { localIsoSeconds, parseLocalIso } from './time';
import type { Session, SessionStatus, Succeeded } from './types';

const STATUSES: readonly SessionStatus[] = ['pending', 'running', 'complete'];
const SUCCEEDED: readonly Succeeded[] = ['none', 'true', 'false', 'unknown'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function sessionNotFound(name: string): ProblemError {
  return new ProblemError(404, 'Session not found.', `Session ${name} could not be found`);
}

/** dynamic/repo take no groups; spec/image need groups; image members must be IMS ids (UUIDs). */
export function checkTargetGroups(
  target: { definition?: string; groups?: Array<{ name: string; members: string[] }> | null } | undefined,
): string | null {
  const definition = target?.definition ?? 'dynamic';
  const groups = target?.groups ?? [];
  if ((definition === 'dynamic' || definition === 'repo') && groups.length > 0) {
    return `Target groups are not valid for the '${definition}' target definition`;
  }
  if ((definition === 'spec' || definition === 'image') && groups.length === 0) {
    return `Target groups are required for the '${definition}' target definition`;
  }
  if (definition === 'image') {
    const bad = groups.flatMap((g) => g.members).find((m) => !UUID.test(m));
    if (bad !== undefined) return `Image target member '${bad}' is not a valid IMS image id`;
  }
  return null;
}

export function createSession(state: SimState, body: unknown, nowMs: number): Session {
  const input = parseBody(sessionCreateInput, body);
  if (state.sessions.has(input.name)) {
    throw new ProblemError(409, 'Conflicting session name', `A session with the name ${input.name} already exists`);
  }
  if (!input.configuration_name.startsWith('debug_') && !state.configurations.has(input.configuration_name)) {
    throw new ProblemError(400, 'Invalid configuration', `No configurations exist named ${input.configuration_name}`);
  }
  const targetError = checkTargetGroups(input.target);
  if (targetError) throw new ProblemError(400, 'Invalid target', targetError);
  const opts = state.effectiveOptions();
  const session: Session = {
    name: input.name,
    configuration: { name: input.configuration_name, limit: input.configuration_limit ?? '' },
    ansible: {
      config: input.ansible_config ?? String(opts.default_ansible_config),
      limit: input.ansible_limit ?? '',
      verbosity: input.ansible_verbosity ?? 0,
      passthrough: input.ansible_passthrough ?? '',
    },
    target: {
      definition: input.target?.definition ?? 'dynamic',
      groups: input.target?.groups ?? [],
      image_map: input.target?.image_map ?? [],
    },
    status: { artifacts: [], session: { start_time: localIsoSeconds(nowMs), status: 'pending', succeeded: 'none' } },
    tags: input.tags ?? {},
    debug_on_failure: input.debug_on_failure ?? false,
  };
  state.putSession(session);
  return session;
}

export function sessionView(state: SimState, s: Session): Session {
  if (state.effectiveOptions().include_ara_links === true) return { ...s, logs: `ara.cmn.site/?label=${s.name}` };
  return s;
}

export interface SessionQuery {
  age: string | null;
  min_age: string | null;
  max_age: string | null;
  status: SessionStatus | '';
  name_contains: string;
  succeeded: Succeeded | '';
  tags: string;
  limit: number;
  after_id: string;
}

function sessionMatcher(q: Omit<SessionQuery, 'limit' | 'after_id'>, nowMs: number) {
  // `age` is the legacy spelling of min_age.
  const minAge = parseAge(q.min_age ?? q.age ?? undefined, 'min_age');
  const maxAge = parseAge(q.max_age ?? undefined, 'max_age');
  const tags = parseTags(q.tags);
  return (s: Session): boolean => {
    if (q.status !== '' && s.status.session.status !== q.status) return false;
    if (q.succeeded !== '' && s.status.session.succeeded !== q.succeeded) return false;
    if (q.name_contains !== '' && !s.name.includes(q.name_contains)) return false;
    if (!tagsMatch(s.tags, tags)) return false;
    if (minAge !== undefined || maxAge !== undefined) {
      const started = parseLocalIso(s.status.session.start_time);
      if (minAge !== undefined && !(started <= nowMs - minAge)) return false;
      if (maxAge !== undefined && !(started >= nowMs - maxAge)) return false;
    }
    return true;
  };
}

function parseSessionFilters(q: Record<string, unknown>, defaultStatus: SessionStatus | '' = '') {
  const status = qstr(q, 'status');
  return {
    age: qstr(q, 'age') || null,
    min_age: qstr(q, 'min_age') || null,
    max_age: qstr(q, 'max_age') || null,
    status: status === undefined ? defaultStatus : parseEnum(status, STATUSES, 'status'),
    name_contains: qstr(q, 'name_contains') ?? '',
    succeeded: parseEnum(qstr(q, 'succeeded'), SUCCEEDED, 'succeeded'),
    tags: qstr(q, 'tags') ?? '',
  };
}

export function listSessions(
  state: SimState,
  rawQuery: Record<string, unknown>,
  nowMs: number,
): { sessions: Session[]; next: SessionQuery | null } {
  const size = state.effectiveOptions().default_page_size;
  const q: SessionQuery = {
    ...parseSessionFilters(rawQuery),
    limit: parseLimit(qstr(rawQuery, 'limit'), typeof size === 'number' && size >= 1 ? size : 1000),
    after_id: qstr(rawQuery, 'after_id') ?? '',
  };
  const match = sessionMatcher(q, nowMs);
  const page = pageKeys(state.sessionKeys.values(), q.after_id, q.limit, (name) => {
    const s = state.sessions.get(name)!;
    return match(s) ? sessionView(state, s) : undefined;
  });
  return { sessions: page.items, next: page.nextAfter === null ? null : { ...q, after_id: page.nextAfter } };
}

/** Bulk DELETE (TTL cleanup): default status=complete. Returns the deleted names. */
export function deleteSessions(state: SimState, rawQuery: Record<string, unknown>, nowMs: number): string[] {
  const match = sessionMatcher(parseSessionFilters(rawQuery, 'complete'), nowMs);
  const names = state.sessionKeys.values().filter((n) => match(state.sessions.get(n)!));
  for (const n of names) state.deleteSession(n);
  return names;
}
