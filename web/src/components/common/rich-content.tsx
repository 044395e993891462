import { useMemo } from 'react';

import { cn } from '@/lib/cn';
import { renderMarkdown } from '@/lib/sanitize';

import './rich-content.css';

/** Admin-written Markdown or HTML (notice, home, about), rendered after sanitising. */
export function RichContent({ source, className }: { source: string; className?: string }) {
  const html = useMemo(() => renderMarkdown(source), [source]);
  return (
    <div className={cn('rich-content', className)} dangerouslySetInnerHTML={{ __html: html }} />
  );
}

/** A page address shown in a frame (home or about content that is a URL). */
export function ContentFrame({ src, title }: { src: string; title: string }) {
  return (
    <iframe
      className="content-frame"
      src={src}
      title={title}
      sandbox="allow-scripts allow-same-origin allow-popups allow-forms"
      referrerPolicy="no-referrer"
    />
  );
}
