import { useEffect, useRef } from 'react';

import type { TelegramFields } from '@/api/oauth';

import './telegram-login.css';

const SCRIPT_URL = 'https://telegram.org/js/telegram-widget.js?22';

declare global {
  interface Window {
    [callback: `onTelegramAuth${number}`]: ((user: TelegramFields) => void) | undefined;
  }
}

let nextCallback = 1;

/**
 * The Telegram login widget for `botName` (the bot's domain must be this site's, set with
 * BotFather's /setdomain). Telegram's script draws the button; its fields go to `onAuth`, which
 * hands them to the server to check the hash.
 */
export function TelegramLogin({
  botName,
  onAuth,
}: {
  botName: string;
  onAuth: (fields: TelegramFields) => void;
}) {
  const container = useRef<HTMLDivElement>(null);
  const callback = useRef(onAuth);
  useEffect(() => {
    callback.current = onAuth;
  });
  useEffect(() => {
    const host = container.current;
    if (!host || !botName) return;
    const name = `onTelegramAuth${nextCallback++}` as const;
    window[name] = (user) => callback.current(user);
    const script = document.createElement('script');
    script.src = SCRIPT_URL;
    script.async = true;
    script.dataset.telegramLogin = botName;
    script.dataset.size = 'medium';
    script.dataset.requestAccess = 'write';
    script.dataset.onauth = `${name}(user)`;
    host.appendChild(script);
    return () => {
      window[name] = undefined;
      host.replaceChildren();
    };
  }, [botName]);
  return <div ref={container} className="telegram-login" />;
}
