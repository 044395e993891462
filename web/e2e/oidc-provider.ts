import { createHash, timingSafeEqual } from 'node:crypto';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';

import { exportJWK, generateKeyPair, SignJWT } from 'jose';

/** The client registered at the test provider. */
export const OIDC_CLIENT = { id: 'tollgate-e2e', secret: 'e2e-oidc-secret' };

/** The account the provider signs in. */
export interface OidcAccount {
  sub: string;
  preferred_username: string;
  name: string;
  email: string;
}

/** A running OpenID Connect provider on loopback. */
export interface OidcProvider {
  issuer: string;
  wellKnown: string;
  stop: () => Promise<void>;
}

interface Grant {
  nonce: string;
  challenge: string;
  redirectUri: string;
}

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { 'Content-Type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * A real OpenID Connect provider for the browser test: discovery, an authorization endpoint that
 * approves at once (redirecting the browser back with a code), a token endpoint that checks the
 * client's credentials, the redirect URI and the PKCE verifier, ID tokens signed by `jose` with
 * an ES256 key made at start, JWKS and userinfo.
 */
export async function startOidcProvider(account: OidcAccount): Promise<OidcProvider> {
  const { publicKey, privateKey } = await generateKeyPair('ES256');
  const jwk = { ...(await exportJWK(publicKey)), kid: 'e2e-1', alg: 'ES256', use: 'sig' };
  const grants = new Map<string, Grant>();
  let issuer = '';
  let codes = 0;

  const server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', issuer);
      if (url.pathname === '/.well-known/openid-configuration') {
        return json(res, 200, {
          issuer,
          authorization_endpoint: `${issuer}/authorize`,
          token_endpoint: `${issuer}/token`,
          userinfo_endpoint: `${issuer}/userinfo`,
          jwks_uri: `${issuer}/jwks`,
          response_types_supported: ['code'],
          id_token_signing_alg_values_supported: ['ES256'],
          code_challenge_methods_supported: ['S256'],
          token_endpoint_auth_methods_supported: ['client_secret_basic'],
        });
      }
      if (url.pathname === '/jwks') return json(res, 200, { keys: [jwk] });
      if (url.pathname === '/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== OIDC_CLIENT.id || q.get('response_type') !== 'code') {
          return json(res, 400, { error: 'invalid_request' });
        }
        const code = `code-${++codes}`;
        grants.set(code, {
          nonce: q.get('nonce') ?? '',
          challenge: q.get('code_challenge') ?? '',
          redirectUri: q.get('redirect_uri') ?? '',
        });
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        res.writeHead(302, { Location: back.toString() });
        return res.end();
      }
      if (url.pathname === '/token' && req.method === 'POST') {
        const basic = `Basic ${Buffer.from(`${OIDC_CLIENT.id}:${OIDC_CLIENT.secret}`).toString('base64')}`;
        if (!sameText(req.headers.authorization ?? '', basic)) {
          return json(res, 401, { error: 'invalid_client' });
        }
        const form = await readForm(req);
        const grant = grants.get(form.get('code') ?? '');
        grants.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (
          !grant ||
          grant.redirectUri !== form.get('redirect_uri') ||
          grant.challenge !== challenge
        ) {
          return json(res, 400, { error: 'invalid_grant' });
        }
        const idToken = await new SignJWT({
          nonce: grant.nonce,
          email: account.email,
          email_verified: true,
        })
          .setProtectedHeader({ alg: 'ES256', kid: 'e2e-1' })
          .setIssuer(issuer)
          .setAudience(OIDC_CLIENT.id)
          .setSubject(account.sub)
          .setIssuedAt()
          .setExpirationTime('5m')
          .sign(privateKey);
        return json(res, 200, {
          access_token: `at-${account.sub}`,
          token_type: 'Bearer',
          expires_in: 300,
          id_token: idToken,
        });
      }
      if (url.pathname === '/userinfo') {
        if (req.headers.authorization !== `Bearer at-${account.sub}`) {
          return json(res, 401, { error: 'invalid_token' });
        }
        return json(res, 200, { ...account, email_verified: true });
      }
      return json(res, 404, { error: 'not_found' });
    })().catch((error: unknown) => json(res, 500, { error: String(error) }));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port for the provider');
  issuer = `http://127.0.0.1:${address.port}`;
  return {
    issuer,
    wellKnown: `${issuer}/.well-known/openid-configuration`,
    stop: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
