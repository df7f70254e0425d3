/** Which ids `GET /explain/{id}` and its command accept (no imports: the command loads nothing else). */

/** Longest id accepted in the path: far above any xname or CFS id, and a bound on what an answer repeats. */
export const EXPLAIN_ID_MAX_CHARS = 255;
/**
 * Characters no id is asked about: control characters, a slash (a URL path segment cannot carry it to CFS), and
 * markup or quotes (an answer repeats the id). Any other id CFS can hold is answered, one with a space or a comma
 * included: the lookup percent-encodes it, and the answer says why the batcher cannot batch it.
 */
const REFUSED = /[/\\<>"'`]/;
/** A control character (below space, or DEL): no id is typed with one. */
const hasControl = (id: string): boolean => [...id].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);

/** Why the path's id is refused (the id itself is never repeated in the answer), or null. */
export function idRejection(id: string): string | null {
  if (id.length === 0) return 'the id is empty';
  if (id.length > EXPLAIN_ID_MAX_CHARS) return `the id is longer than ${EXPLAIN_ID_MAX_CHARS} characters`;
  if (REFUSED.test(id) || hasControl(id))
    return 'the id may not hold control characters, "/", "\\", quotes or markup (<, >)';
  // A URL path resolves these segments away: the CFS lookup would ask for the component list or the API root.
  if (id === '.' || id === '..') return 'the id cannot be "." or ".."';
  return null;
}
