/** Statuses, labels and time windows shared by the drawing log and the task log (spec 02 §4, §9). */

/** Drawing actions with a label (spec 02 §4); anything else shows as unknown. */
export const drawingActions = [
  'IMAGINE',
  'UPSCALE',
  'VIDEO',
  'EDITS',
  'VARIATION',
  'HIGH_VARIATION',
  'LOW_VARIATION',
  'PAN',
  'DESCRIBE',
  'BLEND',
  'UPLOAD',
  'SHORTEN',
  'REROLL',
  'INPAINT',
  'ZOOM',
  'CUSTOM_ZOOM',
  'MODAL',
  'SWAP_FACE',
] as const;

/** Music and video actions with a label. */
export const taskActions = ['MUSIC', 'LYRICS', 'GENERATE'] as const;

export type ActionKey = (typeof drawingActions)[number] | (typeof taskActions)[number];

/** Submit result codes with a label: 1 submitted, 21 waiting, 22 duplicate, 0 not submitted. */
export const submitCodes = [1, 21, 22, 0] as const;

/** Statuses with a label; the task log adds QUEUED and UNKNOWN, and '' means submitting. */
export const statuses = [
  'SUCCESS',
  'NOT_START',
  'SUBMITTED',
  'IN_PROGRESS',
  'FAILURE',
  'MODAL',
  'QUEUED',
  'UNKNOWN',
] as const;
export type StatusKey = (typeof statuses)[number];

export type Tone = 'neutral' | 'blue' | 'purple' | 'green' | 'yellow' | 'red' | 'orange';

export const statusTone: Record<StatusKey, Tone> = {
  SUCCESS: 'green',
  NOT_START: 'neutral',
  SUBMITTED: 'yellow',
  IN_PROGRESS: 'blue',
  FAILURE: 'red',
  MODAL: 'purple',
  QUEUED: 'orange',
  UNKNOWN: 'neutral',
};

/** The label key of a status: a known one, '' → submitting, anything else → UNKNOWN. */
export function statusKey(status: string): StatusKey | 'submitting' {
  if (status === '') return 'submitting';
  return statuses.find((s) => s === status) ?? 'UNKNOWN';
}

/** The label key of an action, or `undefined` for one without a label. */
export function actionKey(action: string): ActionKey | undefined {
  return (
    drawingActions.find((a) => a === action) ?? taskActions.find((a) => a === action) ?? undefined
  );
}

/** Seconds a task took from submit to finish (0 while unfinished). */
export function duration(submit: number, finish: number): number {
  return finish > 0 && submit > 0 && finish >= submit ? finish - submit : 0;
}

/** A drawing that took over 60 s shows its time in red (spec 02 §9). */
export const slowDrawing = (seconds: number): boolean => seconds > 60;

/** The drawing log's default window (spec 02 §9): the last 30 days to an hour ahead. */
export function defaultDrawingWindow(now: number = Date.now()): { start: number; end: number } {
  const seconds = Math.floor(now / 1000);
  return { start: seconds - 30 * 86_400, end: seconds + 3_600 };
}

/** The task log's default window (spec 02 §9): from today's local midnight to an hour ahead. */
export function defaultTaskWindow(now: number = Date.now()): { start: number; end: number } {
  const midnight = new Date(now);
  midnight.setHours(0, 0, 0, 0);
  return { start: Math.floor(midnight.getTime() / 1000), end: Math.floor(now / 1000) + 3_600 };
}
