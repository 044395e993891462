import { CircleAlert, CircleCheck, Info, X } from 'lucide-react';
import { Toast } from 'radix-ui';
import { useTranslation } from 'react-i18next';

import { useToasts } from '@/stores/toasts';

import './toaster.css';

const icons = { success: CircleCheck, error: CircleAlert, info: Info };

/** Renders the toast store with radix Toast; mount once near the root. */
export function Toaster() {
  const { t } = useTranslation();
  const toasts = useToasts((s) => s.toasts);
  const dismiss = useToasts((s) => s.dismiss);
  return (
    <Toast.Provider swipeDirection="right" duration={4000}>
      {toasts.map((item) => {
        const Icon = icons[item.tone];
        return (
          <Toast.Root
            key={item.id}
            className="ui-toast"
            data-tone={item.tone}
            type={item.tone === 'error' ? 'foreground' : 'background'}
            onOpenChange={(open) => {
              if (!open) dismiss(item.id);
            }}
          >
            <Icon className="ui-toast__icon" aria-hidden />
            <Toast.Description className="ui-toast__text">{item.text}</Toast.Description>
            <Toast.Close className="ui-toast__close" aria-label={t('toast.close')}>
              <X aria-hidden />
            </Toast.Close>
          </Toast.Root>
        );
      })}
      <Toast.Viewport className="ui-toast-viewport" />
    </Toast.Provider>
  );
}
