/**
 * "Why is this component not configured yet?" answered from the batcher's memory (pure: a state, an id and the
 * time in, an answer out). Every lookup is a map read (the book's owner registry, the rejections of the last
 * collect, the completions by batch): nothing walks the book, so an answer costs the same at 100k pending. Null
 * means the memory does not know the id; explain-cfs.ts then reads what CFS says about it.
 */
import { batchState } from './batch';
import { inSession, queued, uncertain } from './explain-batch';
import {
  heldAnswer,
  notBatchedRecord,
  type ExplainClock,
  type ExplainSource,
  type Explanation,
} from './explain-answer';

export * from './explain-answer';

/** The answer for an id the memory knows, or null (ask CFS). */
export function explainFromMemory(s: ExplainSource, id: string, c: ExplainClock): Explanation | null {
  const b = s.book.ownerOf(id);
  if (b !== undefined) {
    const st = batchState(b);
    if (st === 'active') return inSession(s, id, b, c);
    if (st === 'uncertain') return uncertain(s, id, b, c);
    return queued(s, id, b, c);
  }
  const foreign = s.foreign.holders.get(id);
  if (foreign !== undefined)
    return heldAnswer(
      id,
      {
        why: 'foreign_session',
        text: `it is in another batcher's active session ${foreign}, so this batcher puts it in no session until that one ends`,
        until: null,
        session_name: foreign,
      },
      c,
    );
  const rejected = s.rejectedComponents.get(id) ?? s.rejectedComponents.get(`schema:${id}`);
  if (rejected !== undefined) return notBatchedRecord(id, rejected, 'batcher', c);
  return null;
}
