import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { useStatus } from '@/api/status';
import { drawingsQueryOptions } from '@/api/tasks';
import type { DrawingTask, TaskFilter } from '@/api/tasks';
import { isAdmin } from '@/api/user';
import { ConfirmDialog } from '@/components/common/confirm-dialog';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Alert } from '@/components/ui/alert';
import { Badge } from '@/components/ui/badge';
import { Table } from '@/components/ui/table';
import { formatTimestamp } from '@/lib/time';
import { useSession } from '@/stores/session';

import { ActionBadge, CodeBadge, Duration, LongText, StatusBadge, TaskRowEnd } from './cells';
import { defaultDrawingWindow, duration } from './constants';
import { TaskFilters } from './task-filters';
import { useRefund } from './use-refund';

import '@/components/data-table/data-table.css';
import './tasks.css';

const initialFilter = (): TaskFilter => ({ id: '', channel: '', ...defaultDrawingWindow() });

/** Milliseconds (as the drawing list gives them) to whole seconds. */
const secondsOf = (ms: number) => Math.floor(ms / 1000);

function DrawingTable({
  tasks,
  admin,
  onRefund,
}: {
  tasks: DrawingTask[];
  admin: boolean;
  onRefund: (task: DrawingTask) => void;
}) {
  const { t } = useTranslation('task');
  const columns = [
    'submitTime',
    'duration',
    ...(admin ? (['channel', 'user'] as const) : []),
    'action',
    'taskId',
    'code',
    'status',
    'progress',
    'image',
    'prompt',
    'promptEn',
    'failReason',
    'cost',
    ...(admin ? (['operate'] as const) : []),
  ] as const;
  return (
    <Table className="tasks__table">
      <thead>
        <tr>
          {columns.map((c) => (
            <th key={c}>{t(`column.${c}`)}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {tasks.length === 0 ? (
          <tr>
            <td colSpan={columns.length}>{t('drawing.empty')}</td>
          </tr>
        ) : null}
        {tasks.map((task) => (
          <tr key={task.id} aria-label={`task ${task.mj_id}`} data-status={task.status}>
            <td>{formatTimestamp(secondsOf(task.submit_time))}</td>
            <td>
              <Duration
                seconds={duration(secondsOf(task.submit_time), secondsOf(task.finish_time))}
                drawing
              />
            </td>
            {admin ? (
              <>
                <td>
                  {task.channel_id > 0 ? <Badge tone="neutral">{task.channel_id}</Badge> : null}
                </td>
                <td>{task.username ?? task.user_id}</td>
              </>
            ) : null}
            <td>
              <ActionBadge action={task.action} />
            </td>
            <td>{task.mj_id}</td>
            <td>
              <CodeBadge code={task.code} />
            </td>
            <td>
              <StatusBadge status={task.status} />
            </td>
            <td>{task.progress}</td>
            <td>
              {task.image_url ? (
                <a href={task.image_url} target="_blank" rel="noopener noreferrer">
                  <img
                    className="tasks__image"
                    src={task.image_url}
                    alt={t('cell.imageOf', { id: task.mj_id })}
                    loading="lazy"
                  />
                </a>
              ) : (
                t('cell.none')
              )}
            </td>
            <td>
              <LongText text={task.prompt} />
            </td>
            <td>
              <LongText text={task.prompt_en} />
            </td>
            <TaskRowEnd task={task} admin={admin} onRefund={() => onRefund(task)} />
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** /midjourney (绘图日志): the drawing tasks; admins see every user's, with channels. */
export function DrawingPage() {
  const { t } = useTranslation('task');
  const admin = isAdmin(useSession((s) => s.user));
  const status = useStatus();
  const list = useListPage<TaskFilter>(initialFilter);
  const tasks = useQuery(drawingsQueryOptions(list.params, admin));
  const refund = useRefund(['drawings']);
  return (
    <>
      <PageHeader title={t('drawing.title')} description={t('drawing.note')} />
      {admin && !status.mj_notify_enabled ? (
        <Alert tone="info" className="tasks__banner">
          {t('drawing.notifyBanner')}
        </Alert>
      ) : null}
      <TaskFilters
        filter={list.filter}
        admin={admin}
        idLabel={t('drawing.idFilter')}
        initial={initialFilter}
        onSearch={list.apply}
      />
      <ListBody query={tasks} loading={t('drawing.loading')} failed={t('drawing.loadFailed')}>
        {(data) => (
          <DrawingTable
            tasks={data.items}
            admin={admin}
            onRefund={(task) => refund.ask(task.id, task.quota)}
          />
        )}
      </ListBody>
      <Pager {...list.pager(tasks.data?.total ?? 0)} />
      <ConfirmDialog {...refund.dialog} />
    </>
  );
}
