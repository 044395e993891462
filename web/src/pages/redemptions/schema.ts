import type { ParseKeys } from 'i18next';
import { z } from 'zod/mini';

/** Error messages are i18n keys of the `redemption` namespace. */
const message = (key: ParseKeys<'redemption'>) => key;

/** Longest code name (spec 02 §5). */
export const CODE_NAME_MAX_LENGTH = 20;
/** Most codes per create call (spec 02 §9). */
export const MAX_BATCH = 100;
/** The default form (spec 02 §9): quota 100 000, one code. */
export const DEFAULT_CODE_QUOTA = 100_000;
export { QUOTA_PRESETS } from '@/pages/tokens/schema';

/**
 * The code editor (spec 02 §5): name 1–20 characters (empty on create becomes the formatted
 * quota), quota a positive integer, count an integer 1–100.
 */
export function redemptionFormSchema(creating: boolean) {
  return z.object({
    name: z.string().check(
      z.trim(),
      z.refine((name) => creating || name.length > 0, { message: message('validation.name') }),
      z.maxLength(CODE_NAME_MAX_LENGTH, message('validation.name')),
    ),
    quota: z.int(message('validation.quota')).check(z.gte(1, message('validation.quota'))),
    count: z
      .int(message('validation.count'))
      .check(z.gte(1, message('validation.count')), z.lte(MAX_BATCH, message('validation.count'))),
  });
}
export type RedemptionFormValues = z.infer<ReturnType<typeof redemptionFormSchema>>;

export const newRedemptionValues: RedemptionFormValues = {
  name: '',
  quota: DEFAULT_CODE_QUOTA,
  count: 1,
};

/** The text file offered after creation: one code per line. */
export function codesFile(codes: readonly string[]): string {
  return `${codes.join('\n')}\n`;
}

/** Offers `text` as a download named `fileName`. */
export function downloadText(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/plain;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.append(link);
  link.click();
  link.remove();
  URL.revokeObjectURL(url);
}
