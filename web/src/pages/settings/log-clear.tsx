import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Trash2 } from 'lucide-react';
import { useEffect, useRef, useState } from 'react';
import { useTranslation } from 'react-i18next';

import { localizedMessage } from '@/api/errors';
import { deleteLogsBefore, fetchDeleteProgress } from '@/api/options';
import { Button } from '@/components/ui/button';
import { CardContent } from '@/components/ui/card';
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogDescription,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';
import { Field } from '@/components/ui/field';
import { Input } from '@/components/ui/input';
import { formatTimestamp, fromLocalInput, toLocalInput } from '@/lib/time';
import { toast } from '@/stores/toasts';

/** How often a running deletion is polled, in ms. */
const POLL_MS = 1_000;
const PROGRESS_KEY = ['logs', 'delete-progress'] as const;

/** One calendar month before `now` (spec 02 §9: the default clearing time). */
export function oneMonthAgo(now: number = Date.now()): number {
  const d = new Date(now);
  d.setMonth(d.getMonth() - 1);
  return Math.floor(d.getTime() / 1000);
}

/**
 * Clearing old logs (the operation tab's logs section): pick a time, confirm, and watch the
 * background deletion (DELETE /api/log/, then GET /api/log/delete_progress) until it is done.
 */
export function LogClear() {
  const { t } = useTranslation('settings');
  const queryClient = useQueryClient();
  const [time, setTime] = useState(() => toLocalInput(oneMonthAgo()));
  const [confirming, setConfirming] = useState(false);
  /** Set while a deletion started here is running: its end is announced. */
  const mine = useRef(false);

  const progress = useQuery({
    queryKey: PROGRESS_KEY,
    queryFn: fetchDeleteProgress,
    meta: { silent: true },
    refetchInterval: (query) => (query.state.data?.running ? POLL_MS : false),
  });
  const job = progress.data;

  useEffect(() => {
    if (!job || job.running || !mine.current) return;
    mine.current = false;
    if (job.error) toast.error(t('logs.failed', { message: job.error }));
    else toast.success(t('logs.deleted', { count: job.deleted }));
    void queryClient.invalidateQueries({ queryKey: ['logs'] });
  }, [job, t, queryClient]);

  const clear = useMutation({
    mutationFn: deleteLogsBefore,
    meta: { silent: true },
    onSuccess: async (count) => {
      const now = await queryClient
        .fetchQuery({ queryKey: PROGRESS_KEY, queryFn: fetchDeleteProgress, staleTime: 0 })
        .catch(() => undefined);
      if (now?.running) {
        mine.current = true;
        return;
      }
      toast.success(t('logs.deleted', { count }));
      void queryClient.invalidateQueries({ queryKey: ['logs'] });
    },
    onError: (error) => toast.error(t('logs.failed', { message: localizedMessage(error) })),
  });

  const target = fromLocalInput(time);
  const start = () => {
    if (!target) {
      toast.error(t('logs.needTime'));
      return;
    }
    setConfirming(true);
  };
  const running = job?.running === true;

  return (
    <CardContent className="settings__log-clear">
      <div className="settings__log-clear-row">
        <Field id="log-clear-time" label={t('logs.time')} hint={t('logs.hint')}>
          <Input
            id="log-clear-time"
            type="datetime-local"
            value={time}
            onChange={(e) => setTime(e.target.value)}
          />
        </Field>
        <Button variant="danger" onClick={start} disabled={running || clear.isPending}>
          <Trash2 aria-hidden />
          {t('logs.clear')}
        </Button>
      </div>
      {running ? (
        <div className="settings__progress" role="status">
          <progress
            max={Math.max(job.total, 1)}
            value={job.deleted}
            aria-label={t('logs.progressLabel')}
          />
          <span>{t('logs.running', { deleted: job.deleted, total: job.total })}</span>
        </div>
      ) : job && job.finished_at > 0 ? (
        <p className="settings__last-job" role="status">
          {job.error
            ? t('logs.lastFailed', { message: job.error })
            : t('logs.last', {
                count: job.deleted,
                target: formatTimestamp(job.target_timestamp),
                finished: formatTimestamp(job.finished_at),
              })}
        </p>
      ) : null}
      <Dialog open={confirming} onOpenChange={setConfirming}>
        <DialogContent>
          <DialogHeader>
            <DialogTitle>{t('logs.confirmTitle')}</DialogTitle>
            <DialogDescription>
              {t('logs.confirm', { time: formatTimestamp(target) })}
            </DialogDescription>
          </DialogHeader>
          <DialogFooter>
            <DialogClose asChild>
              <Button variant="secondary">{t('logs.cancel')}</Button>
            </DialogClose>
            <Button
              variant="danger"
              onClick={() => {
                setConfirming(false);
                clear.mutate(target);
              }}
            >
              {t('logs.confirmButton')}
            </Button>
          </DialogFooter>
        </DialogContent>
      </Dialog>
    </CardContent>
  );
}
