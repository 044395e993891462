const pad = (n: number) => String(n).padStart(2, '0');

/** Unix seconds as local `yyyy-MM-dd HH:mm:ss` (the console's date format, spec 02 §5). */
export function formatDateTime(seconds: number): string {
  const d = new Date(seconds * 1000);
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;

/**
 * Local `yyyy-MM-dd HH:mm:ss` as Unix seconds, or null when the text is not such a date (an
 * impossible date such as 2025-02-30 is refused rather than rolled over).
 */
export function parseDateTime(text: string): number | null {
  const m = DATE_TIME.exec(text.trim());
  if (!m) return null;
  const [year, month, day, hour, minute, second] = m.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const d = new Date(year, month - 1, day, hour, minute, second);
  if (
    d.getFullYear() !== year ||
    d.getMonth() !== month - 1 ||
    d.getDate() !== day ||
    d.getHours() !== hour ||
    d.getMinutes() !== minute ||
    d.getSeconds() !== second
  ) {
    return null;
  }
  return Math.floor(d.getTime() / 1000);
}
