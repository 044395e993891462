"""A mock Vertex AI for the SDK suite: Google's OAuth token endpoint for a service-account key's
signed-JWT grant (https://developers.google.com/identity/protocols/oauth2/service-account#httprest:
the RS256 assertion checked with google-auth against the key's public half, `iss`, `aud`,
`scope`) and a Gemini model's generateContent / streamGenerateContent?alt=sse under the key's
project and the channel's location
(https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/inference), answered only
for the access token it issued."""

import json
from urllib.parse import parse_qs

from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from google.auth import jwt

from conftest import MockProvider

PROJECT, LOCATION, MODEL = "sdk-project", "us-central1", "gemini-2.5-flash"
CLIENT_EMAIL = "tollgate-sdk@sdk-project.iam.gserviceaccount.com"
ACCESS_TOKEN = "ya29.sdk-vertex-token"
_PRIVATE = rsa.generate_private_key(public_exponent=65537, key_size=2048)
PUBLIC_PEM = _PRIVATE.public_key().public_bytes(
    serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)


def service_account_key(token_uri):
    """The service-account JSON key (one line) Google issues, whose `token_uri` is `token_uri`."""
    private = _PRIVATE.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                     serialization.NoEncryption()).decode()
    return json.dumps({"type": "service_account", "project_id": PROJECT,
                       "private_key_id": "0123456789abcdef", "private_key": private,
                       "client_email": CLIENT_EMAIL, "client_id": "1234567890",
                       "auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": token_uri})


class MockVertex(MockProvider):
    """`POST /token` issues ACCESS_TOKEN for a valid grant; the model's methods answer for it."""

    grants = []
    seen = []

    def token(self, raw):
        form = {k: v[0] for k, v in parse_qs(raw.decode()).items()}
        token_uri = f"http://{self.headers['Host']}/token"
        try:
            claims = jwt.decode(form.get("assertion", ""), certs=PUBLIC_PEM, audience=token_uri)
        except ValueError as e:
            return self._json({"error": "invalid_grant", "error_description": str(e)}, 400)
        if form.get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" \
                or claims.get("iss") != CLIENT_EMAIL \
                or claims.get("scope") != "https://www.googleapis.com/auth/cloud-platform":
            return self._json({"error": "invalid_grant", "error_description": "bad claims"}, 400)
        MockVertex.grants.append(claims)
        self._json({"access_token": ACCESS_TOKEN, "expires_in": 3599, "token_type": "Bearer"})

    def do_POST(self):
        raw = self.rfile.read(int(self.headers["Content-Length"]))
        if self.path == "/token":
            return self.token(raw)
        if self.headers.get("Authorization") != f"Bearer {ACCESS_TOKEN}":
            return self._json({"error": {"code": 401, "status": "UNAUTHENTICATED",
                                         "message": "Request had invalid authentication credentials."}}, 401)
        model = f"/v1/projects/{PROJECT}/locations/{LOCATION}/publishers/google/models/{MODEL}"
        if self.path not in (f"{model}:generateContent", f"{model}:streamGenerateContent?alt=sse"):
            return self._json({"error": {"code": 404, "status": "NOT_FOUND", "message": self.path}}, 404)
        MockVertex.seen.append((self.path, json.loads(raw)))
        usage = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
        candidate = lambda text: {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
        if self.path.endswith(":generateContent"):
            return self._json({"candidates": [{**candidate("Hello"), "finishReason": "STOP"}],
                               "usageMetadata": usage, "modelVersion": MODEL})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for text, last in [("Hel", False), ("lo", True)]:
            event = {"candidates": [{**candidate(text), "finishReason": "STOP"} if last else candidate(text)],
                     "usageMetadata": usage if last else {"promptTokenCount": 5}, "modelVersion": MODEL}
            self._chunk(f"data: {json.dumps(event)}\r\n\r\n")
        self._chunk("")
