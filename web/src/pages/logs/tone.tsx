import { Badge } from '@/components/ui/badge';
import type { BadgeProps } from '@/components/ui/badge';

import type { Tone } from './constants';

const badgeTone: Record<Tone, BadgeProps['tone']> = {
  green: 'green',
  yellow: 'orange',
  red: 'red',
};

/** A time badge in its threshold colour; `data-tone-of` names what it times (tests read it). */
export function toneBadge(tone: Tone, text: string, of: 'use-time' | 'frt') {
  return (
    <Badge tone={badgeTone[tone]} data-speed={tone} data-tone-of={of}>
      {text}
    </Badge>
  );
}
