import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';

import { tasksQueryOptions } from '@/api/tasks';
import type { MusicTask, TaskFilter } from '@/api/tasks';
import { isAdmin } from '@/api/user';
import { ConfirmDialog } from '@/components/common/confirm-dialog';
import { ListBody } from '@/components/data-table/list-body';
import { Pager } from '@/components/data-table/pager';
import { useListPage } from '@/components/data-table/use-list-page';
import { PageHeader } from '@/components/layout/page-header';
import { Badge } from '@/components/ui/badge';
import { Table } from '@/components/ui/table';
import { formatTimestamp } from '@/lib/time';
import { useSession } from '@/stores/session';

import { ActionBadge, Duration, StatusBadge, TaskRowEnd } from './cells';
import { defaultTaskWindow, duration } from './constants';
import { TaskFilters } from './task-filters';
import { useRefund } from './use-refund';

import '@/components/data-table/data-table.css';
import './tasks.css';

const initialFilter = (): TaskFilter => ({ id: '', channel: '', ...defaultTaskWindow() });

const platforms = ['suno', 'openai', 'midjourney'] as const;

/** A song's audio (with its cover) or a video's link; lyrics and the rest show nothing here. */
function Result({ task }: { task: MusicTask }) {
  const { t } = useTranslation('task');
  if (!task.result_url) return <span>{t('cell.none')}</span>;
  const audio = task.platform === 'suno';
  return (
    <div className="tasks__result">
      {task.image_url ? (
        <img className="tasks__image" src={task.image_url} alt={t('cell.song')} loading="lazy" />
      ) : null}
      {audio ? (
        <audio
          controls
          preload="none"
          src={task.result_url}
          aria-label={t('cell.audioOf', { id: task.task_id })}
        />
      ) : null}
      <a href={task.result_url} target="_blank" rel="noopener noreferrer">
        {t('cell.openResult')}
      </a>
    </div>
  );
}

function TaskTable({
  tasks,
  admin,
  onRefund,
}: {
  tasks: MusicTask[];
  admin: boolean;
  onRefund: (task: MusicTask) => void;
}) {
  const { t } = useTranslation('task');
  const columns = [
    'submitTime',
    'finishTime',
    'progress',
    'duration',
    ...(admin ? (['channel', 'user'] as const) : []),
    'platform',
    'action',
    'taskId',
    'status',
    'result',
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
            <td colSpan={columns.length}>{t('music.empty')}</td>
          </tr>
        ) : null}
        {tasks.map((task) => {
          const platform = platforms.find((p) => p === task.platform);
          return (
            <tr key={task.id} aria-label={`task ${task.task_id}`} data-status={task.status}>
              <td>{formatTimestamp(task.submit_time)}</td>
              <td>{formatTimestamp(task.finish_time)}</td>
              <td>{task.progress}</td>
              <td>
                <Duration seconds={duration(task.submit_time, task.finish_time)} drawing={false} />
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
                <Badge tone="purple">{platform ? t(`platform.${platform}`) : task.platform}</Badge>
              </td>
              <td>
                <ActionBadge action={task.action} />
              </td>
              <td>{task.task_id}</td>
              <td>
                <StatusBadge status={task.status} />
              </td>
              <td>
                <Result task={task} />
              </td>
              <TaskRowEnd task={task} admin={admin} onRefund={() => onRefund(task)} />
            </tr>
          );
        })}
      </tbody>
    </Table>
  );
}

/** /task (任务日志): music and video tasks; admins see every user's, with channels. */
export function MusicPage() {
  const { t } = useTranslation('task');
  const admin = isAdmin(useSession((s) => s.user));
  const list = useListPage<TaskFilter>(initialFilter);
  const tasks = useQuery(tasksQueryOptions(list.params, admin));
  const refund = useRefund(['tasks']);
  return (
    <>
      <PageHeader title={t('music.title')} description={t('music.note')} />
      <TaskFilters
        filter={list.filter}
        admin={admin}
        idLabel={t('music.idFilter')}
        initial={initialFilter}
        onSearch={list.apply}
      />
      <ListBody query={tasks} loading={t('music.loading')} failed={t('music.loadFailed')}>
        {(data) => (
          <TaskTable
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
