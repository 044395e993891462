"""The official `openai` Python SDK against Tollgate, unchanged: sync, async, streaming, models,
and the SDK's exception classes for Tollgate's errors."""

import asyncio

import openai
import pytest


def client(gateway, key=None):
    base, good, _ = gateway
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key or good, max_retries=0)


def test_sync_chat_completion(gateway):
    answer = client(gateway).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert answer.usage.total_tokens == 7


def test_async_chat_completion(gateway):
    base, key, _ = gateway

    async def run():
        async with openai.AsyncOpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0) as c:
            return await c.chat.completions.create(
                model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])

    assert asyncio.run(run()).choices[0].message.content == "Hello"


def test_streaming(gateway):
    stream = client(gateway).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], stream=True)
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    assert all(c.usage is None for c in chunks), "no usage chunk unless asked"


def test_streaming_with_usage(gateway):
    stream = client(gateway).chat.completions.create(
        model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True})
    usage = [c.usage for c in stream if c.usage is not None]
    assert usage and usage[0].completion_tokens == 2


def test_models_list(gateway):
    ids = [m.id for m in client(gateway).models.list()]
    assert ids == ["claude-sonnet-4-20250514", "gemini-2.5-flash", "gemini-embedding-001",
                   "gpt-4o-mini", "hunyuan-lite", "text-embedding-3-small"]


def test_embeddings(gateway):
    answer = client(gateway).embeddings.create(model="text-embedding-3-small", input="hello")
    assert answer.data[0].embedding == [0.1, 0.2]
    assert answer.usage.prompt_tokens == 4


def test_bad_key_raises_authentication_error(gateway):
    with pytest.raises(openai.AuthenticationError):
        client(gateway, key="sk-not-a-key").models.list()


def test_insufficient_quota_raises_permission_denied(gateway):
    _, _, poor = gateway
    with pytest.raises(openai.PermissionDeniedError) as err:
        client(gateway, key=poor).chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": "Hi"}])
    assert "quota" in str(err.value)


def test_unpriced_model_raises_bad_request(gateway):
    with pytest.raises(openai.BadRequestError):
        client(gateway).chat.completions.create(
            model="no-such-model", messages=[{"role": "user", "content": "Hi"}])


def test_unimplemented_route_raises_api_status_error(gateway):
    with pytest.raises(openai.APIStatusError) as err:
        client(gateway).files.list()
    assert err.value.status_code == 501


def test_hunyuan_channel_whole_and_streamed(gateway):
    """Tencent Hunyuan (type 23): signed with TC3-HMAC-SHA256, converted both ways."""
    answer = client(gateway).chat.completions.create(
        model="hunyuan-lite", messages=[{"role": "user", "content": "Hi"}])
    assert answer.choices[0].message.content == "Hello"
    assert answer.usage.prompt_tokens == 5 and answer.usage.completion_tokens == 2
    stream = client(gateway).chat.completions.create(
        model="hunyuan-lite", messages=[{"role": "user", "content": "Hi"}], stream=True,
        stream_options={"include_usage": True})
    chunks = list(stream)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Hello"
    usage = [c.usage for c in chunks if c.usage is not None]
    assert usage and usage[0].completion_tokens == 2
