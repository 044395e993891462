import type { QueryKey } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { refundTask } from '@/api/tasks';
import { useConfirm } from '@/components/common/confirm-dialog';
import { useListAction } from '@/components/data-table/use-list-action';
import { useFormatQuota } from '@/lib/use-format-quota';

/**
 * An admin's manual refund from either task page: asks first, then POST /api/task/{id}/refund,
 * shows what came back and refetches the list. Spread `dialog` onto a `ConfirmDialog`.
 */
export function useRefund(queryKey: QueryKey) {
  const { t } = useTranslation('task');
  const formatQuota = useFormatQuota();
  const action = useListAction(queryKey);
  const confirm = useConfirm();
  const ask = (id: number, quota: number) =>
    confirm.ask({
      title: t('refund.title'),
      description: t('refund.description', { id, quota: formatQuota(quota) }),
      confirmLabel: t('refund.confirm'),
      onConfirm: () =>
        action.mutate(async () => {
          const done = await refundTask(id);
          return t('refund.done', { quota: formatQuota(done.quota) });
        }),
    });
  return { ask, dialog: confirm.dialog };
}
