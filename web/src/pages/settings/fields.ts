/** How a settings field is edited and checked (spec 02 §5 "Options"). */
export type FieldKind =
  | { type: 'bool' }
  | { type: 'int'; min: number }
  | { type: 'float'; min: number; max?: number; step?: number }
  | { type: 'text' }
  | { type: 'lines' }
  /** Write-only: never read back, sent only when typed (spec 01 §5). */
  | { type: 'secret' }
  /** An address: trailing slashes are stripped (spec 01 §5). */
  | { type: 'url' }
  /** Empty or an http(s) URL. */
  | { type: 'httpUrl' }
  | { type: 'json'; check?: 'rateLimitGroups'; invalid?: 'invalidTopupJson' }
  | { type: 'choice'; choices: readonly string[] };

export interface FieldDef {
  /** The option key (PUT /api/option/). */
  key: string;
  kind: FieldKind;
}

const bool = (key: string): FieldDef => ({ key, kind: { type: 'bool' } });
const int = (key: string, min = 0): FieldDef => ({ key, kind: { type: 'int', min } });
const text = (key: string): FieldDef => ({ key, kind: { type: 'text' } });
const lines = (key: string): FieldDef => ({ key, kind: { type: 'lines' } });
const json = (key: string): FieldDef => ({ key, kind: { type: 'json' } });
const secret = (key: string): FieldDef => ({ key, kind: { type: 'secret' } });
const url = (key: string): FieldDef => ({ key, kind: { type: 'url' } });
const budget = (key: string): FieldDef => ({
  key,
  kind: { type: 'float', min: 0.1, max: 1, step: 0.05 },
});

/** The i18n id of a key: dots are i18next's separator, so they become underscores. */
export const labelId = (key: string) => key.replaceAll('.', '_');

/** Sections of option fields, by id (the section's title is `settings:section.<id>`). */
export const sections = {
  general: [
    text('TopUpLink'),
    text('general_setting.docs_link'),
    int('QuotaPerUnit', 1),
    int('RetryTimes'),
    bool('DisplayInCurrencyEnabled'),
    bool('DisplayTokenStatEnabled'),
    bool('DefaultCollapseSidebar'),
    bool('DemoSiteEnabled'),
    bool('SelfUseModeEnabled'),
  ],
  drawing: [
    bool('DrawingEnabled'),
    bool('MjNotifyEnabled'),
    bool('MjAccountFilterEnabled'),
    bool('MjForwardUrlEnabled'),
    bool('MjModeClearEnabled'),
    bool('MjActionCheckSuccessEnabled'),
  ],
  sensitive: [
    bool('CheckSensitiveEnabled'),
    bool('CheckSensitiveOnPromptEnabled'),
    lines('SensitiveWords'),
    int('StreamCacheQueueLength'),
  ],
  logs: [bool('LogConsumeEnabled'), int('LogRetentionDays')],
  dashboard: [
    bool('DataExportEnabled'),
    int('DataExportInterval', 1),
    { key: 'DataExportDefaultTime', kind: { type: 'choice', choices: ['hour', 'day', 'week'] } },
  ],
  monitoring: [
    { key: 'ChannelDisableThreshold', kind: { type: 'float', min: 0 } },
    int('QuotaRemindThreshold'),
    bool('AutomaticDisableChannelEnabled'),
    bool('AutomaticEnableChannelEnabled'),
    lines('AutomaticDisableKeywords'),
  ],
  quota: [
    int('QuotaForNewUser'),
    int('PreConsumedQuota'),
    int('QuotaForInviter'),
    int('QuotaForInvitee'),
  ],
  chats: [json('Chats')],
  groups: [json('GroupRatio'), json('UserUsableGroups')],
  modelRatio: [
    json('ModelPrice'),
    json('ModelRatio'),
    json('CacheRatio'),
    json('CompletionRatio'),
    json('AudioRatio'),
    json('AudioCompletionRatio'),
    json('ToolCallPrice'),
    json('ModelPriceTiers'),
  ],
  rateLimit: [
    bool('ModelRequestRateLimitEnabled'),
    int('ModelRequestRateLimitDurationMinutes'),
    int('ModelRequestRateLimitCount'),
    int('ModelRequestRateLimitSuccessCount', 1),
    { key: 'ModelRequestRateLimitGroup', kind: { type: 'json', check: 'rateLimitGroups' } },
  ],
  stickyRouting: [int('StickyRoutingMaxEntries'), int('StickyRoutingTtlSeconds')],
  global: [
    bool('global.pass_through_request_enabled'),
    bool('general_setting.ping_interval_enabled'),
    int('general_setting.ping_interval_seconds', 1),
  ],
  gemini: [
    json('gemini.safety_settings'),
    json('gemini.version_settings'),
    json('gemini.supported_imagine_models'),
    bool('gemini.thinking_adapter_enabled'),
    budget('gemini.thinking_adapter_budget_tokens_percentage'),
  ],
  claude: [
    json('claude.model_headers_settings'),
    json('claude.default_max_tokens'),
    bool('claude.thinking_adapter_enabled'),
    budget('claude.thinking_adapter_budget_tokens_percentage'),
  ],
  server: [url('ServerAddress')],
  worker: [url('WorkerUrl'), secret('WorkerValidKey'), text('ImageReadProxy')],
  payment: [
    url('PayAddress'),
    text('EpayId'),
    secret('EpayKey'),
    url('CustomCallbackAddress'),
    { key: 'Price', kind: { type: 'float', min: 0 } },
    int('MinTopUp', 1),
    { key: 'TopupGroupRatio', kind: { type: 'json', invalid: 'invalidTopupJson' } },
  ],
  login: [
    bool('PasswordLoginEnabled'),
    bool('PasswordRegisterEnabled'),
    bool('EmailVerificationEnabled'),
    bool('RegisterEnabled'),
  ],
  emailDomain: [
    bool('EmailDomainRestrictionEnabled'),
    bool('EmailAliasRestrictionEnabled'),
    text('EmailDomainWhitelist'),
  ],
  smtp: [
    text('SMTPServer'),
    int('SMTPPort', 1),
    text('SMTPAccount'),
    text('SMTPFrom'),
    secret('SMTPToken'),
    bool('SMTPSSLEnabled'),
    bool('SMTPAllowPlaintext'),
  ],
  github: [bool('GitHubOAuthEnabled'), text('GitHubClientId'), secret('GitHubClientSecret')],
  oidc: [
    bool('oidc.enabled'),
    text('oidc.client_id'),
    secret('oidc.client_secret'),
    { key: 'oidc.well_known', kind: { type: 'httpUrl' } },
    text('oidc.authorization_endpoint'),
    text('oidc.token_endpoint'),
    text('oidc.user_info_endpoint'),
  ],
  wechat: [
    bool('WeChatAuthEnabled'),
    url('WeChatServerAddress'),
    secret('WeChatServerToken'),
    text('WeChatAccountQRCodeImageURL'),
  ],
  telegram: [bool('TelegramOAuthEnabled'), secret('TelegramBotToken'), text('TelegramBotName')],
  turnstile: [
    bool('TurnstileCheckEnabled'),
    text('TurnstileSiteKey'),
    secret('TurnstileSecretKey'),
  ],
  linuxdo: [bool('LinuxDOOAuthEnabled'), text('LinuxDOClientId'), secret('LinuxDOClientSecret')],
  content: [
    text('SystemName'),
    text('Logo'),
    lines('Notice'),
    lines('HomePageContent'),
    lines('About'),
    lines('Footer'),
  ],
} satisfies Record<string, FieldDef[]>;
export type SectionId = keyof typeof sections;

/** Why a value is refused: an i18n key of `settings:validation`, or null when it is fine. */
export type FieldError =
  | 'invalidJson'
  | 'invalidTopupJson'
  | 'httpUrl'
  | 'number'
  | 'min'
  | 'max'
  | 'rateLimitGroups'
  | null;

/** The text sent for a value: addresses lose their trailing slashes. */
export function normalizeValue(kind: FieldKind, value: string): string {
  return kind.type === 'url' ? value.trim().replace(/\/+$/, '') : value;
}

/** Checks one value against its field's rules (spec 02 §5). */
export function checkField(kind: FieldKind, value: string): FieldError {
  switch (kind.type) {
    case 'int':
    case 'float': {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) return 'number';
      if (kind.type === 'int' && !Number.isInteger(n)) return 'number';
      if (n < kind.min) return 'min';
      if (kind.type === 'float' && kind.max !== undefined && n > kind.max) return 'max';
      return null;
    }
    case 'json': {
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        return kind.invalid ?? 'invalidJson';
      }
      if (kind.check === 'rateLimitGroups' && !validRateLimitGroups(parsed)) {
        return 'rateLimitGroups';
      }
      return null;
    }
    case 'httpUrl':
      return value.trim() === '' || /^https?:\/\//.test(value.trim()) ? null : 'httpUrl';
    default:
      return null;
  }
}

/** `{group: [max requests ≥ 0, max successful requests ≥ 1]}` (spec 02 §5). */
function validRateLimitGroups(value: unknown): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  return Object.values(value).every(
    (pair) =>
      Array.isArray(pair) &&
      pair.length === 2 &&
      Number.isInteger(pair[0]) &&
      Number.isInteger(pair[1]) &&
      (pair[0] as number) >= 0 &&
      (pair[1] as number) >= 1,
  );
}

/** The bounds of a field, for its error message. */
export function bounds(kind: FieldKind): { min?: number; max?: number } {
  return kind.type === 'int' || kind.type === 'float'
    ? { min: kind.min, max: kind.type === 'float' ? kind.max : undefined }
    : {};
}
