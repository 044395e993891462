"""The official `openai` SDK through Tollgate to the cloud and hub-converted channel types: Azure
OpenAI (3), AWS Bedrock (33), Cohere (34) and Vertex AI (41), one case per type, whole and
streamed. Each upstream is a mock speaking the provider's documented wire format and checking its
credential as the provider would (mock_azure, mock_bedrock, mock_cohere, mock_vertex); each case
checks what the SDK got, what the upstream was sent, and what the caller was billed (the key's
used quota)."""

import json
import threading
from http.server import ThreadingHTTPServer

import openai
import pytest

import mock_azure
import mock_bedrock
import mock_cohere
import mock_vertex
from conftest import signed_in_root

# model the client names → (channel type, what the channel is created with)
MODELS = {"gpt-4o": 3, "nova-lite": 33, "command-r": 34, "gemini-2.5-flash": 41}


def serve(handler):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    return upstream


@pytest.fixture(scope="module")
def clouds():
    """Yields (base_url, console client, key, key id) of a Tollgate with one channel per type."""
    upstreams = {3: serve(mock_azure.MockAzure), 33: serve(mock_bedrock.MockBedrock),
                 34: serve(mock_cohere.MockCohere), 41: serve(mock_vertex.MockVertex)}
    base_url = {t: f"http://127.0.0.1:{u.server_port}" for t, u in upstreams.items()}
    channels = [
        {"type": 3, "key": mock_azure.KEY, "models": "gpt-4o",
         "model_mapping": json.dumps({"gpt-4o": mock_azure.DEPLOYMENT})},
        {"type": 33, "key": f"{mock_bedrock.ACCESS_KEY}|{mock_bedrock.SECRET_KEY}|{mock_bedrock.REGION}",
         "models": "nova-lite", "model_mapping": json.dumps({"nova-lite": mock_bedrock.MODEL})},
        {"type": 34, "key": mock_cohere.KEY, "models": "command-r"},
        {"type": 41, "key": mock_vertex.service_account_key(f"{base_url[41]}/token"),
         "models": "gemini-2.5-flash", "other": mock_vertex.LOCATION},
    ]
    with signed_in_root("tollgate-sdk-clouds-") as (base, api, uid):
        api.headers["New-Api-User"] = uid
        for key, value in [("ModelRatio", {m: 1 for m in MODELS}),
                           ("CompletionRatio", {m: 2 for m in MODELS})]:
            assert api.put("/api/option/", json={"key": key, "value": json.dumps(value)}).json()["success"]
        for channel in channels:
            channel = {"name": f"type-{channel['type']}", "group": "default",
                       "base_url": base_url[channel["type"]], **channel}
            answer = api.post("/api/channel/", json=channel).json()
            assert answer["success"], answer
        token = api.post("/api/token/", json={"name": "clouds", "remain_quota": 1_000_000}).json()["data"]
        key = api.post(f"/api/token/{token['id']}/key").json()["data"]["key"]
        try:
            yield base, api, key, token["id"]
        finally:
            for upstream in upstreams.values():
                upstream.shutdown()


def used(api, token_id):
    return api.get(f"/api/token/{token_id}").json()["data"]["used_quota"]


def billed(api, token_id, before, cost):
    """Waits until the key's used quota has grown by `cost` (settlement is asynchronous)."""
    for _ in range(100):
        if used(api, token_id) - before == cost:
            break
        threading.Event().wait(0.05)
    assert used(api, token_id) - before == cost


def whole_and_streamed(clouds, model):
    """Asks `model` once whole and once streamed (without asking for usage): both answers are
    "Hello" and each is billed 5 prompt + 2 completion tokens (completion ratio 2)."""
    base, api, key, token_id = clouds
    client = openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0)
    before = used(api, token_id)
    answer = client.chat.completions.create(
        model=model, messages=[{"role": "system", "content": "be brief"}, {"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert (answer.usage.prompt_tokens, answer.usage.completion_tokens) == (5, 2)
    billed(api, token_id, before, 5 + 2 * 2)
    before = used(api, token_id)
    stream = client.chat.completions.create(
        model=model, messages=[{"role": "user", "content": "Hi"}], stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    billed(api, token_id, before, 5 + 2 * 2)


def test_azure_openai(clouds):
    """Azure OpenAI (3): the model mapped to its deployment, api-version and api-key checked."""
    whole_and_streamed(clouds, "gpt-4o")
    (path, whole), (_, streamed) = mock_azure.MockAzure.seen[-2:]
    assert path == f"/openai/deployments/{mock_azure.DEPLOYMENT}/chat/completions"
    assert whole["messages"][0] == {"role": "system", "content": "be brief"}
    assert streamed["stream"] is True and streamed["stream_options"] == {"include_usage": True}


def test_aws_bedrock_converse(clouds):
    """AWS Bedrock (33): a non-Claude model through Converse and ConverseStream, SigV4-signed, the
    stream in AWS's event-stream framing."""
    whole_and_streamed(clouds, "nova-lite")
    (path, whole), (stream_path, _) = mock_bedrock.MockBedrock.seen[-2:]
    assert (path, stream_path) == ("/model/amazon.nova-lite-v1%3A0/converse",
                                   "/model/amazon.nova-lite-v1%3A0/converse-stream")
    assert whole["system"] == [{"text": "be brief"}]
    assert whole["messages"] == [{"role": "user", "content": [{"text": "Hi"}]}]


def test_cohere_chat_v2(clouds):
    """Cohere (34): chat v2, whole and as its SSE events, billed from the billed units."""
    whole_and_streamed(clouds, "command-r")
    whole, streamed = mock_cohere.MockCohere.seen[-2:]
    assert whole["model"] == "command-r" and not whole.get("stream")
    assert whole["messages"][-1]["role"] == "user" and streamed["stream"] is True


def test_vertex_ai_gemini(clouds):
    """Vertex AI (41): the service-account key's JWT grant exchanged for an access token, then a
    Gemini model's generateContent and streamGenerateContent under the project and location."""
    whole_and_streamed(clouds, "gemini-2.5-flash")
    assert mock_vertex.MockVertex.grants, "no token exchange"
    (path, whole), (stream_path, _) = mock_vertex.MockVertex.seen[-2:]
    assert path.endswith(":generateContent") and stream_path.endswith(":streamGenerateContent?alt=sse")
    assert whole["contents"] == [{"role": "user", "parts": [{"text": "Hi"}]}]
    assert whole["systemInstruction"]["parts"] == [{"text": "be brief"}]
