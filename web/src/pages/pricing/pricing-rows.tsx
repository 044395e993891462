import { useTranslation } from 'react-i18next';

import { QUOTA_PER_CALL } from '@/api/pricing';
import type { PricingModel } from '@/api/pricing';
import { Badge } from '@/components/ui/badge';
import { Button } from '@/components/ui/button';
import { Table } from '@/components/ui/table';

import { formatPrice, modelPrice } from './prices';
import type { Currency } from './prices';

export interface PricingRowsProps {
  models: PricingModel[];
  groupRatio: number;
  currency: Currency;
  /** The status's `price`: CNY per US$. */
  priceRatio: number;
  showRatio: boolean;
  onGuide: (model: string) => void;
}

function BillingBadge({ model }: { model: PricingModel }) {
  const { t } = useTranslation('pricing');
  if (!model.price_set) return <Badge tone="orange">{t('billing.unset')}</Badge>;
  return model.quota_type === QUOTA_PER_CALL ? (
    <Badge tone="purple">{t('billing.perCall')}</Badge>
  ) : (
    <Badge tone="blue">{t('billing.tokens')}</Badge>
  );
}

function Price({
  model,
  groupRatio,
  currency,
  priceRatio,
}: PricingRowsProps & { model: PricingModel }) {
  const { t } = useTranslation('pricing');
  const price = modelPrice(model, groupRatio);
  const money = (usd: number) => formatPrice(usd, currency, priceRatio);
  switch (price.kind) {
    case 'unset':
      return <span className="pricing__muted">{t('price.unset')}</span>;
    case 'call':
      return <span>{t('price.perCall', { price: money(price.perCall) })}</span>;
    case 'tokens':
      return (
        <div className="data-table__stack">
          <span>{t('price.input', { price: money(price.input) })}</span>
          <span>{t('price.output', { price: money(price.output) })}</span>
        </div>
      );
  }
}

function Ratios({ model, groupRatio }: { model: PricingModel; groupRatio: number }) {
  const { t } = useTranslation('pricing');
  return (
    <div className="data-table__stack">
      {model.quota_type === QUOTA_PER_CALL ? null : (
        <>
          <small>{t('ratio.model', { ratio: model.model_ratio })}</small>
          <small>{t('ratio.completion', { ratio: model.completion_ratio })}</small>
        </>
      )}
      <small>{t('ratio.group', { ratio: groupRatio })}</small>
    </div>
  );
}

function Groups({ model }: { model: PricingModel }) {
  return (
    <div className="pricing__groups">
      {model.enable_groups.map((g) => (
        <Badge key={g}>{g}</Badge>
      ))}
    </div>
  );
}

/** The desktop table. */
export function PricingTable(props: PricingRowsProps) {
  const { t } = useTranslation('pricing');
  const { models, showRatio, onGuide, groupRatio } = props;
  return (
    <Table className="data-table pricing__table">
      <thead>
        <tr>
          <th>{t('column.model')}</th>
          <th>{t('column.billing')}</th>
          <th>{t('column.groups')}</th>
          {showRatio ? <th>{t('column.ratio')}</th> : null}
          <th>{t('column.price')}</th>
          <th>{t('column.actions')}</th>
        </tr>
      </thead>
      <tbody>
        {models.length === 0 ? (
          <tr>
            <td colSpan={showRatio ? 6 : 5}>{t('empty')}</td>
          </tr>
        ) : null}
        {models.map((model) => (
          <tr key={model.model_name} aria-label={model.model_name}>
            <td>
              <div className="data-table__stack pricing__model">
                <code>{model.model_name}</code>
                {model.model_description ? <small>{model.model_description}</small> : null}
              </div>
            </td>
            <td>
              <BillingBadge model={model} />
            </td>
            <td>
              <Groups model={model} />
            </td>
            {showRatio ? (
              <td>
                <Ratios model={model} groupRatio={groupRatio} />
              </td>
            ) : null}
            <td>
              <Price {...props} model={model} />
            </td>
            <td>
              <Button size="sm" variant="ghost" onClick={() => onGuide(model.model_name)}>
                {t('action.guide')}
              </Button>
            </td>
          </tr>
        ))}
      </tbody>
    </Table>
  );
}

/** The mobile cards. */
export function PricingCards(props: PricingRowsProps) {
  const { t } = useTranslation('pricing');
  const { models, showRatio, onGuide, groupRatio } = props;
  if (models.length === 0) return <p className="pricing__muted">{t('empty')}</p>;
  return (
    <ul className="pricing__cards">
      {models.map((model) => (
        <li key={model.model_name} className="pricing__card" aria-label={model.model_name}>
          <div className="pricing__card-head">
            <code>{model.model_name}</code>
            <BillingBadge model={model} />
          </div>
          {model.model_description ? (
            <p className="pricing__muted">{model.model_description}</p>
          ) : null}
          <Price {...props} model={model} />
          {showRatio ? <Ratios model={model} groupRatio={groupRatio} /> : null}
          <Groups model={model} />
          <Button size="sm" variant="secondary" onClick={() => onGuide(model.model_name)}>
            {t('action.guide')}
          </Button>
        </li>
      ))}
    </ul>
  );
}
