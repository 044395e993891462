import { useMutation, useQueryClient } from '@tanstack/react-query';
import { RotateCcw } from 'lucide-react';
import { useTranslation } from 'react-i18next';

import { resetModelRatios } from '@/api/options';
import { ConfirmDialog, useConfirm } from '@/components/common/confirm-dialog';
import { Button } from '@/components/ui/button';
import { CardContent } from '@/components/ui/card';
import { toast } from '@/stores/toasts';

/**
 * 重置模型倍率 (root): after a confirmation, POST /api/option/rest_model_ratio drops every price
 * override and re-seeds the component price tables (audio, tool calls, tiers) so the built-in
 * tables apply again; the price options and pricing are reloaded.
 */
export function ResetRatios() {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const confirm = useConfirm();
  const reset = useMutation({
    mutationFn: resetModelRatios,
    onSuccess: () => {
      toast.success(t('resetRatios.done'));
      void queryClient.invalidateQueries({ queryKey: ['options'] });
      void queryClient.invalidateQueries({ queryKey: ['pricing'] });
    },
  });
  return (
    <CardContent className="settings__tool">
      <Button
        type="button"
        variant="danger"
        disabled={reset.isPending}
        onClick={() =>
          confirm.ask({
            title: t('resetRatios.title'),
            description: t('resetRatios.confirm'),
            onConfirm: () => reset.mutate(),
          })
        }
      >
        <RotateCcw aria-hidden />
        {t('resetRatios.button')}
      </Button>
      <ConfirmDialog {...confirm.dialog} />
    </CardContent>
  );
}
