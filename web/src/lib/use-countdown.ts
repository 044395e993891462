import { useCallback, useEffect, useState } from 'react';

/** Seconds a send-code or reset button stays disabled after a request (spec 01 §4, §9). */
export const RESEND_COUNTDOWN_SECONDS = 30;

/**
 * A one-second countdown: `start()` sets it to `seconds`, `remaining` counts down to 0, and
 * `active` is true meanwhile (disable the button then).
 */
export function useCountdown(seconds = RESEND_COUNTDOWN_SECONDS) {
  const [remaining, setRemaining] = useState(0);
  useEffect(() => {
    if (remaining <= 0) return;
    const timer = setTimeout(() => setRemaining((r) => r - 1), 1000);
    return () => clearTimeout(timer);
  }, [remaining]);
  const start = useCallback(() => setRemaining(seconds), [seconds]);
  return { remaining, active: remaining > 0, start };
}
