import { useQuery } from '@tanstack/react-query';
import { useTranslation } from 'react-i18next';
import { Link } from 'react-router';

import { homeBlocksQueryOptions, homeContentQueryOptions } from '@/api/content';
import { useStatus } from '@/api/status';
import { ContentFrame, RichContent } from '@/components/common/rich-content';
import { Button } from '@/components/ui/button';
import { Spinner } from '@/components/ui/spinner';
import { isFrameUrl } from '@/lib/sanitize';
import { useSession } from '@/stores/session';

import { NoticeDialog } from './notice-dialog';
import { TypingLine } from './typing-line';

import './home.css';

/** The default landing page: name, typing list, advantages and providers (spec 01 §2). */
function DefaultHome() {
  const { t } = useTranslation('content');
  const { system_name: systemName } = useStatus();
  const signedIn = useSession((s) => s.user) !== null;
  const blocks = useQuery(homeBlocksQueryOptions);
  const { typing = [], advantages = [], providers = [] } = blocks.data ?? {};
  return (
    <div className="home">
      <section className="home__hero">
        <h1 className="home__name">{systemName || 'Tollgate'}</h1>
        <p className="home__tagline">{t('home.tagline')}</p>
        <TypingLine lines={typing} label={t('home.typingLabel')} />
        <p className="home__description">{t('home.description')}</p>
        <div className="home__actions">
          <Button asChild>
            <Link to={signedIn ? '/detail' : '/login'}>
              {signedIn ? t('home.console') : t('home.start')}
            </Link>
          </Button>
          <Button variant="secondary" asChild>
            <Link to="/pricing">{t('home.pricing')}</Link>
          </Button>
        </div>
      </section>
      {advantages.length > 0 ? (
        <section className="home__section" aria-labelledby="home-advantages">
          <h2 id="home-advantages">{t('home.advantages')}</h2>
          <ul className="home__grid">
            {advantages.map((a, i) => (
              <li
                key={a.id ?? i}
                className="home__card"
                style={a.color ? { borderTopColor: a.color } : undefined}
              >
                <h3>{a.title}</h3>
                <p>{a.description}</p>
              </li>
            ))}
          </ul>
        </section>
      ) : null}
      {providers.length > 0 ? (
        <section className="home__section" aria-labelledby="home-providers">
          <h2 id="home-providers">{t('home.providers')}</h2>
          <ul className="home__grid home__grid--small">
            {providers.map((p, i) => (
              <li key={p.id ?? i} className="home__card">
                <h3>{p.name}</h3>
                {p.includes && p.includes.length > 0 ? (
                  <p title={p.includes.join(', ')}>
                    {t('home.providerModels', { count: p.includes.length })}
                  </p>
                ) : null}
              </li>
            ))}
          </ul>
        </section>
      ) : null}
    </div>
  );
}

/**
 * / (home): the administrator's home content (Markdown or HTML, sanitised; or an address shown
 * in a frame), else the default landing page; the notice pops up once per change.
 */
export function HomePage() {
  const { t } = useTranslation('content');
  const content = useQuery(homeContentQueryOptions);
  const text = content.data?.trim() ?? '';
  let body;
  if (content.isPending) body = <Spinner label={t('home.frameTitle')} />;
  else if (text === '') body = <DefaultHome />;
  else if (isFrameUrl(text)) body = <ContentFrame src={text} title={t('home.frameTitle')} />;
  else body = <RichContent source={text} className="home__content" />;
  return (
    <>
      {body}
      <NoticeDialog />
    </>
  );
}
