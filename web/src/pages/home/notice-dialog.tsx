import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { useTranslation } from 'react-i18next';

import { noticeQueryOptions } from '@/api/content';
import { RichContent } from '@/components/common/rich-content';
import { Button } from '@/components/ui/button';
import {
  Dialog,
  DialogClose,
  DialogContent,
  DialogFooter,
  DialogHeader,
  DialogTitle,
} from '@/components/ui/dialog';

/** Local storage key of the notice text last shown (the notice shows again when it changes). */
export const NOTICE_SEEN_KEY = 'notice_seen';

/** The admin's notice, shown once per change of its text. */
export function NoticeDialog() {
  const { t } = useTranslation('content');
  const notice = useQuery(noticeQueryOptions);
  const [closed, setClosed] = useState(false);
  const text = notice.data?.trim() ?? '';
  const open = !closed && text !== '' && localStorage.getItem(NOTICE_SEEN_KEY) !== text;
  return (
    <Dialog
      open={open}
      onOpenChange={(o) => {
        if (o) return;
        localStorage.setItem(NOTICE_SEEN_KEY, text);
        setClosed(true);
      }}
    >
      <DialogContent>
        <DialogHeader>
          <DialogTitle>{t('notice.title')}</DialogTitle>
        </DialogHeader>
        <RichContent source={text} className="notice__body" />
        <DialogFooter>
          <DialogClose asChild>
            <Button>{t('notice.close')}</Button>
          </DialogClose>
        </DialogFooter>
      </DialogContent>
    </Dialog>
  );
}
