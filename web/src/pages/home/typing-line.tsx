import { useEffect, useState } from 'react';

/** Milliseconds per typed character, and the pause on a finished line. */
const TYPE_MS = 90;
const HOLD_MS = 1_600;

/** Types each line of the list in turn, then starts over (the home page's typing list). */
export function TypingLine({ lines, label }: { lines: string[]; label: string }) {
  const [index, setIndex] = useState(0);
  const [length, setLength] = useState(0);
  const line = lines[index % Math.max(lines.length, 1)] ?? '';
  useEffect(() => {
    if (lines.length === 0) return undefined;
    const done = length >= line.length;
    const timer = setTimeout(
      () => {
        if (done) {
          setIndex((i) => (i + 1) % lines.length);
          setLength(0);
        } else {
          setLength((n) => n + 1);
        }
      },
      done ? HOLD_MS : TYPE_MS,
    );
    return () => clearTimeout(timer);
  }, [length, line, lines.length]);
  if (lines.length === 0) return null;
  return (
    <p className="home__typing" aria-label={`${label}: ${lines.join(', ')}`}>
      <span aria-hidden>{line.slice(0, length)}</span>
      <span className="home__caret" aria-hidden />
    </p>
  );
}
