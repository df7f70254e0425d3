/** The two time formats the real server writes. */

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Component state last_updated: `%Y-%m-%dT%H:%M:%SZ` (UTC). */
export function utcStamp(ms: number): string {
  const d = new Date(ms);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(
    d.getUTCMinutes(),
  )}:${pad(d.getUTCSeconds())}Z`;
}

/** Session start/completion time: Python `datetime.now().isoformat(timespec='seconds')`, local time, no zone. */
export function localIsoSeconds(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(
    d.getSeconds(),
  )}`;
}

/** Parses a zone-less local ISO time back to epoch ms (NaN when unparseable). */
export function parseLocalIso(text: string | undefined): number {
  if (!text) return NaN;
  const m = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d):(\d\d)/.exec(text);
  if (!m) return Date.parse(text);
  return new Date(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!).getTime();
}
