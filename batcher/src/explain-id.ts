/** Which ids `GET /explain/{id}` and its command accept (no imports: the command loads nothing else). */

/** Longest id accepted in the path; xnames and CFS ids are far shorter. */
export const EXPLAIN_ID_MAX_CHARS = 64;
/**
 * Characters of xnames and CFS ids; a comma is let through because CFS accepts such ids and the answer says why the
 * batcher cannot batch them. Anything else (slashes, spaces, quotes, markup) cannot be an id the batcher holds.
 */
const ID_CHARS = /^[A-Za-z0-9_.,-]+$/;

/** Why the path's id is refused (the id itself is never repeated in the answer), or null. */
export function idRejection(id: string): string | null {
  if (id.length === 0) return 'the id is empty';
  if (id.length > EXPLAIN_ID_MAX_CHARS) return `the id is longer than ${EXPLAIN_ID_MAX_CHARS} characters`;
  if (!ID_CHARS.test(id)) return 'the id may hold only letters, digits, "_", "-", "." and ","';
  // A URL path resolves these segments away: the CFS lookup would ask for the component list or the API root.
  if (id === '.' || id === '..') return 'the id cannot be "." or ".."';
  return null;
}
