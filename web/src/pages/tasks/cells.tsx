import { useTranslation } from 'react-i18next';

import { Money } from '@/components/common/money';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';

import { actionKey, slowDrawing, statusKey, statusTone, submitCodes } from './constants';

/** A status with the spec's label and colour ('' is "submitting"). */
export function StatusBadge({ status }: { status: string }) {
  const { t } = useTranslation('task');
  const key = statusKey(status);
  return (
    <Badge tone={key === 'submitting' ? 'neutral' : statusTone[key]} data-status={status}>
      {t(`status.${key}`)}
    </Badge>
  );
}

/** An action's label (the raw action when it has none). */
export function ActionBadge({ action }: { action: string }) {
  const { t } = useTranslation('task');
  const key = actionKey(action);
  return <Badge tone="blue">{key ? t(`action.${key}`) : action || t('action.unknown')}</Badge>;
}

/** The submit result code's label; the stored code is kept in the title. */
export function CodeBadge({ code }: { code: number }) {
  const { t } = useTranslation('task');
  const known = submitCodes.find((c) => c === code);
  const tone = code === 1 ? 'green' : code === 21 || code === 22 ? 'yellow' : 'neutral';
  return (
    <Badge tone={tone} title={String(code)} data-code={code}>
      {known === undefined ? t('code.unknown') : t(`code.${known}`)}
    </Badge>
  );
}

/** Seconds taken, red above 60 s on the drawing log. */
export function Duration({ seconds, drawing }: { seconds: number; drawing: boolean }) {
  const { t } = useTranslation('task');
  if (seconds <= 0) return null;
  const slow = drawing && slowDrawing(seconds);
  return (
    <Badge tone={slow ? 'red' : 'green'} data-slow={slow ? '' : undefined}>
      {t('cell.seconds', { seconds })}
    </Badge>
  );
}

/** A long text cut to one line, whole in its title. */
export function LongText({ text }: { text: string }) {
  const { t } = useTranslation('task');
  if (!text) return <span className="tasks__none">{t('cell.none')}</span>;
  return (
    <span className="tasks__text" title={text}>
      {text}
    </span>
  );
}

/** The admin's refund button: off for a task refunded before or one that cost nothing. */
export function RefundButton({
  refunded,
  quota,
  onRefund,
}: {
  refunded: boolean;
  quota: number;
  onRefund: () => void;
}) {
  const { t } = useTranslation('task');
  if (refunded) return <Badge tone="neutral">{t('cell.refunded')}</Badge>;
  return (
    <Button size="sm" variant="secondary" disabled={quota <= 0} onClick={onRefund}>
      {t('refund.button')}
    </Button>
  );
}

/** The cells every task row ends with: the failure reason, the cost and, for admins, the refund. */
export function TaskRowEnd({
  task,
  admin,
  onRefund,
}: {
  task: { fail_reason: string; quota: number; refunded: boolean };
  admin: boolean;
  onRefund: () => void;
}) {
  return (
    <>
      <td className={task.fail_reason ? 'tasks__fail' : undefined}>
        <LongText text={task.fail_reason} />
      </td>
      <td>
        <Money quota={task.quota} />
      </td>
      {admin ? (
        <td>
          <RefundButton refunded={task.refunded} quota={task.quota} onRefund={onRefund} />
        </td>
      ) : null}
    </>
  );
}
