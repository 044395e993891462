"""The official `openai` SDK through Tollgate to each OpenAI-compatible channel type beyond OpenAI
(one case per type, chat whole and streamed): the upstream is a mock that answers at the path the
provider documents (the type table's prefix under the provider's base URL) and checks the
credential as the provider would; each case checks what the SDK got, where the request went, and
what the caller was billed (the key's used quota)."""

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


def bearer(key):
    """The credential check of a type whose adaptor sends the key as `Authorization: Bearer`."""
    return lambda h: h.get("Authorization") == f"Bearer {key}"


# type id, model, (path the provider documents, credential check), what the SDK calls.
CASES = [
    (19, "360gpt-pro", "/v1/chat/completions", bearer("k-360"), "chat"),
    (35, "MiniMax-M2.1", "/v1/chat/completions", bearer("k-mm"), "chat"),
    (38, "jina-embeddings-v3", "/v1/embeddings", bearer("k-jina"), "embeddings"),
    (44, "m3e", "/v1/embeddings", bearer("k-m3e"), "embeddings"),
    (11, "gemini-2.0-flash", "/v1beta/models/gemini-2.0-flash:generateContent",
     lambda h: h["x-goog-api-key"] == "k-palm", "chat"),
    (16, "glm-4-flash", "/api/paas/v4/chat/completions",
     lambda h: zhipu_token_ok(h["Authorization"]), "chat"),
    (26, "glm-4v-plus", "/api/paas/v4/chat/completions",
     lambda h: zhipu_token_ok(h["Authorization"]), "chat"),
    (39, "@cf/meta/llama-3.1-8b-instruct", "/client/v4/accounts/acc-sdk/ai/v1/chat/completions",
     bearer("k-cf"), "chat"),
    (46, "ernie-4.0-8k", "/v2/chat/completions",
     lambda h: h["Authorization"] == "Bearer k-qf" and h["appid"] == "app-sdk", "chat"),
    # The types that relayed before P7b, each at its row's OpenAI prefix (src/channel_types/table.rs)
    # under the base URL the provider documents; every one sends its key as a bearer token.
    (4, "llama3.1", "/v1/chat/completions", bearer("k-ollama"), "chat"),
    (8, "custom-model", "/v1/chat/completions", bearer("k-custom"), "chat"),
    (17, "qwen-plus", "/compatible-mode/v1/chat/completions", bearer("sk-qwen"), "chat"),
    (20, "openai/gpt-4o-mini", "/api/v1/chat/completions", bearer("sk-or-v1-sdk"), "chat"),
    (22, "fastgpt-app", "/api/openapi/v1/chat/completions", bearer("fastgpt-sdk"), "chat"),
    (25, "moonshot-v1-8k", "/v1/chat/completions", bearer("sk-moonshot"), "chat"),
    (31, "yi-large", "/v1/chat/completions", bearer("k-yi"), "chat"),
    (40, "Qwen/Qwen2.5-7B-Instruct", "/v1/chat/completions", bearer("sk-silicon"), "chat"),
    (42, "mistral-small-latest", "/v1/chat/completions", bearer("k-mistral"), "chat"),
    (43, "deepseek-chat", "/v1/chat/completions", bearer("sk-deepseek"), "chat"),
    (45, "doubao-1-5-pro-32k", "/api/v3/chat/completions", bearer("k-ark"), "chat"),
    (47, "qwen2.5-instruct", "/v1/chat/completions", bearer("k-xinference"), "chat"),
    (48, "grok-3", "/v1/chat/completions", bearer("xai-sdk"), "chat"),
]
KEYS = {19: "k-360", 35: "k-mm", 38: "k-jina", 44: "k-m3e", 11: "k-palm", 16: ZHIPU_KEY,
        26: ZHIPU_KEY, 39: "k-cf", 46: "k-qf|app-sdk", 4: "k-ollama", 8: "k-custom", 17: "sk-qwen",
        20: "sk-or-v1-sdk", 22: "fastgpt-sdk", 25: "sk-moonshot", 31: "k-yi", 40: "sk-silicon",
        42: "k-mistral", 43: "sk-deepseek", 45: "k-ark", 47: "k-xinference", 48: "xai-sdk"}
OTHER = {39: "acc-sdk"}
# The path part of a provider's documented base URL (OpenRouter's https://openrouter.ai/api,
# FastGPT's https://fastgpt.run/api/openapi): the channel's base URL is the mock's plus it.
BASE_PATH = {20: "/api", 22: "/api/openapi"}
CHATS = [c for c in CASES if c[4] == "chat"]
# A Gemini-API type streams from another method of the same model.
STREAM_PATH = {11: "/v1beta/models/gemini-2.0-flash:streamGenerateContent?alt=sse"}


class MockCompatible(MockProvider):
    """Every case's upstream: answers chat (OpenAI's or Gemini's shape, whole or SSE) and
    embeddings with usage, after checking the path and credential of the case the model names.
    A streamed OpenAI chat carries its usage chunk only when asked for, as OpenAI's does."""

    seen = []

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        model = body.get("model") or self.path.split("/models/")[-1].split(":")[0]
        case = next(c for c in CASES if c[1] == model)
        streamed = STREAM_PATH.get(case[0]) == self.path or body.get("stream") is True
        path = STREAM_PATH.get(case[0], case[2]) if streamed else case[2]
        if self.path != path or not case[3](self.headers):
            return self._json({"error": {"message": f"wrong path or key: {self.path}"}}, 401)
        MockCompatible.seen.append(self.path)
        usage = {"prompt_tokens": 5, "completion_tokens": 2, "total_tokens": 7}
        gemini_usage = {"promptTokenCount": 5, "candidatesTokenCount": 2, "totalTokenCount": 7}
        if self.path.endswith("/embeddings"):
            return self._json({"object": "list", "model": model,
                               "data": [{"object": "embedding", "index": 0, "embedding": [0.1, 0.2]}],
                               "usage": {"prompt_tokens": 4, "total_tokens": 4}})
        if not streamed:
            if self.path.endswith(":generateContent"):
                return self._json({"candidates": [{"content": {"role": "model", "parts": [{"text": "Hello"}]},
                                                   "finishReason": "STOP", "index": 0}],
                                   "usageMetadata": gemini_usage})
            return self._json({"id": "c1", "object": "chat.completion", "created": 1, "model": model,
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": "Hello"},
                                            "finish_reason": "stop"}],
                               "usage": usage})
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        if case[0] in STREAM_PATH:
            for text, last in [("Hel", False), ("lo", True)]:
                candidate = {"content": {"role": "model", "parts": [{"text": text}]}, "index": 0}
                event = {"candidates": [{**candidate, "finishReason": "STOP"} if last else candidate],
                         "usageMetadata": gemini_usage if last else {"promptTokenCount": 5}}
                self._chunk(f"data: {json.dumps(event)}\r\n\r\n")
            return self._chunk("")
        for text, finish in [("Hel", None), ("lo", "stop")]:
            chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": model,
                     "choices": [{"index": 0, "delta": {"content": text}, "finish_reason": finish}]}
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        if (body.get("stream_options") or {}).get("include_usage"):
            chunk = {"id": "c2", "object": "chat.completion.chunk", "created": 1, "model": model,
                     "choices": [], "usage": usage}
            self._chunk(f"data: {json.dumps(chunk)}\n\n")
        self._chunk("data: [DONE]\n\n")
        self._chunk("")


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
                       "base_url": f"http://127.0.0.1:{upstream.server_port}{BASE_PATH.get(kind, '')}"}
            assert api.post("/api/channel/", json=channel).json()["success"], kind
        token = api.post("/api/token/", json={"name": "types", "remain_quota": 1_000_000}).json()["data"]
        key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
        try:
            yield base, api, key, token["id"]
        finally:
            upstream.shutdown()


def used_quota(api, token_id):
    return api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]


def billed(api, token_id, before, cost):
    """Waits until the key's used quota has grown by `cost` (settlement is asynchronous)."""
    for _ in range(100):
        if used_quota(api, token_id) - before == cost:
            break
        threading.Event().wait(0.05)
    assert used_quota(api, token_id) - before == cost


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
    billed(api, token_id, before, cost)


@pytest.mark.parametrize("case", CHATS, ids=[f"type-{c[0]}" for c in CHATS])
def test_each_chat_type_streams_through_the_sdk_and_is_billed(compatible, case):
    """Streamed without the client asking for usage: the bill is the upstream's usage, which it
    sends only when Tollgate asks for it."""
    base, api, key, token_id = compatible
    kind, model, path, _, _ = case
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = used_quota(api, token_id)
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Hi"}], stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert all(c.usage is None for c in chunks), "no usage chunk unless asked"
    assert MockCompatible.seen[-1] == STREAM_PATH.get(kind, path)
    billed(api, token_id, before, 5 + 2 * 2)
