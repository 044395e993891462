"""The official `openai` SDK through Tollgate to each OpenAI-compatible channel type beyond OpenAI
(one case per type): the upstream is a mock that answers at the path the provider documents and
checks the credential as the provider would; each case checks what the SDK got, where the
request went, and what the caller was billed (the key's used quota)."""

import base64
import contextlib
import hashlib
import hmac
import json
import threading
from http.server import ThreadingHTTPServer

import openai
import pytest

from conftest import MockProvider, signed_in_root

# Zhipu's key is id.secret; the upstream gets an HS256 JWT signed with the secret.
ZHIPU_KEY = "zhipu-id.zhipu-secret"


def zhipu_token_ok(auth):
    """Whether `auth` is `Bearer <JWT>` as Zhipu documents it, signed with the key's secret."""
    token = auth.removeprefix("Bearer ")
    try:
        head, payload, sig = token.split(".")
    except ValueError:
        return False
    pad = lambda s: s + "=" * (-len(s) % 4)
    mac = hmac.new(b"zhipu-secret", f"{head}.{payload}".encode(), hashlib.sha256).digest()
    claims = json.loads(base64.urlsafe_b64decode(pad(payload)))
    header = json.loads(base64.urlsafe_b64decode(pad(head)))
    return (base64.urlsafe_b64encode(mac).rstrip(b"=").decode() == sig
            and header == {"alg": "HS256", "sign_type": "SIGN"} and claims["api_key"] == "zhipu-id")


# type id, model, (path the provider documents, credential check), what the SDK calls.
CASES = [
    (19, "360gpt-pro", "/v1/chat/completions", lambda h: h["Authorization"] == "Bearer k-360", "chat"),
    (35, "MiniMax-M2.1", "/v1/chat/completions", lambda h: h["Authorization"] == "Bearer k-mm", "chat"),
    (38, "jina-embeddings-v3", "/v1/embeddings", lambda h: h["Authorization"] == "Bearer k-jina",
     "embeddings"),
    (44, "m3e", "/v1/embeddings", lambda h: h["Authorization"] == "Bearer k-m3e", "embeddings"),
    (11, "gemini-2.0-flash", "/v1beta/models/gemini-2.0-flash:generateContent",
     lambda h: h["x-goog-api-key"] == "k-palm", "chat"),
    (16, "glm-4-flash", "/api/paas/v4/chat/completions",
     lambda h: zhipu_token_ok(h["Authorization"]), "chat"),
    (26, "glm-4v-plus", "/api/paas/v4/chat/completions",
     lambda h: zhipu_token_ok(h["Authorization"]), "chat"),
    (39, "@cf/meta/llama-3.1-8b-instruct", "/client/v4/accounts/acc-sdk/ai/v1/chat/completions",
     lambda h: h["Authorization"] == "Bearer k-cf", "chat"),
    (46, "ernie-4.0-8k", "/v2/chat/completions",
     lambda h: h["Authorization"] == "Bearer k-qf" and h["appid"] == "app-sdk", "chat"),
]
KEYS = {19: "k-360", 35: "k-mm", 38: "k-jina", 44: "k-m3e", 11: "k-palm", 16: ZHIPU_KEY,
        26: ZHIPU_KEY, 39: "k-cf", 46: "k-qf|app-sdk"}
OTHER = {39: "acc-sdk"}


class MockCompatible(MockProvider):
    """Every case's upstream: answers chat (OpenAI's or Gemini's shape) and embeddings with
    usage, after checking the path and credential of the case the model names."""

    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body.get("model") or self.path.split("/models/")[-1].split(":")[0]
        case = next(c for c in CASES if c[1] == model)
        if self.path != case[2] or not case[3](self.headers):
            return self._json({"error": {"message": f"wrong path or key: {self.path}"}}, 401)
        MockCompatible.seen.append(self.path)
        if self.path.endswith(":generateContent"):
            return self._json({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]},
                                               "finishReason": "STOP", "index": 0}],
                               "usageMetadata": {"promptTokenCount": 5, "candidatesTokenCount": 2,
                                                 "totalTokenCount": 7}})
        if self.path.endswith("/embeddings"):
            return self._json({"object": "list", "model": model,
                               "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                               "usage": {"prompt_tokens": 4, "total_tokens": 4}})
        self._json({"id": "c1", "object": "chat.completion", "created": 1, "model": model,
                    "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                                 "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}})


@pytest.fixture(scope="module")
def compatible():
    """Yields (base_url, console client, key, key id) of a Tollgate with one channel per case."""
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), MockCompatible)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    with signed_in_root("tollgate-sdk-types-") as (base, api, uid):
        api.headers["New-Api-User"] = uid
        ratios = {c[1]: 1 for c in CASES}
        for key, value in [("ModelRatio", ratios), ("CompletionRatio", {m: 2 for m in ratios})]:
            assert api.put("/api/option/", json={"key": key, "value": json.dumps(value)}).json()["success"]
        for kind, model, *_ in CASES:
            channel = {"name": f"type-{kind}", "type": kind, "key": KEYS[kind], "models": model,
                       "group": "default", "other": OTHER.get(kind, ""),
                       "base_url": f"http://127.0.0.1:{upstream.server_port}"}
            assert api.post("/api/channel/", json=channel).json()["success"], kind
        token = api.post("/api/token/", json={"name": "types", "remain_quota": 1_000_000}).json()["data"]
        key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
        try:
            yield base, api, key, token["id"]
        finally:
            upstream.shutdown()


def used_quota(api, token_id):
    return api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]


@pytest.mark.parametrize("case", CASES, ids=[f"type-{c[0]}" for c in CASES])
def test_each_type_relays_through_the_sdk_and_is_billed(compatible, case):
    base, api, key, token_id = compatible
    kind, model, path, _, call = case
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = used_quota(api, token_id)
    if call == "chat":
        answer = client.chat.completions.create(
            model=model, messages=[{"role": "user", "content": "Hi"}])
        assert answer.choices[0].message.content == "Hello"
        cost = 5 + 2 * 2
    else:
        answer = client.embeddings.create(model=model, input="hello")
        assert answer.data[0].embedding == [0.1, 0.2]
        cost = 4
    assert MockCompatible.seen[-1] == path
    for _ in range(100):
        if used_quota(api, token_id) - before == cost:
            break
        threading.Event().wait(0.05)
    assert used_quota(api, token_id) - before == cost
